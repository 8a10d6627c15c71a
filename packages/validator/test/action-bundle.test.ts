/**
 * The validate-events action as a runner uses it from another repository: its directory copied out
 * of a checkout of this repository (where the runner puts `uses: <owner>/<repo>/…@<ref>`), run with
 * GITHUB_ACTION_PATH pointing there, no npm registry (an empty npm config whose registry does not
 * answer) and no node_modules anywhere above the workspace.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { actionStep, jsonl, packageDir, repoDir, tempDir, trajectory, writeFiles } from "./cli-support.js";

const actionDir = path.join(repoDir, ".github/actions/validate-events");
const actionYaml = readFileSync(path.join(actionDir, "action.yml"), "utf8");

const { script, stepEnv } = actionStep(actionYaml);

/** The action's directory as the runner checks it out: `_actions/<owner>/<repo>/<ref>/.github/actions/validate-events`. */
function checkedOutAction(): string {
  const target = path.join(tempDir(), "_actions/owner/repo/v1/.github/actions/validate-events");
  cpSync(actionDir, target, { recursive: true });
  return target;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: string;
  summary: string;
}

function runFromCheckout(inputs: Record<string, string>, workspace: string, actionPath: string | undefined): Run {
  const runner = tempDir();
  const files = { output: path.join(runner, "output"), summary: path.join(runner, "summary"), npmrc: path.join(runner, "npmrc") };
  writeFileSync(files.npmrc, "");
  writeFileSync(files.summary, "");
  const values: Record<string, string> = { sequence: "true", profile: "releases", "unknown-kinds": "error", "unknown-properties": "error", "max-errors": "", "html-report": "", version: "", command: "", ...inputs };
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: runner,
    RUNNER_TEMP: runner,
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
    // No registry: an empty user config, and a registry address where nothing listens.
    npm_config_userconfig: files.npmrc,
    npm_config_registry: "http://127.0.0.1:9/",
    npm_config_fetch_retries: "0",
    npm_config_cache: path.join(runner, "npm-cache"),
  };
  if (actionPath) env.GITHUB_ACTION_PATH = actionPath;
  for (const [variable, input] of Object.entries(stepEnv)) env[variable] = values[input] ?? "";
  const result = spawnSync("bash", ["-e", "-c", script], { cwd: workspace, env, encoding: "utf8", timeout: 60_000 });
  const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, outputs: read(files.output), summary: read(files.summary) };
}

function workspace(): string {
  const directory = tempDir();
  const bad = trajectory();
  bad[2]!.action.kind = "TerminalActon";
  writeFiles(directory, { "recordings/good.jsonl": jsonl(trajectory()), "recordings/bad.jsonl": jsonl(bad) });
  return directory;
}

describe("the action from its own checkout, with no registry", () => {
  it("fails a bad recording: an annotation on its file and line, the job summary, exit code 1", () => {
    const result = runFromCheckout({ path: "recordings/*.jsonl" }, workspace(), checkedOutAction());
    expect(result.stderr).toBe("");
    expect(result.code).toBe(1);
    expect(result.outputs).toBe("exit-code=1\n");
    expect(result.stdout).toContain("::error file=recordings/bad.jsonl,line=3,col=");
    expect(result.stdout).toContain("title=acs-validate unknownKind::/action/kind: unknown Action kind");
    expect(result.summary).toMatch(/invalid/i);
    expect(result.summary).toContain("recordings/bad.jsonl");
  });

  it("passes a good recording: no annotation, the job summary, exit code 0", () => {
    const result = runFromCheckout({ path: "recordings/good.jsonl" }, workspace(), checkedOutAction());
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.outputs).toBe("exit-code=0\n");
    expect(result.stdout).not.toContain("::error");
    expect(result.summary).toMatch(/valid/i);
  });

  it("html-report: also writes the HTML report there, names it in the outputs, keeps the verdict", () => {
    const directory = workspace();
    const result = runFromCheckout({ path: "recordings/*.jsonl", "html-report": "reports/acs.html" }, directory, checkedOutAction());
    expect(result.code).toBe(1);
    expect(result.outputs).toBe("exit-code=1\nhtml-report=reports/acs.html\n");
    const html = readFileSync(path.join(directory, "reports/acs.html"), "utf8");
    expect(html).toMatch(/^<!DOCTYPE html>/i);
    expect(html).toContain("recordings/bad.jsonl");
    expect(html).toContain("unknown Action kind");
    // The HTML pass leaves the job summary alone: it is the github pass's, as without a report.
    expect(result.summary).toBe(runFromCheckout({ path: "recordings/*.jsonl" }, directory, checkedOutAction()).summary);
  });

  it("without the runner's GITHUB_ACTION_PATH: exit code 2 and an annotation that says what to do", () => {
    const result = runFromCheckout({ path: "recordings" }, workspace(), undefined);
    expect(result.code).toBe(2);
    expect(result.outputs).toBe("exit-code=2\n");
    expect(result.stdout).toMatch(/^::error title=acs-validate::the bundled acs-validate is missing \(\/dist\/acs-validate.mjs\): use the action as <owner>\/<repo>\/\.github\/actions\/validate-events@<ref>, or set the version input\n$/);
  });
});

describe("the bundled acs-validate", () => {
  it("is the validator's build, byte for byte (pnpm --filter @acs-toolkit/validator run bundle:action)", () => {
    const check = spawnSync(process.execPath, ["--import", "tsx", "scripts/bundle-action.ts", "--check"], { cwd: packageDir, encoding: "utf8" });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  });

  it("imports nothing but Node's built-ins", () => {
    const bundle = readFileSync(path.join(actionDir, "dist/acs-validate.mjs"), "utf8");
    const specifiers = [...bundle.matchAll(/\bfrom\s*"([^"]+)"|\bimport\s*\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1] ?? m[2]!);
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((s) => !/^(node:)?[a-z_/]+$/.test(s) || s.startsWith("@"))).toEqual([]);
  });
});
