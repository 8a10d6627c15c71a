/**
 * Where the agent's commands run. A sandbox turns a command line into one that runs confined to the
 * conversation's workspace; the terminal and stdio MCP servers start their processes through it.
 *
 * - {@link bubblewrapSandbox} (Linux, Debian's `bubblewrap`): the default where it works.
 * - {@link hostExecution}: commands run as the server's user, on the host; only with the operator's
 *   explicit `allowHostExecution: true`.
 * - Production: run the whole server in a container (one per tenant), with bubblewrap inside it as
 *   the per-conversation fence (README, "Safe by default").
 */
import { spawn } from "node:child_process";
import { chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { SandboxCgroup, SandboxCgroups } from "./cgroups.js";

/** A command line ready for `child_process.spawn`. */
export interface SandboxedCommand {
  command: string;
  args: string[];
  /** The complete environment of the process (nothing is inherited from the server). */
  env: Record<string, string>;
  /** Working directory of the spawned process on the host. */
  cwd: string;
  /**
   * The groups the process enters before it runs anything (its whole tree shares
   * {@link SandboxLimits.memoryBytes} and one CPU weight). Whoever spawns the command calls
   * `release()` once it exited.
   */
  cgroup?: SandboxCgroup;
}

export interface SandboxRequest {
  /** The program and its arguments, as they run inside. */
  argv: string[];
  /** The conversation's workspace (absolute): the only place the command may write. */
  workspaceDir: string;
  /**
   * Where the command starts: `workspaceDir` (default) or a folder below it, absolute. Inside the
   * sandbox it is reached through the sandbox's own view, so a link in it cannot lead out.
   */
  cwd?: string;
  /**
   * A directory on disk shown as the command's `/tmp` (created when missing). Without one, `/tmp`
   * is a tmpfs of at most {@link SandboxLimits.tmpBytes} (memory).
   */
  tmpDir?: string;
  /** Environment variables of the command (secrets included); nothing else is inherited. */
  env: Record<string, string>;
}

export interface Sandbox {
  /** `bubblewrap` or `host`. */
  readonly name: string;
  /**
   * The host user that sandboxed commands run as, when it is not the server's own (a server
   * running as root): files the server writes for the agent (uploads, the file editor's new files)
   * are given to it, so that commands can change them.
   */
  readonly owner?: { uid: number; gid: number };
  /**
   * What holds {@link SandboxLimits.memoryBytes} for everything one sandbox runs, summed: the kernel
   * (a memory cgroup per sandbox), or, where no cgroup could be made, each process's RLIMIT_DATA and
   * the terminal's watch of its shell's processes together (`watchProcessMemory`, a few times a
   * second).
   */
  readonly memoryBound?: "sandbox" | "process";
  /** The limits it sets (none for host execution). */
  readonly limits?: Readonly<SandboxLimits>;
  /** The command line that runs `request.argv` in this sandbox. */
  wrap(request: SandboxRequest): SandboxedCommand;
}

/**
 * What one conversation's commands may use. Each is a kernel resource limit set inside the sandbox,
 * so a command that reaches one gets the usual error (`fork: Resource temporarily unavailable`,
 * `File size limit exceeded`, `CPU time limit exceeded`, a failed allocation), which the model
 * reads in the observation; the server is not affected.
 */
export interface SandboxLimits {
  /**
   * Processes and threads at once (RLIMIT_NPROC). Counted in the sandbox's own user namespace,
   * so the bound is per conversation. Default 512.
   */
  processes: number;
  /**
   * Memory in bytes of everything one sandbox runs, together (a memory cgroup, where the server
   * can make one: {@link BubblewrapOptions.cgroups}; a watch of the shell's processes otherwise),
   * and of each process alone (RLIMIT_DATA: heap and private mappings). Default 4 GiB.
   */
  memoryBytes: number;
  /** Largest file a command may write, in bytes (RLIMIT_FSIZE). Default 1 GiB. */
  fileBytes: number;
  /** CPU seconds of one process (RLIMIT_CPU): a busy loop is stopped, a long build is not. Default 3,600. */
  cpuSeconds: number;
  /**
   * Size of `/tmp` in bytes. A tmpfs of this size when there is no {@link SandboxRequest.tmpDir};
   * on disk, the terminal measures it while the shell lives and stops the shell when it grows past
   * this (`watchDirectoryQuota`). Default 4 GiB.
   */
  tmpBytes: number;
  /**
   * Size of `/dev/shm` in bytes, a tmpfs (memory: POSIX shared memory, a browser's or a process
   * pool's). The rest of `/dev` is read-only. Default 64 MiB (Docker's `--shm-size`).
   */
  shmBytes: number;
}

const GIB = 1024 ** 3;
/** Limits a real coding task never meets and a hostile one always does. */
export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  processes: 512,
  memoryBytes: 4 * GIB,
  fileBytes: GIB,
  cpuSeconds: 3_600,
  tmpBytes: 4 * GIB,
  shmBytes: 64 * 1024 * 1024,
});

export interface BubblewrapOptions {
  /** The bwrap binary (default: `bwrap` on the PATH). */
  bwrapPath?: string;
  /** Give commands the host's network (default false: a private network namespace, loopback only). */
  allowNetwork?: boolean;
  /** More host paths visible read-only inside, at the same path (a tool chain, a package cache). */
  readOnlyPaths?: string[];
  /** Resource limits per conversation (each defaults to {@link DEFAULT_SANDBOX_LIMITS}). */
  limits?: Partial<SandboxLimits>;
  /**
   * The unprivileged host user commands run as when the server runs as root (default 65534:65534,
   * `nobody`). Ignored for a server that is not root: commands then run as its user.
   */
  runAs?: { uid: number; gid: number };
  /** The server's uid (default `process.getuid()`): root makes commands drop to {@link runAs}. */
  serverUid?: number;
  /**
   * Where each sandbox gets a memory group bounding its processes together, and a CPU group
   * (`openSandboxCgroups()` finds them). Without it, {@link SandboxLimits.memoryBytes} bounds each
   * process alone.
   */
  cgroups?: SandboxCgroups;
}

/** System directories visible read-only inside (symbolic links such as merged-/usr `/bin` are kept as links). */
const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];
/** Hidden inside /etc: password hashes. */
const MASKED_FILES = ["/etc/shadow", "/etc/gshadow"];
/** PATH inside the sandbox and on the host. */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Where util-linux puts prlimit and setpriv (Debian's `util-linux`, essential). */
const PRLIMIT = "/usr/bin/prlimit";
const SETPRIV = "/usr/bin/setpriv";
const NOBODY = { uid: 65534, gid: 65534 };

/** Checks the limits: positive integers. @throws TypeError naming the limit */
export function sandboxLimits(given: Partial<SandboxLimits> = {}): SandboxLimits {
  const limits = { ...DEFAULT_SANDBOX_LIMITS, ...given };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`sandbox limit ${key} must be a positive integer, got ${String(value)}`);
  }
  return limits;
}

/**
 * A bubblewrap sandbox whose confinement does not depend on who runs the server:
 *
 * - Always a new user namespace (`--unshare-user`), every capability dropped (`--cap-drop ALL`,
 *   bounding set included), no new privileges (setuid programs do not elevate), and no further
 *   user namespaces inside (`--disable-userns`). Mounts made from a user namespace are locked: the
 *   read-only system cannot be remounted writable, and a masked file cannot be unmounted.
 * - A server running as root first drops to an unprivileged host user ({@link BubblewrapOptions.runAs},
 *   through util-linux `setpriv`): a root-owned file is then not the command's, inside or out.
 *   The workspace and `/tmp` directories are given to that user, and bwrap (running as it) must be
 *   able to reach them: each folder above them must be searchable by it (mode `o+x` is enough: the
 *   server's data directory can stay unlistable, its files 0600). {@link SandboxUnreachableError} says which is not.
 * - A new PID namespace whose init is bwrap's: when the conversation's shell exits or is killed,
 *   or the server dies (`--die-with-parent`), every process in it is killed by the kernel.
 * - New mount, IPC, UTS and network namespaces (`--share-net` only with `allowNetwork`),
 *   `--new-session` (no terminal injection into the server's terminal).
 * - A read-only root holding a read-only view of the system directories, private `/dev` and
 *   `/proc`, `/tmp` on disk ({@link SandboxRequest.tmpDir}) or a bounded tmpfs, and the workspace
 *   read-write at its own path.
 * - {@link SandboxLimits} set by util-linux `prlimit` inside, on the command and its children.
 *
 * Why not `--ro-bind / /`: the host's root holds what the agent must never read, even read-only:
 * the server's data directory (its secret key and database), other conversations' workspaces, home
 * directories, and unix sockets under `/run` (a database or Docker socket ignores network
 * namespaces). Only the system directories are shown, plus `readOnlyPaths`.
 */
export function bubblewrapSandbox(options: BubblewrapOptions = {}): Sandbox {
  const bwrap = options.bwrapPath ?? "bwrap";
  const limits = sandboxLimits(options.limits);
  const dropRoot = (options.serverUid ?? process.getuid?.() ?? -1) === 0;
  const owner = dropRoot ? (options.runAs ?? NOBODY) : undefined;
  if (owner && (owner.uid === 0 || owner.gid === 0)) throw new TypeError("the sandbox's user must not be root (runAs)");
  const fixed: string[] = [];
  for (const dir of SYSTEM_PATHS) fixed.push(...mountOf(dir));
  for (const file of MASKED_FILES) if (existsSync(file)) fixed.push("--ro-bind", "/dev/null", file);
  // /dev is a tmpfs owned by the sandbox's user: read-only but for a bounded /dev/shm, so that
  // nothing writes the host's memory past the limits.
  fixed.push("--dev", "/dev", "--size", String(limits.shmBytes), "--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--proc", "/proc", "--dir", "/var/tmp");
  const readOnly = (options.readOnlyPaths ?? []).flatMap((dir) => ["--ro-bind", path.resolve(dir), path.resolve(dir)]);
  const namespaces = ["--unshare-all", "--unshare-user", ...(options.allowNetwork ? ["--share-net"] : []), "--disable-userns", "--cap-drop", "ALL"];
  const limit = [
    PRLIMIT,
    `--nproc=${limits.processes}`,
    `--data=${limits.memoryBytes}`,
    `--fsize=${limits.fileBytes}`,
    // SIGXCPU (the shell says "CPU time limit exceeded") at the limit, SIGKILL a second later.
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    "--core=0",
    "--",
  ];
  const cgroups = options.cgroups;
  return {
    name: "bubblewrap",
    owner,
    memoryBound: cgroups ? "sandbox" : "process",
    limits,
    wrap({ argv, workspaceDir, cwd = workspaceDir, tmpDir, env }) {
      const args = [...fixed];
      if (tmpDir) {
        mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
        args.push("--bind", tmpDir, "/tmp");
      } else {
        args.push("--size", String(limits.tmpBytes), "--tmpfs", "/tmp");
      }
      // After /tmp, so that a path under the host's /tmp (a checkout, a workspace) shows through.
      args.push(...readOnly, "--bind", workspaceDir, workspaceDir, "--chdir", cwd);
      // The sandbox's own root (where the mount points live) is read-only too.
      args.push("--remount-ro", "/", ...namespaces, "--die-with-parent", "--new-session", "--", ...limit, ...argv);
      let line = [bwrap, ...args];
      if (owner) {
        for (const dir of [workspaceDir, tmpDir]) {
          if (!dir) continue;
          assertReachable(dir, owner);
          chownSync(dir, owner.uid, owner.gid);
        }
        line = [SETPRIV, `--reuid=${owner.uid}`, `--regid=${owner.gid}`, "--clear-groups", "--inh-caps=-all", "--", ...line];
      }
      if (!cgroups) return { command: line[0]!, args: line.slice(1), env: { ...env }, cwd: workspaceDir };
      // The shell enters the groups, then becomes the sandbox (same pid): nothing runs outside them.
      const cgroup = cgroups.create(limits.memoryBytes);
      return { command: "/bin/sh", args: ["-c", enterGroups(cgroup.procsFiles.length), ...cgroup.procsFiles, ...line], env: { ...env }, cwd: workspaceDir, cgroup };
    },
  };
}

/** A `sh -c` script that writes its pid to its first `count` arguments (`$0`, `$1`, …), then runs the rest. */
function enterGroups(count: number): string {
  const writes = Array.from({ length: count }, (_, k) => `echo $$ > "$${k}"`);
  return [...writes, ...(count > 1 ? [`shift ${count - 1}`] : []), 'exec "$@"'].join(" && ");
}

/** A directory the sandbox's user cannot reach: a folder above it is not searchable by that user. */
export class SandboxUnreachableError extends Error {
  override readonly name = "SandboxUnreachableError";
  constructor(
    readonly dir: string,
    readonly blocking: string,
    owner: { uid: number; gid: number },
  ) {
    super(
      `the sandbox's user (uid ${owner.uid}) cannot reach ${dir}: ${blocking} is not searchable by it ` +
        `(give it o+x, e.g. chmod o+x ${blocking}, or move the data directory)`,
    );
  }
}

/** Throws {@link SandboxUnreachableError} when a folder above `dir` is not searchable by `owner`. */
function assertReachable(dir: string, owner: { uid: number; gid: number }): void {
  for (let folder = path.dirname(path.resolve(dir)); ; folder = path.dirname(folder)) {
    const { mode, uid, gid } = statSync(folder);
    const searchable = uid === owner.uid ? mode & 0o100 : gid === owner.gid ? mode & 0o010 : mode & 0o001;
    if (!searchable) throw new SandboxUnreachableError(dir, folder, owner);
    if (folder === path.dirname(folder)) return;
  }
}

/** Bind a system directory read-only, or recreate it as the symbolic link it is. */
function mountOf(dir: string): string[] {
  try {
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink()) return ["--symlink", readlinkSync(dir), dir];
    if (stat.isDirectory()) return ["--ro-bind", dir, dir];
  } catch {
    // absent on this system
  }
  return [];
}

/**
 * Commands run on the host as the server's user, in the workspace directory, with only the given
 * environment. Nothing confines them: only for an operator who said so (`allowHostExecution`).
 */
export function hostExecution(): Sandbox {
  return {
    name: "host",
    wrap({ argv, workspaceDir, cwd = workspaceDir, env }) {
      const [command, ...args] = argv;
      return { command: command!, args, env: { ...env }, cwd };
    },
  };
}

/** The capability sets of a process, from `/proc/<pid>/status`: all must be empty inside. */
const CAPABILITY_LINES = ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"];

/**
 * Starts a sandboxed process in a throwaway workspace and checks its confinement: it ran, it holds
 * no capability (not even in its bounding set) and cannot gain any (`NoNewPrivs`). Resolves with
 * what is wrong, or undefined when the sandbox holds.
 */
export async function confinementProblem(sandbox: Sandbox): Promise<string | undefined> {
  const workspaceDir = mkdtempSync(path.join(tmpdir(), "acs-sandbox-probe-"));
  let wrapped: SandboxedCommand | undefined;
  try {
    wrapped = sandbox.wrap({ argv: ["cat", "/proc/self/status"], workspaceDir, env: { PATH: SANDBOX_PATH } });
    const { command, args, env, cwd } = wrapped;
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(command, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
      child.on("error", (error) => resolve({ code: null, stdout: out, stderr: error.message }));
      child.on("close", (exit) => resolve({ code: exit, stdout: out, stderr: err }));
    });
    if (code !== 0) return `the sandbox did not start (exit ${String(code)}): ${stderr.trim().slice(0, 300) || "no message"}`;
    const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, "m").exec(stdout)?.[1];
    const held = CAPABILITY_LINES.filter((name) => !/^0+$/.test(field(name) ?? "x"));
    if (held.length) return `commands inside would keep capabilities (${held.map((name) => `${name} ${field(name) ?? "?"}`).join(", ")})`;
    if (field("NoNewPrivs") !== "1") return "commands inside could gain privileges (no_new_privs is not set)";
    return undefined;
  } catch (error) {
    return `the sandbox could not be set up: ${(error as Error).message}`;
  } finally {
    wrapped?.cgroup?.release();
    rmSync(workspaceDir, { recursive: true, force: true });
  }
}

/**
 * Bubblewrap when it confines commands here ({@link confinementProblem}), else what is wrong.
 * User namespaces must be allowed to unprivileged users (or bwrap be setuid).
 */
export async function probeBubblewrap(options: BubblewrapOptions = {}): Promise<{ sandbox: Sandbox; problem?: undefined } | { sandbox?: undefined; problem: string }> {
  let sandbox: Sandbox;
  try {
    sandbox = bubblewrapSandbox(options);
  } catch (error) {
    return { problem: (error as Error).message };
  }
  const problem = await confinementProblem(sandbox);
  return problem ? { problem } : { sandbox };
}

/** Bubblewrap when it confines commands here, else undefined ({@link probeBubblewrap} says why). */
export async function detectBubblewrap(options: BubblewrapOptions = {}): Promise<Sandbox | undefined> {
  return (await probeBubblewrap(options)).sandbox;
}

/** Why commands cannot run: no sandbox, and the operator did not allow host execution. */
export const NO_SANDBOX_MESSAGE =
  "The terminal is disabled: no sandbox is available on this server (bubblewrap was not found, or cannot confine commands here: see the server's log) " +
  "and the operator has not allowed commands to run on the host. Install bubblewrap (`apt-get install bubblewrap`), " +
  "or start the server with host execution allowed (`allowHostExecution: true`) if commands may run unconfined.";
