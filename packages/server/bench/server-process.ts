/**
 * The built server (dist/cli.js) in a process of its own, as the benchmarks that drive it over
 * HTTP start it: with an IPC channel, over which it reports its event-loop delay
 * (src/event-loop-report.ts).
 */
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { EVENT_LOOP_MESSAGE, type EventLoopDelay } from "../src/event-loop-report.js";

// ACS_BENCH_SERVER_CLI: another build of the server (an A/B run against a copy of an older dist/cli.js).
const cli = process.env.ACS_BENCH_SERVER_CLI ? path.resolve(process.env.ACS_BENCH_SERVER_CLI) : path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/cli.js");

/** Starts the built server with `args` (after `--port 0`) and `SESSION_API_KEY=key`; resolves with its URL once it listens. */
export async function startServerProcess(args: readonly string[], key: string): Promise<{ child: ChildProcess; url: string }> {
  // ACS_BENCH_SERVER_NODE_ARGS: extra Node.js flags for the server (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
  const execArgv = process.env.ACS_BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  const child = fork(cli, ["--port", "0", ...args], { env: { ...process.env, SESSION_API_KEY: key }, execArgv, stdio: ["ignore", "pipe", "inherit", "ipc"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += String(chunk);
      const match = /listening on (http:\/\/[^\s/]+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`the server exited (${code}) before listening: ${out}`)));
  });
  return { child, url };
}

/** The server's event-loop delay since the last reset (and a reset when `reset`). */
export function eventLoopOf(child: ChildProcess, reset: boolean): Promise<EventLoopDelay> {
  return new Promise((resolve) => {
    const onMessage = (message: EventLoopDelay) => {
      if (message?.type !== EVENT_LOOP_MESSAGE) return;
      child.off("message", onMessage);
      resolve(message);
    };
    child.on("message", onMessage);
    child.send({ type: EVENT_LOOP_MESSAGE, reset });
  });
}
