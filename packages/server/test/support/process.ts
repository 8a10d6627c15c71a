/**
 * The built `acs-server` bin as a child process, for tests of the server as a process (restart,
 * crash, signals, hostile connections): started on an ephemeral port, resolved once it listens.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { KEY } from "./harness.js";

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const SERVER_CLI = path.join(PACKAGE_DIR, "dist/cli.js");

export interface ServerProcess {
  process: ChildProcess;
  url: string;
  stdout: string[];
  stderr: string[];
}

interface SpawnOptions {
  env?: Record<string, string>;
  /** Extra flags after `--port 0 --data-dir DIR --log-level warn`. */
  flags?: string[];
  /** The command line up to the node binary, e.g. `["unshare", "-Urm", ...]`; default none. */
  wrapper?: string[];
  /** Node's own flags, e.g. `["--import", "./test/support/kill-in-write.mjs"]` (resolved from the package directory). */
  nodeArgs?: string[];
}

/** Starts the built bin on a free port with `dataDir`; resolves once it prints its listening line. */
export async function spawnServer(dataDir: string, options: SpawnOptions = {}): Promise<ServerProcess> {
  if (!existsSync(SERVER_CLI)) throw new Error(`${SERVER_CLI} is missing: run \`pnpm build\` first`);
  const args = [SERVER_CLI, "--port", "0", "--data-dir", dataDir, "--log-level", "warn", ...(options.flags ?? [])];
  const [command, ...rest] = [...(options.wrapper ?? []), process.execPath, ...(options.nodeArgs ?? []), ...args];
  const child = spawn(command!, rest, {
    cwd: PACKAGE_DIR,
    env: { PATH: process.env.PATH, ...(options.env ?? { SESSION_API_KEY: KEY }) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stderr!.on("data", (chunk: Buffer) => stderr.push(String(chunk)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${stdout.join("")}${stderr.join("")}`)), 15_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout.push(String(chunk));
      const match = /listening on (http:\/\/\S+?) /.exec(stdout.join(""));
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code}: ${stdout.join("")}${stderr.join("")}`)));
  });
  return { process: child, url, stdout, stderr };
}

/** Resolves with the exit code once the child has exited (at once if it already has). */
export const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));
