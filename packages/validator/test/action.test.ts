/**
 * The GitHub Action (.github/actions/validate-events/action.yml): its step's script run by bash as
 * the runner runs it (inputs as environment variables), against the built acs-validate.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { actionInputs, actionStep, jsonl, packageDir, repoDir, tempDir, trajectory, writeFiles } from "./cli-support.js";

const actionYaml = readFileSync(path.join(repoDir, ".github/actions/validate-events/action.yml"), "utf8");

const { script, stepEnv } = actionStep(actionYaml);

/** Defaults of the inputs, as the runner fills them in. */
function defaults(): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of actionInputs(actionYaml)) {
    const block = new RegExp(`^ {2}${name}:\\n((?: {4}.*\\n|\\n)+)`, "m").exec(actionYaml)?.[1] ?? "";
    values[name] = (/^ {4}default: "?([^"\n]*)"?$/m.exec(block)?.[1] ?? "").trim();
  }
  return values;
}

function runAction(inputs: Record<string, string>, cwd: string) {
  const values: Record<string, string> = { ...defaults(), command: `node ${path.join(packageDir, "dist/cli.js")}`, ...inputs };
  const output = path.join(tempDir(), "github-output");
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", GITHUB_OUTPUT: output };
  for (const [variable, input] of Object.entries(stepEnv)) env[variable] = values[input] ?? "";
  const result = spawnSync("bash", ["-e", "-c", script], { cwd, env, encoding: "utf8" });
  let outputs = "";
  try {
    outputs = readFileSync(output, "utf8");
  } catch {
    // no output file written
  }
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, outputs };
}

function recordings() {
  const directory = tempDir();
  const bad = trajectory();
  bad[2]!.action.kind = "TerminalActon";
  writeFiles(directory, {
    "recordings/2026/02/good.jsonl": jsonl(trajectory()),
    "recordings/2026/02/bad one.jsonl": jsonl(bad),
    "conversations/c1/events/event-00000-00000000-0000-4000-8000-000000000001.json": JSON.stringify(trajectory()[0]),
  });
  return directory;
}

describe("action.yml", () => {
  it("declares its inputs, and passes each to the script through the environment only", () => {
    expect(actionInputs(actionYaml)).toEqual(["path", "sequence", "profile", "unknown-kinds", "unknown-properties", "max-errors", "html-report", "version", "command"]);
    expect(Object.values(stepEnv).sort()).toEqual(actionInputs(actionYaml).sort());
    expect(script).not.toContain("${{");
    expect(actionYaml).toMatch(/^ {2}using: composite$/m);
  });

  it("annotates each problem on its file and line and fails the step (exit code 1)", () => {
    const result = runAction({ path: "recordings/**/*.jsonl\n  conversations/\n" }, recordings());
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('::error file=recordings/2026/02/bad one.jsonl,line=3,col=');
    expect(result.stdout).toContain("title=acs-validate unknownKind::/action/kind: unknown Action kind");
    expect(result.stdout).toContain("  inputs    3 (1 invalid or unreadable)");
    expect(result.outputs).toBe("exit-code=1\n");
  });

  it("passes valid recordings (exit code 0); globs reach acs-validate unexpanded", () => {
    const directory = recordings();
    const result = runAction({ path: "recordings/**/good.jsonl" }, directory);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("✔ valid (exit code 0)");
    expect(result.outputs).toBe("exit-code=0\n");
  });

  it("sequence: false, unknown-kinds: warn and max-errors reach the command", () => {
    const directory = recordings();
    const lenient = runAction({ path: "recordings", "unknown-kinds": "warn" }, directory);
    expect(lenient.code).toBe(0);
    expect(lenient.stdout).toContain("::warning file=recordings/2026/02/bad one.jsonl,line=3");
    const unordered = tempDir();
    writeFiles(unordered, { "t.jsonl": jsonl(trajectory().reverse()) });
    expect(runAction({ path: "t.jsonl" }, unordered).code).toBe(1);
    expect(runAction({ path: "t.jsonl", sequence: "false" }, unordered).code).toBe(0);
    const limited = runAction({ path: "t.jsonl", "max-errors": "1" }, unordered);
    expect(limited.stdout.split("\n").filter((l) => l.startsWith("::error"))).toHaveLength(1);
  });

  it("profile reaches the command: interface rejects a kind of a later release, the default accepts it", () => {
    const directory = tempDir();
    const events = trajectory();
    const interrupt = { id: "00000000-0000-4000-8000-0000000000f1", timestamp: "2026-05-20T15:31:44.87012", source: "user", kind: "InterruptEvent" };
    writeFiles(directory, { "today.jsonl": jsonl([...events, interrupt]) });
    expect(runAction({ path: "today.jsonl" }, directory).code).toBe(0);
    const strict = runAction({ path: "today.jsonl", profile: "interface" }, directory);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('::error file=today.jsonl,line=8,col=');
    expect(strict.stdout).toContain('unknown Event kind "InterruptEvent" in the interface profile');
    const bad = runAction({ path: "today.jsonl", profile: "newest" }, directory);
    expect(bad.code).toBe(2);
  });

  it("an empty path, a bad sequence value, or a missing file: exit code 2 with a clear annotation", () => {
    const directory = recordings();
    expect(runAction({ path: " \n \n" }, directory)).toMatchObject({
      code: 2,
      stdout: "::error title=acs-validate::the path input is empty: give files, directories or globs, one per line\n",
      outputs: "exit-code=2\n",
    });
    expect(runAction({ path: "recordings", sequence: "yes" }, directory)).toMatchObject({ code: 2, stdout: '::error title=acs-validate::the sequence input must be true or false, got "yes"\n' });
    const missing = runAction({ path: "nothing.jsonl" }, directory);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toContain("::error file=nothing.jsonl,title=acs-validate input/not-found::no such file or directory");
  });

  it("a path beginning with a dash is a path, not an option", () => {
    const directory = tempDir();
    writeFiles(directory, { "-odd.jsonl": jsonl(trajectory()) });
    expect(runAction({ path: "-odd.jsonl" }, directory).code).toBe(0);
  });
});

describe("the action's install of @acs-toolkit/validator", () => {
  /** The npm registry unreachable (nothing listens on port 9): npm fails at once. */
  const offline = { npm_config_registry: "http://127.0.0.1:9/", npm_config_fetch_retries: "0", npm_config_cache: "" };

  function runInstalling(inputs: Record<string, string>, cwd: string, env: Record<string, string>) {
    const values: Record<string, string> = { ...defaults(), ...inputs, command: "" };
    const output = path.join(tempDir(), "github-output");
    const full: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: tempDir(), GITHUB_OUTPUT: output, RUNNER_TEMP: tempDir(), ...env };
    for (const [variable, input] of Object.entries(stepEnv)) full[variable] = values[input] ?? "";
    if (!full.npm_config_cache) full.npm_config_cache = path.join(tempDir(), "npm-cache");
    const result = spawnSync("bash", ["-e", "-c", script], { cwd, env: full, encoding: "utf8", timeout: 60_000 });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr, outputs: readFileSync(output, "utf8") };
  }

  it("a failed install is exit code 2 with an ::error annotation, never exit code 1 (invalid recordings)", () => {
    const result = runInstalling({ path: "recordings", version: "0.1.0" }, recordings(), offline);
    expect(result.code).toBe(2);
    expect(result.outputs).toBe("exit-code=2\n");
    expect(result.stdout).toBe(
      "::error title=acs-validate::cannot install @acs-toolkit/validator@0.1.0 with npm (its log is above): check the version input and that the runner reaches the npm registry, or leave version empty to run the bundled validator\n",
    );
    expect(result.stderr).toMatch(/npm (error|ERR!)/);
  });

  it("installs the version given, then runs its acs-validate on the paths", () => {
    // A stand-in package (no dependencies, so no registry): its acs-validate prints its arguments.
    const source = tempDir();
    writeFiles(source, {
      "package.json": JSON.stringify({ name: "@acs-toolkit/validator", version: "9.9.9", bin: { "acs-validate": "bin.js" } }),
      "bin.js": "#!/usr/bin/env node\nconsole.log('stand-in', process.argv.slice(2).join(' '));\n",
    });
    const result = runInstalling({ path: "recordings", version: `file:${source}` }, recordings(), offline);
    expect(result.stderr).toBe("");
    expect(result).toMatchObject({ code: 0, outputs: "exit-code=0\n" });
    expect(result.stdout).toBe("stand-in --format github --profile releases --unknown-kinds error --unknown-properties error -- recordings\n");
  });

  it("installs nothing by default: an empty version runs the bundled validator", () => {
    expect(defaults().version).toBe("");
  });
});
