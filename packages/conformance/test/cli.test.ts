/** The `acs-conformance` bin as a process: formats, exit statuses, usage errors, an unreachable URL. */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseJUnit } from "@acs-toolkit/cli-kit/testing/junit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKS, formatCheckTable, runCli, USAGE } from "../src/index.js";
import { BROKEN, KEY, startProxy, startReference, type Proxy, type ReferenceServer } from "./support/servers.js";

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/bin.js");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

let reference: ReferenceServer;
let broken: Proxy;
beforeAll(async () => {
  reference = await startReference();
  broken = await startProxy(reference.url, BROKEN["answers 500 to limit=101"]!());
});
afterAll(async () => {
  await broken.close();
  await reference.close();
});

describe("the acs-conformance bin", () => {
  it("prints one line per check and a total; exits 1 when a check fails", async () => {
    const result = await run(["--base-url", broken.url, "--api-key", KEY, "--only", "bad-input.limit-0,bad-input.limit-101", "--skip", "bad-input.limit-0", "--only", "create.empty"]);
    expect(result.stderr).toBe("");
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe("pass  create.empty — POST /api/conversations with {} creates a conversation with a UUID that search can read");
    expect(lines[1]).toMatch(/^FAIL {2}bad-input\.limit-101 — expected 422: GET \/api\/conversations\/[0-9a-f-]+\/events\/search\?limit=101 → 500 \{"detail":"Internal Server Error"\}$/);
    expect(lines[2]).toMatch(/^2 checks: 1 passed, 1 failed, 0 skipped in \d+\.\d s against http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(result.code).toBe(1);
  });

  it("--format json prints the report; exit 0 when every check passes", async () => {
    const result = await run(["--base-url", reference.url, "--api-key", KEY, "--only", "create.empty,not-found.search", "--format", "json"]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ passed: 2, failed: 0, skipped: 0, baseUrl: `${reference.url}/` });
    expect(report.results.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([
      ["create.empty", "pass"],
      ["not-found.search", "pass"],
    ]);
  });

  it("--format junit prints a JUnit report with the failure's evidence", async () => {
    const result = await run(["--base-url", broken.url, "--api-key", KEY, "--only", "bad-input.limit-101,bad-input.limit-0", "--format", "junit"]);
    expect(result.code).toBe(1);
    const doc = parseJUnit(result.stdout);
    const counts = { "@tests": "2", "@failures": "1", "@errors": "0", "@skipped": "0", "@time": expect.stringMatching(/^\d+\.\d{3}$/) };
    expect(doc.testsuites).toMatchObject({ "@name": "acs-conformance", ...counts });
    const [suite] = doc.testsuites.testsuite;
    expect(suite).toMatchObject({ "@name": `acs-conformance ${broken.url}/`, ...counts });
    const byName = (name: string) => suite.testcase.find((c: any) => c["@name"] === name);
    const [limit101, limit0] = [byName("bad-input.limit-101"), byName("bad-input.limit-0")];
    expect(limit0).toMatchObject({ "@classname": "acs-conformance.bad-input", "@name": "bad-input.limit-0" });
    expect(limit0.failure).toBeUndefined();
    expect(limit101.failure["@message"]).toBe('limit=101 is 422 at ["query","limit"]');
    expect(limit101.failure["#text"]).toMatch(/^expected 422: GET .*limit=101 → 500/);
  });

  it("exits 2 when nothing answers at the base URL", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const result = await run(["--base-url", `http://127.0.0.1:${port}`, "--api-key", KEY]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`acs-conformance: nothing answers at http://127.0.0.1:${port}/: GET /health: ECONNREFUSED\n`);
    expect(result.stdout).toBe("");
  });
});

/** The CLI in-process (the bin's `main`), for what needs no separate process. */
async function runInProcess(args: string[], env: Record<string, string> = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, env, { out: (text) => void (stdout += text), err: (text) => void (stderr += text) });
  return { code, stdout, stderr };
}

describe("acs-conformance options", () => {
  it("takes the key from SESSION_API_KEY; without any key the authentication checks are skipped", async () => {
    const withEnv = await runInProcess(["--base-url", reference.url, "--only", "auth.getSettings"], { SESSION_API_KEY: KEY });
    expect(withEnv.stdout).toMatch(/^pass {2}auth\.getSettings/);
    const without = await runInProcess(["--base-url", reference.url, "--only", "auth.getSettings"]);
    expect(without.stdout).toMatch(/^skip {2}auth\.getSettings — no --api-key given: a wrong key cannot be told from the right one\n/);
    expect(without.code).toBe(0);
  });

  it.each([
    [[], "--base-url is required"],
    [["--base-url", "nope"], '--base-url must be a URL, got "nope"'],
    [["--base-url", "ftp://x"], '--base-url must be http or https, got "ftp:"'],
    [["--base-url", "http://x", "--format", "xml"], '--format must be text, json or junit, got "xml"'],
    [["--base-url", "http://x", "--timeout", "soon"], '--timeout must be a whole number of milliseconds of at least 1, got "soon"'],
    [["--base-url", "http://x", "--settle=1.5"], '--settle must be a whole number of milliseconds of at least 0, got "1.5"'],
    [["--base-url", "http://x", "--only", "serch"], 'no check matches "serch"'],
    [["--bogus"], "unknown option --bogus"],
    [["--base-ur", "http://x"], "unknown option --base-ur (did you mean --base-url?)"],
    [["--base-url"], "option --base-url needs a value"],
  ])("exits 2 on a usage error, in one line: %j", async (args, message) => {
    const result = await runInProcess(args);
    expect(result).toEqual({ code: 2, stdout: "", stderr: `acs-conformance: ${message}; see acs-conformance --help\n` });
  });

  it("--version prints the package's version", async () => {
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    expect(await runInProcess(["--version"])).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("--list prints the check table; --help the usage", async () => {
    const list = await runInProcess(["--list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(formatCheckTable(CHECKS) + "\n");
    const websocket = await runInProcess(["--list", "--only", "websocket"]);
    expect(websocket.stdout.split("\n").filter((l) => l.startsWith("| `")).every((l) => l.startsWith("| `ws.") || l.includes("`websocket`"))).toBe(true);
    const help = await runInProcess(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(USAGE);
  });
});
