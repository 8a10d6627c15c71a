/** The `acs-mock` bin (the built dist/cli.js): starts, prints what it serves, serves it, stops on SIGTERM. */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), "acs-mock-cli-"));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the bin and resolves with its banner once it is listening. */
function start(args: string[]): Promise<{ child: ChildProcess; banner: string; url: string }> {
  const child = spawn(process.execPath, [cli, "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      if (out.includes("Ctrl-C stops it.")) resolve({ child, banner: out, url: /on (http:\/\/\S+)/.exec(out)![1]! });
    });
    child.stderr!.on("data", (chunk) => (out += chunk));
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

describe("acs-mock", () => {
  it("prints what it serves, serves it, and stops on SIGTERM", async () => {
    const { child, banner, url } = await start(["--speed", "instant", "--seed", "7", "--scenario", "happy", "--scenario", "errors"]);
    expect(banner).toMatch(/ready in \d+ ms/);
    expect(banner).toContain("X-Session-API-Key: mock-session-key");
    expect(banner).toContain("/sockets/events/{conversation_id}");
    const ids = [...banner.matchAll(/^\s+(happy|errors)\s+([0-9a-f-]{36})/gm)].map((m) => m[2]!);
    expect(ids).toHaveLength(2);
    const page = await (await fetch(`${url}/api/conversations/${ids[0]}/events/search?limit=3`)).json();
    expect(page.items).toHaveLength(3);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("the same seed gives the same conversations", async () => {
    const [a, b] = await Promise.all([start(["--seed", "3", "--scenario", "happy"]), start(["--seed", "3", "--scenario", "happy"])]);
    const id = (banner: string) => /happy\s+([0-9a-f-]{36})/.exec(banner)![1];
    expect(id(a.banner)).toBe(id(b.banner));
    const page = async (url: string, banner: string) => (await fetch(`${url}/api/conversations/${id(banner)}/events/search`)).text();
    expect(await page(a.url, a.banner)).toBe(await page(b.url, b.banner));
    a.child.kill();
    b.child.kill();
  });

  it("--help, and clear errors for bad flags and bad scenario files", () => {
    const help = spawnSync(process.execPath, [cli, "--help"], { encoding: "utf8" });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("--scenario NAME|FILE");
    const badSpeed = spawnSync(process.execPath, [cli, "--speed", "fast"], { encoding: "utf8" });
    expect(badSpeed.status).toBe(2);
    expect(badSpeed.stderr).toContain('--speed must be a positive number or "instant", got "fast"');
    const unknown = spawnSync(process.execPath, [cli, "--scenario", "happpy"], { encoding: "utf8" });
    expect(unknown.stderr).toContain("acs-mock: --scenario happpy: no such built-in scenario (did you mean happy? happy,");
    expect(unknown.stderr).toMatch(/; see acs-mock --help\n$/);
    const typo = spawnSync(process.execPath, [cli, "--sped", "2"], { encoding: "utf8" });
    expect(typo).toMatchObject({ status: 2, stdout: "", stderr: "acs-mock: unknown option --sped (did you mean --speed?); see acs-mock --help\n" });
    const version = spawnSync(process.execPath, [cli, "--version"], { encoding: "utf8" });
    expect(version).toMatchObject({ status: 0, stdout: `${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}\n` });
    const file = path.join(dir, "broken.jsonl");
    writeFileSync(file, '{"id":"a","timestamp":"2026-02-05T11:24:45","source":"user","kind":"PauseEvent"}\n{"id":"b","kind":"PauseEvent"}\n');
    const broken = spawnSync(process.execPath, [cli, "--scenario", file], { encoding: "utf8" });
    expect(broken.status).toBe(2);
    expect(broken.stderr).toContain(`${file}:2: /`);
  });
});
