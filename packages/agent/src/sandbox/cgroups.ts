/**
 * Control groups for the sandboxes: a memory bound for everything one sandbox runs, summed, and a
 * low CPU weight for all of them together against the server.
 *
 * Memory: a memory control group per sandboxed process tree. RLIMIT_DATA bounds one process; a command that starts many processes (a fork bomb
 * under the process limit, a parallel build) is bounded only here. When the group reaches its
 * limit, the kernel reclaims its page cache and then kills the group's largest process (the command
 * sees `Killed`, exit 137); the server and other conversations are not touched.
 *
 * Both cgroup versions:
 * - v1 (a `memory` hierarchy): groups are made below the server's own memory group.
 * - v2 (the unified hierarchy): groups are made below a directory whose `cgroup.subtree_control`
 *   has, or can be given, `+memory`. The server's own group usually cannot (a non-root group with
 *   processes in it cannot delegate controllers), so an operator names one that can
 *   (`cgroupDir`: a systemd unit with `Delegate=yes`, a container's cgroup namespace root with
 *   the server in a child group).
 *
 * Where neither is writable (an unprivileged server without delegation, a read-only
 * `/sys/fs/cgroup`), {@link openSandboxCgroups} says why and the bound stays per process.
 *
 * CPU: the sandboxes of one server share a CPU group of weight {@link SANDBOX_CPU_WEIGHT} (that of a
 * nice-10 process), each sandbox a group of equal weight below it. Under contention the server's
 * event loop comes first and conversations share the rest evenly; an idle server leaves every core
 * to the commands. A nice value alone does not hold: where the kernel groups processes by session
 * (autogroup, the default of desktop and many server kernels), a sandboxed `setsid` starts a
 * scheduling group that weighs as much as the whole server. Below a CPU cgroup autogroup does not
 * apply. On cgroup v1 the groups live in the `cpu` hierarchy beside the memory one; on v2 in the
 * same groups (`+cpu` delegated with `+memory`, where the parent has it).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { rmdir } from "node:fs/promises";
import path from "node:path";

/** One sandbox's groups. */
export interface SandboxCgroup {
  /** The memory group's limit in bytes. */
  readonly limitBytes: number;
  /**
   * The files a process writes its pid to, to enter the groups (its children follow): the memory
   * group's first, then the CPU group's where it lives in another hierarchy (cgroup v1).
   */
  readonly procsFiles: readonly string[];
  /** How many processes of the group the kernel has killed for memory so far. */
  oomKills(): number;
  /** Removes the group once its processes are gone (retried while they die; never throws). */
  release(): void;
}

/** Where the server makes its sandboxes' groups. */
export interface SandboxCgroups {
  readonly version: 1 | 2;
  /** This server's directory of memory groups (one per sandbox below it). */
  readonly dir: string;
  /**
   * This server's CPU group (its weight against the server; one group per sandbox below it), or
   * why there is none: then each sandboxed process runs at nice 10 only.
   */
  readonly cpu: { dir: string; weight: number; problem?: undefined } | { problem: string };
  /** New groups whose processes may use at most `limitBytes` of memory, together (swap included). */
  create(limitBytes: number): SandboxCgroup;
  /** Removes this server's directories once every group below is released (retried; never throws). */
  close(): void;
}

/**
 * The CPU weight of all sandboxes together, in cgroup v1's `cpu.shares` (a nice-0 process weighs
 * 1024): that of a nice-10 process. cgroup v2's `cpu.weight` is the same ratio on its scale of 100.
 */
export const SANDBOX_CPU_WEIGHT = 110;

export interface SandboxCgroupOptions {
  /**
   * A cgroup v2 directory with the memory controller delegated, to make the groups below (instead
   * of finding one from `/proc/self/cgroup`).
   */
  cgroupDir?: string;
  /** `/proc/self/cgroup` and `/proc/self/mountinfo` (tests give their own). */
  procSelf?: string;
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;
/**
 * A server's directory is named after its pid, so that a restart can remove what an earlier process
 * left, and numbered, so that a runtime opened again in the same process never meets the removal of
 * the one before (still retried while its processes die).
 */
const PREFIX = "acs-sandbox-";
let opened = 0;
let sequence = 0;

/** Groups where this server can make them, or why it cannot. */
export function openSandboxCgroups(options: SandboxCgroupOptions = {}): { cgroups: SandboxCgroups; problem?: undefined } | { cgroups?: undefined; problem: string } {
  const procSelf = options.procSelf ?? "/proc/self";
  let parent: { version: 1 | 2; dir: string } | string;
  let tables: CgroupTables | undefined;
  try {
    if (options.cgroupDir) parent = { version: 2, dir: path.resolve(options.cgroupDir) };
    else parent = findMemoryGroup((tables = readTables(procSelf)));
  } catch (error) {
    parent = `reading ${procSelf}/cgroup failed: ${(error as Error).message}`;
  }
  if (typeof parent === "string") return { problem: parent };
  const { version } = parent;
  const name = `${PREFIX}${process.pid}-${++opened}`;
  const dir = path.join(parent.dir, name);
  let cpu: SandboxCgroups["cpu"];
  try {
    const withCpu = version === 2 && enableControllers(parent.dir);
    removeStale(parent.dir);
    if (version === 2) {
      // The groups below this directory get cpu where it has it (delegated by the parent just now).
      const cpuBelow = makeV2Dir(dir, withCpu);
      cpu = !withCpu ? { problem: `the cpu controller is not available in ${parent.dir} (cgroup v2)` } : cpuBelow ? { dir, weight: V2_CPU_WEIGHT } : { problem: `the cpu controller could not be enabled in ${dir}` };
    } else {
      mkdirSync(dir, { recursive: true });
      cpu = openCpuGroupV1(tables!, name);
    }
  } catch (error) {
    return { problem: `cannot make memory groups below ${parent.dir} (cgroup v${version}): ${(error as Error).message}` };
  }
  return { cgroups: groupsIn(version, dir, cpu) };
}

/** {@link SANDBOX_CPU_WEIGHT} on cgroup v2's scale (`cpu.weight`, 100 for a nice-0 process). */
const V2_CPU_WEIGHT = Math.round((SANDBOX_CPU_WEIGHT * 100) / 1024);

/** Makes a v2 directory for the groups of one server; true when they get the cpu controller. */
function makeV2Dir(dir: string, withCpu: boolean): boolean {
  mkdirSync(dir, { recursive: true });
  const cpuBelow = enableControllers(dir, withCpu);
  if (withCpu) writeFileSync(path.join(dir, "cpu.weight"), String(V2_CPU_WEIGHT));
  return cpuBelow;
}

/** Makes a v1 CPU directory for the groups of one server, of weight {@link SANDBOX_CPU_WEIGHT}. */
function makeV1CpuDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "cpu.shares"), String(SANDBOX_CPU_WEIGHT));
}

/** This server's CPU group in the v1 `cpu` hierarchy, or why it cannot have one. */
function openCpuGroupV1(tables: CgroupTables, name: string): SandboxCgroups["cpu"] {
  const found = v1GroupOf(tables, "cpu") ?? { problem: "the cpu cgroup (v1) is not there" };
  if (found.problem !== undefined) return { problem: found.problem };
  const parentDir = found.dir;
  try {
    removeStale(parentDir);
    const dir = path.join(parentDir, name);
    makeV1CpuDir(dir);
    return { dir, weight: SANDBOX_CPU_WEIGHT };
  } catch (error) {
    return { problem: `cannot make CPU groups below ${parentDir} (cgroup v1): ${(error as Error).message}` };
  }
}

interface CgroupTables {
  /** `/proc/self/cgroup`, each line split at `:` (hierarchy id, controllers, path). */
  memberships: string[][];
  mounts: Array<ReturnType<typeof parseMount>>;
}

function readTables(procSelf: string): CgroupTables {
  const lines = readFileSync(path.join(procSelf, "cgroup"), "utf8").split("\n").filter(Boolean);
  const mounts = readFileSync(path.join(procSelf, "mountinfo"), "utf8").split("\n").filter(Boolean).map(parseMount);
  return { memberships: lines.map((line) => line.split(":")), mounts };
}

/** The server's group in the v1 hierarchy of `controller`: its directory, why it has none, or undefined without that hierarchy. */
function v1GroupOf(tables: CgroupTables, controller: string): { dir: string; problem?: undefined } | { problem: string } | undefined {
  const membership = tables.memberships.find(([, controllers]) => controllers?.split(",").includes(controller));
  if (!membership) return undefined;
  const mount = tables.mounts.find((entry) => entry?.type === "cgroup" && entry.superOptions.includes(controller));
  if (!mount) return { problem: `the ${controller} cgroup (v1) is not mounted` };
  return { dir: below(mount, membership.slice(2).join(":")) };
}

/** The server's memory group from `/proc/self/cgroup` and the mount it lives on. */
function findMemoryGroup(tables: CgroupTables): { version: 1 | 2; dir: string } | string {
  const v1 = v1GroupOf(tables, "memory");
  if (v1) return v1.problem ?? { version: 1, dir: v1.dir };
  const unified = tables.memberships.find(([id, controllers]) => id === "0" && controllers === "");
  const mount = tables.mounts.find((entry) => entry?.type === "cgroup2");
  if (!unified || !mount) return "no memory cgroup (neither a v1 memory hierarchy nor cgroup v2 is mounted)";
  const dir = below(mount, unified.slice(2).join(":"));
  if (!readList(path.join(dir, "cgroup.controllers")).includes("memory")) return `the memory controller is not available in ${dir} (cgroup v2)`;
  return { version: 2, dir };
}

function parseMount(line: string): { root: string; point: string; type: string; superOptions: string[] } | undefined {
  const fields = line.split(" ");
  const dash = fields.indexOf("-");
  if (dash < 0) return undefined;
  const unescape = (value: string) => value.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
  return { root: unescape(fields[3]!), point: unescape(fields[4]!), type: fields[dash + 1]!, superOptions: (fields[dash + 3] ?? "").split(",") };
}

/** The directory of cgroup `group` on a mount whose root is `mount.root`. */
function below(mount: { root: string; point: string }, group: string): string {
  const relative = path.posix.relative(mount.root, group);
  return path.join(mount.point, relative.startsWith("..") ? "" : relative);
}

function readList(file: string): string[] {
  try {
    return readFileSync(file, "utf8").trim().split(/\s+/);
  } catch {
    return [];
  }
}

/**
 * Delegates the memory controller (required) and the cpu controller (where `dir` has it) to the
 * groups below `dir`. True when cpu is delegated too.
 */
function enableControllers(dir: string, cpuHere = readList(path.join(dir, "cgroup.controllers")).includes("cpu")): boolean {
  const enabled = readList(path.join(dir, "cgroup.subtree_control"));
  if (enabled.includes("memory") && (enabled.includes("cpu") || !cpuHere)) return enabled.includes("cpu");
  const file = path.join(dir, "cgroup.subtree_control");
  if (cpuHere) {
    try {
      writeFileSync(file, "+memory +cpu");
      return true;
    } catch {
      // memory alone below
    }
  }
  try {
    if (!enabled.includes("memory")) writeFileSync(file, "+memory");
    return false;
  } catch (error) {
    const why = codeOf(error) === "EBUSY" ? "it holds processes itself, so it cannot delegate the memory controller" : (error as Error).message;
    throw new Error(`enabling the memory controller in ${dir} failed: ${why}`);
  }
}

/** Removes the groups of servers that are gone (an empty group is removable; a busy one stays). */
function removeStale(parentDir: string): void {
  for (const name of readdirSync(parentDir)) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number.parseInt(name.slice(PREFIX.length), 10);
    if (pid === process.pid || (Number.isSafeInteger(pid) && existsSync(`/proc/${pid}`))) continue;
    const dir = path.join(parentDir, name);
    for (const child of readdirSync(dir, { withFileTypes: true })) if (child.isDirectory()) tryRemove(path.join(dir, child.name));
    tryRemove(dir);
  }
}

/**
 * Tries `rmdir` now and every 100 ms while the group's processes die, at most 5 s. Off the event
 * loop: the kernel takes milliseconds to take a memory group down.
 */
function removeSoon(dir: string): void {
  let tries = 0;
  const attempt = () => {
    rmdir(dir).then(
      () => {},
      (error: unknown) => {
        if (codeOf(error) !== "ENOENT" && ++tries < RELEASE_TRIES) setTimeout(attempt, 100).unref();
      },
    );
  };
  attempt();
}

/** Removes an empty group now; a busy or missing one stays as it is (it is tried again later, or gone). */
function tryRemove(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // busy (processes still dying) or already gone
  }
}

/** Times a removal is tried, 100 ms apart, while the processes of a group die. */
const RELEASE_TRIES = 50;

function groupsIn(version: 1 | 2, dir: string, cpu: SandboxCgroups["cpu"]): SandboxCgroups {
  return {
    version,
    dir,
    cpu,
    create(limitBytes) {
      const name = `s${++sequence}`;
      const group = path.join(dir, name);
      // v1: the sandbox's CPU group, of the default weight (conversations share the server's group evenly).
      const cpuGroup = version === 1 && cpu.problem === undefined ? path.join(cpu.dir, name) : undefined;
      // The server's directories again, with their settings, if a close of this runtime removed them.
      if (!existsSync(dir)) {
        if (version === 2) makeV2Dir(dir, cpu.problem === undefined);
        else mkdirSync(dir, { recursive: true });
      }
      if (cpuGroup && !existsSync(path.dirname(cpuGroup))) makeV1CpuDir(path.dirname(cpuGroup));
      mkdirSync(group);
      if (cpuGroup) mkdirSync(cpuGroup);
      const write = (file: string, value: string) => writeFileSync(path.join(group, file), value);
      if (version === 1) {
        write("memory.limit_in_bytes", String(limitBytes));
        // Swap counts too where the kernel accounts it (memsw may be absent).
        if (existsSync(path.join(group, "memory.memsw.limit_in_bytes"))) write("memory.memsw.limit_in_bytes", String(limitBytes));
      } else {
        write("memory.max", String(limitBytes));
        if (existsSync(path.join(group, "memory.swap.max"))) write("memory.swap.max", "0");
      }
      let released = false;
      return {
        limitBytes,
        procsFiles: [path.join(group, "cgroup.procs"), ...(cpuGroup ? [path.join(cpuGroup, "cgroup.procs")] : [])],
        oomKills: () => oomKillsOf(group, version),
        release() {
          if (released) return;
          released = true;
          removeSoon(group);
          if (cpuGroup) removeSoon(cpuGroup);
        },
      };
    },
    close() {
      removeSoon(dir);
      if (version === 1 && cpu.problem === undefined) removeSoon(cpu.dir);
    },
  };
}

/** `oom_kill` of `memory.events` (v2) or `memory.oom_control` (v1). */
function oomKillsOf(group: string, version: 1 | 2): number {
  try {
    const text = readFileSync(path.join(group, version === 2 ? "memory.events" : "memory.oom_control"), "utf8");
    return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
  } catch {
    return 0;
  }
}
