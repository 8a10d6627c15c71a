/**
 * Starting a process blocks the event loop for the time of a fork (about 10 ms for a server with a
 * 150 MB heap, more under load). When twenty conversations open their shells in the same turn of
 * the loop, that adds up to a stall. The runtime's Spawner starts one process per turn: the
 * others wait for `setImmediate`, and whatever else is ready (I/O, timers) runs in between.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { ProcessSpawner } from "./fork-server.js";
import type { SandboxedCommand } from "./sandbox.js";

/** Spawns from this process, one start per turn of the event loop (the runtime uses a `ForkServer`). */
export class Spawner implements ProcessSpawner {
  private queue: Promise<void> = Promise.resolve();

  /** Spawns `command` with piped stdio, in a turn of the event loop of its own. */
  spawn(command: SandboxedCommand): Promise<ChildProcessWithoutNullStreams> {
    const turn = this.queue.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    const child = turn.then(() => spawn(command.command, command.args, { env: command.env, cwd: command.cwd, stdio: "pipe" }));
    this.queue = turn;
    return child;
  }
}
