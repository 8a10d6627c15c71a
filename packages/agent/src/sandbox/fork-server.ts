/**
 * Starting a process from the server blocks its event loop for the time of a `fork()`, which grows
 * with the server's memory: 40–70 ms for a server of 190–270 MB on a small VM, where every other
 * conversation waits. The fork server is a small Node.js process started once, while the server is
 * still small; the server asks it to start each sandboxed shell, and their standard streams come
 * and go as messages on its IPC channel. The server's loop then pays for a message, not a fork.
 *
 * - Flow control: the fork server stops reading a process's output when more than 1 MiB of it
 *   has not been acknowledged (the server acknowledges each chunk it has taken), so a command that
 *   floods its output fills a pipe, not a queue.
 * - Lifecycle: when the server goes away (a stop, a crash, SIGKILL), the channel closes and the
 *   fork server kills every process it started (and the sandboxes' `--die-with-parent` takes the
 *   rest with them). When the fork server goes away, every process reports its exit, and the next
 *   spawn starts a new fork server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { setPriority } from "node:os";
import { Readable, Writable } from "node:stream";
import type { SandboxedCommand } from "./sandbox.js";

/** What the terminal needs of a started process (a `ChildProcess` with piped stdio is one). */
export interface SpawnedProcess {
  /** Its process id on the host, once started. */
  readonly pid?: number | undefined;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  kill(signal?: NodeJS.Signals): boolean;
  on(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  on(event: "error", listener: (error: Error) => void): this;
}

/**
 * The nice value of the fork server and so of every process it starts: a nice-0 server gets about
 * nine times their share of a busy core. Below a CPU cgroup (`openSandboxCgroups`) it orders the
 * processes of one sandbox only; without one, it is the whole bound.
 */
export const SANDBOX_NICE = 10;

/** Starts the sandbox's processes. */
export interface ProcessSpawner {
  spawn(command: SandboxedCommand): Promise<SpawnedProcess>;
  /** Stops what the spawner itself runs (its processes are killed). */
  close?(): void;
}

type FromServer =
  | { op: "spawned"; id: number; pid?: number }
  | { op: "failed"; id: number; message: string }
  | { op: "data"; id: number; fd: 1 | 2; data: Uint8Array }
  | { op: "end"; id: number; fd: 1 | 2 }
  | { op: "error"; id: number; message: string; code?: string }
  | { op: "exit"; id: number; code: number | null; signal: NodeJS.Signals | null };

/**
 * The fork server's program, run with `node -e` (CommonJS, no file to find in `src/` or `dist/`).
 * Messages in: spawn, stdin, stdin-end, kill, ack. Out: see {@link FromServer}.
 */
const FORK_SERVER_PROGRAM = String.raw`
const { spawn } = require("node:child_process");
const HIGH = 1 << 20;
const children = new Map();
// A send that races the server's exit fails with EPIPE: the disconnect handler cleans up.
const send = (message) => { if (process.connected) process.send(message, (error) => {}); };
process.on("message", (m) => {
  const entry = children.get(m.id);
  if (m.op === "spawn") {
    let child;
    try {
      child = spawn(m.command, m.args, { env: m.env, cwd: m.cwd, stdio: "pipe" });
    } catch (error) {
      send({ op: "failed", id: m.id, message: String(error && error.message) });
      return;
    }
    const state = { child, unacked: 0, paused: false };
    children.set(m.id, state);
    send({ op: "spawned", id: m.id, pid: child.pid });
    for (const [fd, stream] of [[1, child.stdout], [2, child.stderr]]) {
      stream.on("data", (data) => {
        state.unacked += data.length;
        send({ op: "data", id: m.id, fd, data });
        if (state.unacked > HIGH && !state.paused) {
          state.paused = true;
          child.stdout.pause();
          child.stderr.pause();
        }
      });
      stream.on("end", () => send({ op: "end", id: m.id, fd }));
    }
    child.stdin.on("error", () => {});
    child.on("error", (error) => send({ op: "error", id: m.id, message: error.message, code: error.code }));
    child.on("exit", (code, signal) => send({ op: "exit", id: m.id, code, signal }));
    child.on("close", () => children.delete(m.id));
  } else if (!entry) {
    return;
  } else if (m.op === "stdin") {
    entry.child.stdin.write(m.data);
  } else if (m.op === "stdin-end") {
    entry.child.stdin.end();
  } else if (m.op === "kill") {
    entry.child.kill(m.signal);
  } else if (m.op === "ack") {
    entry.unacked -= m.bytes;
    if (entry.paused && entry.unacked <= HIGH / 2) {
      entry.paused = false;
      entry.child.stdout.resume();
      entry.child.stderr.resume();
    }
  }
});
process.on("disconnect", () => {
  for (const { child } of children.values()) child.kill("SIGKILL");
  process.exit(0);
});
`;

/** A process started by the fork server, as the server sees it. */
class RemoteProcess extends EventEmitter implements SpawnedProcess {
  readonly stdout = new Readable({ read() {} });
  readonly stderr = new Readable({ read() {} });
  readonly stdin: Writable;
  exited = false;
  /** Streams not ended yet: output can still arrive after the exit. */
  private open = 2;
  /**
   * Messages that came before the caller of `spawn` could listen (the spawn and an exit or an error
   * can come in one read of the channel): replayed in order once it has had its turn.
   */
  private early: Array<FromServer | "lost"> | undefined = [];

  constructor(
    private readonly id: number,
    private readonly post: (message: object) => void,
    readonly pid: number | undefined,
  ) {
    super();
    this.stdin = new Writable({
      decodeStrings: false,
      write: (chunk: string | Buffer, _encoding, done) => {
        post({ op: "stdin", id, data: chunk });
        done();
      },
      // `end()` reaches the process as the end of its input (a command reading stdin then ends).
      final: (done) => {
        post({ op: "stdin-end", id });
        done();
      },
    });
  }

  kill(signal: NodeJS.Signals = "SIGTERM"): boolean {
    if (this.exited) return false;
    this.post({ op: "kill", id: this.id, signal });
    return true;
  }

  /** From the next turn of the loop on, messages are handled as they come (the caller listens by then). */
  listen(): void {
    setImmediate(() => {
      const early = this.early ?? [];
      this.early = undefined;
      for (const message of early) {
        if (message === "lost") this.lost();
        else this.take(message);
      }
    });
  }

  /** A message of the fork server about this process. */
  take(message: FromServer): void {
    if (this.early) {
      this.early.push(message);
      return;
    }
    switch (message.op) {
      case "data": {
        const data = Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength);
        (message.fd === 1 ? this.stdout : this.stderr).push(data);
        this.post({ op: "ack", id: this.id, bytes: data.length });
        return;
      }
      case "end":
        (message.fd === 1 ? this.stdout : this.stderr).push(null);
        this.open--;
        this.settle();
        return;
      case "error":
        this.emit("error", Object.assign(new Error(message.message), { code: message.code }));
        return;
      case "exit":
        this.gone(message.code, message.signal);
        return;
    }
  }

  /** The process exited (or the fork server did: it is gone too). */
  gone(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    this.emit("exit", code, signal);
    this.settle();
  }

  /** Once exited with both streams ended, nothing more comes: "done" lets the fork server forget it. */
  private settle(): void {
    if (this.exited && this.open <= 0) this.emit("done");
  }

  /** The fork server went away: the streams end, and the process reports it was killed. */
  lost(): void {
    if (this.early) {
      this.early.push("lost");
      return;
    }
    this.open = 0;
    this.gone(null, "SIGKILL");
    this.stdout.push(null);
    this.stderr.push(null);
  }
}

/**
 * Starts processes through a fork server (see above). Start it early ({@link start}: the fork
 * that starts it is the only one the server pays for); it is also started at the first spawn.
 */
export class ForkServer implements ProcessSpawner {
  private child: ChildProcess | undefined;
  private readonly processes = new Map<number, RemoteProcess>();
  private readonly pending = new Map<number, { resolve(process: RemoteProcess): void; reject(error: Error): void }>();
  private nextId = 0;

  /** Starts the fork server if it is not running. */
  start(): void {
    if (this.child) return;
    const child = spawn(process.execPath, ["-e", FORK_SERVER_PROGRAM], { stdio: ["ignore", "ignore", "inherit", "ipc"], serialization: "advanced", env: {} });
    // Everything it starts inherits the nice value: sandboxed commands yield the CPU to the server's event loop.
    if (child.pid) setPriority(child.pid, SANDBOX_NICE);
    this.child = child;
    child.on("message", (message: FromServer) => this.take(message));
    child.on("error", () => this.lose(child));
    child.on("exit", () => this.lose(child));
    this.holdLoop();
  }

  spawn(command: SandboxedCommand): Promise<SpawnedProcess> {
    this.start();
    const id = ++this.nextId;
    const spawned = new Promise<RemoteProcess>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.post({ op: "spawn", id, command: command.command, args: command.args, env: command.env, cwd: command.cwd });
    this.holdLoop();
    return spawned;
  }

  /** Stops the fork server; it kills every process it started. */
  close(): void {
    const child = this.child;
    if (!child) return;
    if (child.connected) child.disconnect();
    this.lose(child);
  }

  private post(message: object): void {
    if (this.child?.connected) this.child.send(message);
  }

  private take(message: FromServer): void {
    const waiting = this.pending.get(message.id);
    if (message.op === "spawned" && waiting) {
      this.pending.delete(message.id);
      const remote = new RemoteProcess(message.id, (out) => this.post(out), message.pid);
      remote.on("done", () => {
        this.processes.delete(message.id);
        this.holdLoop();
      });
      this.processes.set(message.id, remote);
      waiting.resolve(remote);
      remote.listen();
      return;
    }
    if (message.op === "failed" && waiting) {
      this.pending.delete(message.id);
      waiting.reject(new Error(message.message));
      this.holdLoop();
      return;
    }
    this.processes.get(message.id)?.take(message);
  }

  /** The fork server is gone: its processes are too; the next spawn starts another. */
  private lose(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = undefined;
    for (const waiting of this.pending.values()) waiting.reject(new Error("the fork server stopped"));
    this.pending.clear();
    for (const remote of [...this.processes.values()]) remote.lost();
    this.processes.clear();
  }

  /** The channel keeps the server's loop alive only while a process runs or a spawn is pending, as a child process would. */
  private holdLoop(): void {
    const child = this.child;
    if (!child) return;
    const busy = this.processes.size > 0 || this.pending.size > 0;
    child.unref();
    if (busy) child.channel?.ref();
    else child.channel?.unref();
  }
}
