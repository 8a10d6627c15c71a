/**
 * One command in a conversation's sandbox, in a process of its own: what a client runs beside the
 * agent (the agent server's bash routes: a web UI reading the workspace's git state), which must
 * neither see nor change the agent's shell (its directory, variables, jobs). The sandbox, its user
 * and its limits are the conversation's ({@link Sandbox.wrap}, as the terminal's shell gets them);
 * the memory of its processes together is bounded as the terminal bounds its shell's (a cgroup,
 * else a watch of the process tree), `/tmp` on disk is watched as the terminal watches it, and a
 * timeout kills the sandbox's first process, whose PID namespace takes every other with it.
 */
import { constants } from "node:os";
import { watchDirectoryQuota } from "./directory-quota.js";
import type { ProcessSpawner, SpawnedProcess } from "./fork-server.js";
import { watchProcessMemory } from "./process-memory.js";
import { SANDBOX_PATH, type Sandbox } from "./sandbox.js";

export interface OneShotCommand {
  /** The command line, run by `bash -c` (no profile, no rc file). */
  command: string;
  /** The conversation's workspace (absolute). */
  workspaceDir: string;
  /** Where it starts: the workspace (default) or a folder below it, absolute (see {@link SandboxRequest.cwd}). */
  cwd?: string;
  /** The conversation's `/tmp` on disk (see {@link SandboxRequest.tmpDir}). */
  tmpDir?: string;
  /** Environment besides PATH, HOME (the workspace), TERM and LANG. Default none. */
  env?: Record<string, string>;
  /** Past this, the command and everything it started are killed. */
  timeoutMs: number;
  /** Output as it comes, decoded as UTF-8. */
  onOutput?(stream: "stdout" | "stderr", text: string): void;
  /** Kills the command (its client went away). */
  signal?: AbortSignal;
}

export interface OneShotResult {
  /** The exit code; 128 + n for a sandbox killed by signal n; -1 when it timed out or was stopped. */
  exitCode: number;
  /** It ran past `timeoutMs` and was killed. */
  timedOut: boolean;
  /** What the limits did to it, one sentence each (processes killed for memory, `/tmp` past its size). */
  notes: string[];
}

const mebibytes = (bytes: number) => `${Math.round((bytes / 1024 ** 2) * 10) / 10} MiB`;

/** Runs `request.command` once in `sandbox`, started by `spawner`; resolves when it and its output have ended. */
export async function runOneShot(sandbox: Sandbox, spawner: ProcessSpawner, request: OneShotCommand): Promise<OneShotResult> {
  const { workspaceDir, cwd, tmpDir } = request;
  const env = { ...request.env, PATH: SANDBOX_PATH, HOME: workspaceDir, TERM: "dumb", LANG: "C.UTF-8" };
  const wrapped = sandbox.wrap({ argv: ["bash", "--noprofile", "--norc", "-c", request.command], workspaceDir, cwd, tmpDir, env });
  let child: SpawnedProcess;
  try {
    child = await spawner.spawn(wrapped);
  } catch (error) {
    wrapped.cgroup?.release();
    throw error;
  }
  // Nothing is typed into it: a command that reads its input reads the end of it.
  child.stdin.on("error", () => {});
  child.stdin.end();

  const notes: string[] = [];
  let timedOut = false;
  let stopped = false;
  const stop = () => {
    stopped = true;
    child.kill("SIGKILL");
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, request.timeoutMs);
  const onAbort = () => stop();
  if (request.signal?.aborted) stop();
  request.signal?.addEventListener("abort", onAbort, { once: true });

  const limits = sandbox.limits;
  const memoryWatch = sandbox.memoryBound === "process" && limits?.memoryBytes && child.pid ? watchProcessMemory({ rootPid: child.pid, limitBytes: limits.memoryBytes }) : undefined;
  const tmpQuota =
    tmpDir && limits?.tmpBytes
      ? watchDirectoryQuota({
          dir: tmpDir,
          limitBytes: limits.tmpBytes,
          onOver: (size, allowed) => {
            notes.push(`The command was killed: /tmp holds ${mebibytes(size.bytes)}${size.complete ? "" : " or more"}, over its limit of ${mebibytes(allowed)}.`);
            stop();
          },
        })
      : undefined;

  const streams = (["stdout", "stderr"] as const).map(
    (name) =>
      new Promise<void>((resolve) => {
        const decoder = new TextDecoder();
        const stream = child[name];
        stream.on("data", (chunk: Buffer) => {
          const text = decoder.decode(chunk, { stream: true });
          if (text) request.onOutput?.(name, text);
        });
        stream.once("end", () => {
          const rest = decoder.decode();
          if (rest) request.onOutput?.(name, rest);
          resolve();
        });
        stream.once("error", () => resolve());
      }),
  );
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
    child.on("error", () => resolve({ code: null, signal: "SIGKILL" }));
  });
  try {
    const { code, signal } = await exit;
    // Ended: a timeout or a limit that fires now has nothing left to kill.
    const killed = stopped;
    clearTimeout(timer);
    memoryWatch?.stop();
    tmpQuota?.stop();
    // A process that left the sandbox's reach (host execution: a background job outliving the
    // shell) may hold the pipes open: its output is waited for briefly, not for its life.
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(streams), new Promise<void>((resolve) => (grace = setTimeout(resolve, 1_000)))]);
    clearTimeout(grace);
    const killedFor = wrapped.cgroup ? wrapped.cgroup.oomKills() : (memoryWatch?.kills ?? 0);
    const memoryBytes = wrapped.cgroup?.limitBytes ?? limits?.memoryBytes;
    if (killedFor > 0 && memoryBytes) {
      notes.push(`${killedFor === 1 ? "A process was" : `${killedFor} processes were`} killed: the command's processes together reached their memory limit of ${mebibytes(memoryBytes)}.`);
    }
    const exitCode = killed ? -1 : (code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : -1));
    return { exitCode, timedOut: killed && timedOut, notes };
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onAbort);
    memoryWatch?.stop();
    tmpQuota?.stop();
    wrapped.cgroup?.release();
  }
}
