/**
 * One command in a conversation's sandbox, in a process of its own (`runOneShot`, what
 * `AgentRuntime.exec` runs): its output and exit code, where it starts, the end of its input, and a
 * timeout that kills it with everything it started.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectBubblewrap, ForkServer, hostExecution, runOneShot, type Sandbox } from "../src/index.js";

let spawner: ForkServer;
let sandbox: Sandbox;
let base: string;
let workspaceDir: string;
beforeAll(async () => {
  spawner = new ForkServer();
  // Where bubblewrap works (CI runs these as root, as in a container), it; else the host's shell.
  sandbox = (await detectBubblewrap()) ?? hostExecution();
  base = mkdtempSync(path.join(tmpdir(), "acs-one-shot-"));
  chmodSync(base, 0o711); // searchable by the sandbox's user of a root server, as a data directory is
  workspaceDir = path.join(base, "workspace");
  mkdirSync(path.join(workspaceDir, "sub"), { recursive: true, mode: 0o777 });
});
afterAll(() => {
  spawner.close();
  rmSync(base, { recursive: true, force: true });
});

/** Runs `command` and collects its output. */
async function run(command: string, options: { cwd?: string; timeoutMs?: number } = {}) {
  const output = { stdout: "", stderr: "" };
  const result = await runOneShot(sandbox, spawner, { command, workspaceDir, timeoutMs: 30_000, ...options, onOutput: (stream, text) => (output[stream] += text) });
  return { ...result, ...output };
}

describe("runOneShot", () => {
  it("answers its output and exit code, and reads the end of its input at once", async () => {
    expect(await run("echo out; echo err >&2; cat; exit 4")).toMatchObject({ exitCode: 4, timedOut: false, stdout: "out\n", stderr: "err\n" });
  });

  it("starts in the workspace, or the folder below it given as cwd", async () => {
    expect((await run("pwd")).stdout).toBe(`${workspaceDir}\n`);
    expect((await run("pwd", { cwd: path.join(workspaceDir, "sub") })).stdout).toBe(`${path.join(workspaceDir, "sub")}\n`);
  });

  it.runIf(process.getuid?.() === 0)("confines a cwd that is a link to the sandbox's own view", async () => {
    // A link to the host's base folder: inside, only the workspace of it is shown.
    writeFileSync(path.join(base, "host-secret.txt"), "host");
    symlinkSync(base, path.join(workspaceDir, "up"));
    const result = await run("ls; cat host-secret.txt", { cwd: path.join(workspaceDir, "up") });
    expect(result.stdout).toBe("workspace\n");
    expect(result.exitCode).not.toBe(0);
  });

  it("kills a command past its timeout, and says so", async () => {
    const result = await run("sleep 27.1828; echo never", { timeoutMs: 200 });
    expect(result).toMatchObject({ exitCode: -1, timedOut: true, stdout: "" });
  });
});
