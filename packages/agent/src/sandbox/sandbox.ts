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
import { existsSync, lstatSync, mkdtempSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A command line ready for `child_process.spawn`. */
export interface SandboxedCommand {
  command: string;
  args: string[];
  /** The complete environment of the process (nothing is inherited from the server). */
  env: Record<string, string>;
  /** Working directory of the spawned process on the host. */
  cwd: string;
}

export interface SandboxRequest {
  /** The program and its arguments, as they run inside. */
  argv: string[];
  /** The conversation's workspace (absolute): the only place the command may write. */
  workspaceDir: string;
  /** Environment variables of the command (secrets included); nothing else is inherited. */
  env: Record<string, string>;
}

export interface Sandbox {
  /** `bubblewrap` or `host`. */
  readonly name: string;
  /** The command line that runs `request.argv` in this sandbox. */
  wrap(request: SandboxRequest): SandboxedCommand;
}

export interface BubblewrapOptions {
  /** The bwrap binary (default: `bwrap` on the PATH). */
  bwrapPath?: string;
  /** Give commands the host's network (default false: a private network namespace, loopback only). */
  allowNetwork?: boolean;
  /** More host paths visible read-only inside, at the same path (a tool chain, a package cache). */
  readOnlyPaths?: string[];
}

/** System directories visible read-only inside (symbolic links such as merged-/usr `/bin` are kept as links). */
const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];
/** Hidden inside /etc: password hashes. */
const MASKED_FILES = ["/etc/shadow", "/etc/gshadow"];
/** PATH inside the sandbox and on the host. */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * A bubblewrap sandbox: a new mount, pid, user, IPC, UTS and network namespace (`--unshare-all`;
 * `--share-net` only with `allowNetwork`), `--die-with-parent`, `--new-session` (no terminal
 * injection into the server's terminal), a read-only root holding a read-only view of the system
 * directories, a private `/tmp`, `/dev` and `/proc`, and the workspace read-write at its own path.
 *
 * Why not `--ro-bind / /`: the host's root holds what the agent must never read, even read-only:
 * the server's data directory (its secret key and database), other conversations' workspaces, home
 * directories, and unix sockets under `/run` (a database or Docker socket ignores network
 * namespaces). Only the system directories are shown, plus `readOnlyPaths`.
 */
export function bubblewrapSandbox(options: BubblewrapOptions = {}): Sandbox {
  const bwrap = options.bwrapPath ?? "bwrap";
  return {
    name: "bubblewrap",
    wrap({ argv, workspaceDir, env }) {
      const args: string[] = [];
      for (const dir of SYSTEM_PATHS) args.push(...mountOf(dir));
      for (const file of MASKED_FILES) if (existsSync(file)) args.push("--ro-bind", "/dev/null", file);
      args.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/var/tmp");
      for (const dir of options.readOnlyPaths ?? []) args.push("--ro-bind", path.resolve(dir), path.resolve(dir));
      args.push("--bind", workspaceDir, workspaceDir, "--chdir", workspaceDir);
      // The sandbox's own root (where the mount points live) is read-only too.
      args.push("--remount-ro", "/");
      args.push("--unshare-all", ...(options.allowNetwork ? ["--share-net"] : []), "--die-with-parent", "--new-session");
      args.push("--", ...argv);
      return { command: bwrap, args, env: { ...env }, cwd: workspaceDir };
    },
  };
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
    wrap({ argv, workspaceDir, env }) {
      const [command, ...args] = argv;
      return { command: command!, args, env: { ...env }, cwd: workspaceDir };
    },
  };
}

/**
 * Bubblewrap when it works here (it runs `true` inside a throwaway workspace), else undefined.
 * Unprivileged user namespaces must be allowed (or bwrap be setuid).
 */
export async function detectBubblewrap(options: BubblewrapOptions = {}): Promise<Sandbox | undefined> {
  const sandbox = bubblewrapSandbox(options);
  const workspaceDir = mkdtempSync(path.join(tmpdir(), "acs-sandbox-probe-"));
  try {
    const wrapped = sandbox.wrap({ argv: ["true"], workspaceDir, env: { PATH: SANDBOX_PATH } });
    const ok = await new Promise<boolean>((resolve) => {
      const child = spawn(wrapped.command, wrapped.args, { env: wrapped.env, cwd: wrapped.cwd, stdio: "ignore" });
      child.on("error", () => resolve(false));
      child.on("exit", (code) => resolve(code === 0));
    });
    return ok ? sandbox : undefined;
  } finally {
    rmSync(workspaceDir, { recursive: true, force: true });
  }
}

/** Why commands cannot run: no sandbox, and the operator did not allow host execution. */
export const NO_SANDBOX_MESSAGE =
  "The terminal is disabled: no sandbox is available on this server (bubblewrap was not found or does not work) " +
  "and the operator has not allowed commands to run on the host. Install bubblewrap (`apt-get install bubblewrap`), " +
  "or start the server with host execution allowed (`allowHostExecution: true`) if commands may run unconfined.";
