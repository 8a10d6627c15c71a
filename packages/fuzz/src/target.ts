/**
 * What the fuzzer runs against: the built server or mock started from its bin on a free port (a
 * temporary data directory, an IPC channel to read its event-loop figures), or an implementation
 * already running at a URL (no IPC: a stall shows only as a slow /health).
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { EVENT_LOOP_MESSAGE, type EventLoopDelay } from "@acs-toolkit/server";

export const FUZZ_KEY = "fuzz-session-key";

export interface Target {
  name: string;
  url: string;
  key: string;
  /** Whether the process is still running (always true for an external URL). */
  alive(): boolean;
  /** Its event-loop figures since the last call (undefined for an external URL). */
  eventLoop(): Promise<EventLoopDelay | undefined>;
  /** What it wrote to stderr (a crash's stack), for the report. */
  stderr(): string;
  /** Its data directory, when the fuzzer started it (a conversation's workspace is `uploads/<id>` there). */
  dataDir?: string;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);
const bin = (pkg: string) => path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "dist/cli.js");

/** Starts the built server or mock on a free port. */
export async function startTarget(kind: "server" | "mock"): Promise<Target> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `acs-fuzz-${kind}-`));
  const args =
    kind === "server"
      ? [bin("@acs-toolkit/server"), "--port", "0", "--data-dir", dataDir, "--log-level", "silent"]
      : [bin("@acs-toolkit/mock"), "--port", "0", "--key", FUZZ_KEY, "--speed", "instant", "--log-level", "silent", "--scenario", "happy"];
  const [script, ...rest] = args;
  const child: ChildProcess = fork(script!, rest, { env: { ...process.env, SESSION_API_KEY: FUZZ_KEY }, stdio: ["ignore", "pipe", "pipe", "ipc"] });
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => (err = (err + String(chunk)).slice(-20_000)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`${kind} did not start: ${out}${err}`)), 30_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      out += String(chunk);
      const match = /(?:listening on|mock on) (http:\/\/\S+?)[ \s]/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once("exit", (code) => reject(new Error(`${kind} exited (${code}): ${out}${err}`)));
  });
  child.stdout!.resume();
  return {
    name: kind,
    url,
    key: FUZZ_KEY,
    dataDir: kind === "server" ? dataDir : undefined,
    alive: () => child.exitCode === null && child.signalCode === null,
    stderr: () => err,
    eventLoop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || !child.connected) return resolve(undefined);
        const timer = setTimeout(() => resolve(undefined), 5_000);
        const onMessage = (message: EventLoopDelay) => {
          if (message?.type !== EVENT_LOOP_MESSAGE) return;
          clearTimeout(timer);
          child.off("message", onMessage);
          resolve(message);
        };
        child.on("message", onMessage);
        child.send({ type: EVENT_LOOP_MESSAGE, reset: true });
      }),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await new Promise((resolve) => child.once("exit", resolve));
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An implementation already running at `url`. */
export function externalTarget(url: string, key: string): Target {
  return { name: url, url: url.replace(/\/$/, ""), key, alive: () => true, eventLoop: async () => undefined, stderr: () => "", close: async () => {} };
}
