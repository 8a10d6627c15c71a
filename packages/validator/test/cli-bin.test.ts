/** The built binary (dist/cli.js) as a user's shell or CI runs it: a real child process. */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { jsonl, packageDir, repoDir, tempDir, trajectory, writeFiles } from "./cli-support.js";

const cli = path.join(packageDir, "dist/cli.js");

function exec(args: string[], options: { cwd?: string; stdin?: string; env?: Record<string, string> } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: options.cwd ?? repoDir, env: { PATH: process.env.PATH ?? "", ...options.env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

describe("the acs-validate binary", () => {
  it("is the package's bin: an executable ESM launcher with a node shebang, and the program it runs", () => {
    const pkg = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as { bin: Record<string, string>; files: string[] };
    expect(pkg.bin).toEqual({ "acs-validate": "./bin/acs-validate.js" });
    const launcher = path.join(packageDir, "bin/acs-validate.js");
    for (const file of [launcher, cli]) {
      expect(existsSync(file)).toBe(true);
      expect(readFileSync(file, "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
      expect(statSync(file).mode & 0o111).not.toBe(0);
    }
    expect(readFileSync(launcher, "utf8")).toContain('new URL("../dist/cli.js", import.meta.url)');
  });

  it("is self-contained: it imports nothing but Node's own modules", () => {
    const code = readFileSync(cli, "utf8");
    const imports = [...code.matchAll(/^import .* from ["']([^"']+)["'];?$/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((name) => !builtinModules.includes(name!.replace(/^node:/, "")))).toEqual([]);
    expect(code).not.toMatch(/\brequire\(/);
  });

  it("stays out of the library entry, which imports no Node module (browsers)", () => {
    for (const file of ["dist/index.js", "dist/index.cjs"]) {
      const code = readFileSync(path.join(packageDir, file), "utf8");
      expect(code).not.toMatch(/["']node:/);
      expect(code).not.toContain("acs-validate");
    }
  });

  it("exit codes: 0 for the recorded corpus, 1 for an invalid recording, 2 for a missing one", async () => {
    expect((await exec(["fixtures/openhands-recorded"])).code).toBe(0);
    const directory = tempDir();
    const events = trajectory();
    events[2]!.action.kind = "TerminalActon";
    writeFiles(directory, { "bad.jsonl": jsonl(events) });
    const invalid = await exec(["bad.jsonl"], { cwd: directory });
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toContain('bad.jsonl:3  /action/kind  unknown Action kind "TerminalActon"; did you mean "TerminalAction"?  (unknownKind)');
    const missing = await exec(["missing.jsonl"], { cwd: directory });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("");
  });

  it("reads standard input with -", async () => {
    const result = await exec(["-", "--format", "json"], { stdin: jsonl(trajectory()) });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, summary: { events: 7 } });
  });

  it("a usage error: exit code 2, the message on standard error", async () => {
    const result = await exec(["--format", "yaml", "x"]);
    expect(result).toEqual({ code: 2, stdout: "", stderr: 'acs-validate: --format must be one of human, json, junit, github, html, got "yaml"; see acs-validate --help\n' });
  });

  it("--format html: one self-contained page on standard output, with the exit codes of the other formats", async () => {
    const directory = tempDir();
    const events = trajectory();
    events[2]!.action.kind = "TerminalActon";
    writeFiles(directory, { "bad.jsonl": jsonl(events), "good.jsonl": jsonl(trajectory()) });
    const pages = { bad: await exec(["bad.jsonl", "--format", "html"], { cwd: directory }), good: await exec(["good.jsonl", "--format", "html"], { cwd: directory }) };
    expect([pages.bad.code, pages.good.code]).toEqual([1, 0]);
    for (const { stdout, stderr } of Object.values(pages)) {
      expect(stderr).toBe("");
      expect(stdout.match(/<!doctype html>/gi)).toHaveLength(1);
      expect(stdout.match(/<\/html>/g)).toHaveLength(1);
      expect(stdout.startsWith("<!doctype html>")).toBe(true);
      expect(stdout.endsWith("</html>\n")).toBe(true);
      // Nothing it would load: no script, no resource from anywhere (recorded text may mention URLs; no attribute does).
      expect(stdout).not.toMatch(/<script/i);
      expect(stdout).not.toMatch(/(?:src|href|srcset|action)\s*=\s*["']?\s*(?:https?:)?\/\//i);
      expect(stdout).not.toMatch(/url\(\s*["']?\s*(?:https?:)?\/\//i);
    }
    expect(pages.bad.stdout).toContain('<span class="verdict fail">✖ invalid</span>');
    expect(pages.bad.stdout).toMatch(/<div class="issue error" id="i1">.*unknownKind.*<code>\/action\/kind<\/code> · line 3/);
    expect(pages.good.stdout).toContain('<span class="verdict pass">✔ valid</span>');
    expect(pages.good.stdout).not.toContain('class="issue');
  });

  it("a reader that stops early (| head) ends the run quietly", async () => {
    const events = trajectory();
    events[2]!.action.kind = "TerminalActon";
    const many = Array.from({ length: 3000 }, () => events).flat();
    const directory = tempDir();
    writeFiles(directory, { "many.jsonl": jsonl(many) });
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [cli, "many.jsonl", "--no-sequence"], { cwd: directory });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
      child.stdout.once("data", () => child.stdout.destroy());
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(1);
  });

  it("ACS_VALIDATE_STATS (for the benchmark) receives the peak memory of the run", async () => {
    const stats = path.join(tempDir(), "stats.json");
    await exec(["fixtures/openhands-recorded/conversation-2026-02-05.jsonl"], { env: { ACS_VALIDATE_STATS: stats } });
    const figures = JSON.parse(readFileSync(stats, "utf8")) as Record<string, number>;
    expect(figures).toMatchObject({ events: 8, bytes: 20447 });
    expect(figures.maxRssBytes).toBeGreaterThan(10_000_000);
  });
});
