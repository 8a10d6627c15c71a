/**
 * A memory bound for everything one sandbox runs, summed: a memory control group per sandboxed
 * process tree. RLIMIT_DATA bounds one process; a command that starts many processes (a fork bomb
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
 * `/sys/fs/cgroup`), {@link openMemoryCgroups} says why and the bound stays per process.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { rmdir } from "node:fs/promises";
import path from "node:path";

/** One sandbox's group. */
export interface MemoryCgroup {
  /** The group's limit in bytes. */
  readonly limitBytes: number;
  /** The file a process writes its pid to, to enter the group (its children follow). */
  readonly procsFile: string;
  /** How many processes of the group the kernel has killed for memory so far. */
  oomKills(): number;
  /** Removes the group once its processes are gone (retried while they die; never throws). */
  release(): void;
}

/** Where the server makes its sandboxes' groups. */
export interface MemoryCgroups {
  readonly version: 1 | 2;
  /** This server's directory of groups (one per sandbox below it). */
  readonly dir: string;
  /** A new group whose processes may use at most `limitBytes` of memory, together (swap included). */
  create(limitBytes: number): MemoryCgroup;
  /** Removes {@link dir} once every group below it is released (retried; never throws). */
  close(): void;
}

export interface MemoryCgroupOptions {
  /**
   * A cgroup v2 directory with the memory controller delegated, to make the groups below (instead
   * of finding one from `/proc/self/cgroup`).
   */
  cgroupDir?: string;
  /** `/proc/self/cgroup` and `/proc/self/mountinfo` (tests give their own). */
  procSelf?: string;
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;
/** The server's groups directory is named after its pid, so that a restart can remove what an earlier process left. */
const PREFIX = "acs-sandbox-";
let sequence = 0;

/** Groups where this server can make them, or why it cannot. */
export function openMemoryCgroups(options: MemoryCgroupOptions = {}): { cgroups: MemoryCgroups; problem?: undefined } | { cgroups?: undefined; problem: string } {
  const procSelf = options.procSelf ?? "/proc/self";
  let parent: { version: 1 | 2; dir: string } | string;
  try {
    parent = options.cgroupDir ? { version: 2, dir: path.resolve(options.cgroupDir) } : findMemoryGroup(procSelf);
  } catch (error) {
    parent = `reading ${procSelf}/cgroup failed: ${(error as Error).message}`;
  }
  if (typeof parent === "string") return { problem: parent };
  const { version } = parent;
  try {
    if (version === 2) enableMemory(parent.dir);
    removeStale(parent.dir);
    const dir = path.join(parent.dir, `${PREFIX}${process.pid}`);
    mkdirSync(dir, { recursive: true });
    if (version === 2) enableMemory(dir);
    return { cgroups: groupsIn(version, dir) };
  } catch (error) {
    return { problem: `cannot make memory groups below ${parent.dir} (cgroup v${version}): ${(error as Error).message}` };
  }
}

/** The server's memory group from `/proc/self/cgroup` and the mount it lives on. */
function findMemoryGroup(procSelf: string): { version: 1 | 2; dir: string } | string {
  const lines = readFileSync(path.join(procSelf, "cgroup"), "utf8").split("\n").filter(Boolean);
  const mounts = readFileSync(path.join(procSelf, "mountinfo"), "utf8").split("\n").filter(Boolean).map(parseMount);
  const v1 = lines.map((line) => line.split(":")).find(([, controllers]) => controllers?.split(",").includes("memory"));
  if (v1) {
    const mount = mounts.find((entry) => entry?.type === "cgroup" && entry.superOptions.includes("memory"));
    if (!mount) return "the memory cgroup (v1) is not mounted";
    return { version: 1, dir: below(mount, v1.slice(2).join(":")) };
  }
  const unified = lines.find((line) => line.startsWith("0::"));
  const mount = mounts.find((entry) => entry?.type === "cgroup2");
  if (!unified || !mount) return "no memory cgroup (neither a v1 memory hierarchy nor cgroup v2 is mounted)";
  const dir = below(mount, unified.slice(3));
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

function enableMemory(dir: string): void {
  if (readList(path.join(dir, "cgroup.subtree_control")).includes("memory")) return;
  try {
    writeFileSync(path.join(dir, "cgroup.subtree_control"), "+memory");
  } catch (error) {
    const why = codeOf(error) === "EBUSY" ? "it holds processes itself, so it cannot delegate the memory controller" : (error as Error).message;
    throw new Error(`enabling the memory controller in ${dir} failed: ${why}`);
  }
}

/** Removes the groups of servers that are gone (an empty group is removable; a busy one stays). */
function removeStale(parentDir: string): void {
  for (const name of readdirSync(parentDir)) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length));
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

function groupsIn(version: 1 | 2, dir: string): MemoryCgroups {
  return {
    version,
    dir,
    create(limitBytes) {
      const group = path.join(dir, `s${++sequence}`);
      mkdirSync(group, { recursive: true }); // the directory too, if a closed runtime of this process removed it
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
        procsFile: path.join(group, "cgroup.procs"),
        oomKills: () => oomKillsOf(group, version),
        release() {
          if (released) return;
          released = true;
          removeSoon(group);
        },
      };
    },
    close: () => removeSoon(dir),
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
