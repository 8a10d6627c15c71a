/**
 * The four output formats, as snapshots (test/__snapshots__/cli-output.*), and what every format
 * shares: the summary, --max-errors, the options mirroring the library, colours, progress.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseJUnit } from "@acs-toolkit/cli-kit/testing/junit";
import { beforeAll, describe, expect, it } from "vitest";
import { jsonl, runCli, tempDir, trajectory, writeFiles } from "./cli-support.js";
import { example } from "./support.js";

/** Inputs with something of everything: schema errors, sequence errors, a warning, a valid file, a missing one. */
function fixtures(): string {
  const directory = tempDir();
  const events = trajectory();
  events[2]!.action.kind = "TerminalActon";
  events[3]!.action_id = "00000000-0000-4000-8000-0000000000aa";
  events[6]!.llm_message.cache_enabled = true;
  const tab = example("ActionEvent", "BrowserClickAction");
  tab.action.index = -1;
  tab.id = "00000000-0000-4000-8000-000000000101";
  tab.timestamp = "2026-02-05T11:25:00";
  const page = { items: trajectory().slice(0, 3).concat([tab]), next_page_id: null };
  delete page.items[1]!.llm_message;
  writeFiles(directory, {
    "recordings/conversation.jsonl": jsonl(events),
    "recordings/page.json": JSON.stringify(page, null, 2),
    "recordings/valid.jsonl": jsonl(trajectory()),
  });
  return directory;
}

const argv = ["recordings/conversation.jsonl", "recordings/page.json", "recordings/valid.jsonl", "recordings/missing.jsonl"];
let cwd: string;
beforeAll(() => {
  cwd = fixtures();
});

describe("snapshots of each format", () => {
  it("human", async () => {
    const result = await runCli(argv, { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("");
    await expect(result.stdout).toMatchFileSnapshot("__snapshots__/cli-output.human.txt");
  });

  it("json: one document, every issue with file, line, column, pointer, rule, index, event id and fragment", async () => {
    const result = await runCli([...argv, "--format", "json"], { cwd });
    expect(result.code).toBe(2);
    const output = JSON.parse(result.stdout) as { ok: boolean; exitCode: number; issues: unknown[]; summary: Record<string, unknown> };
    expect(output).toMatchObject({ version: 1, ok: false, exitCode: 2 });
    await expect(result.stdout).toMatchFileSnapshot("__snapshots__/cli-output.json");
  });

  it("junit: a testsuite per input, a failing testcase per error, an error element for an unreadable input", async () => {
    const result = await runCli([...argv, "--format", "junit"], { cwd });
    expect(result.code).toBe(2);
    const doc = parseJUnit(result.stdout);
    expect(doc.testsuites).toMatchObject({ "@name": "acs-validate", "@tests": "6", "@failures": "4", "@errors": "1", "@skipped": "0" });
    // The counts agree with the JSON report's and with the elements a CI server reads.
    const json = JSON.parse((await runCli([...argv, "--format", "json"], { cwd })).stdout) as { inputs: { file: string; errors: number; unreadable?: unknown }[] };
    const suites = doc.testsuites.testsuite as any[];
    expect(suites.map((s) => s["@name"])).toEqual(json.inputs.map((i) => i.file));
    for (const [index, suite] of suites.entries()) {
      const input = json.inputs[index]!;
      const failed = suite.testcase.filter((c: any) => c.failure !== undefined).length;
      const broken = suite.testcase.filter((c: any) => c.error !== undefined).length;
      expect([Number(suite["@failures"]), Number(suite["@errors"]), Number(suite["@tests"])]).toEqual([failed, broken, suite.testcase.length]);
      expect(failed + broken).toBe(input.unreadable ? 1 : input.errors);
    }
    expect(suites[0].testcase[0].failure).toMatchObject({ "@type": "unknownKind", "@message": '/action/kind: unknown Action kind "TerminalActon"; did you mean "TerminalAction"?' });
    expect(suites[0]["system-out"]).toMatch(/^recordings\/conversation\.jsonl:7 {2}\/llm_message\/cache_enabled {2}warning: /);
    await expect(result.stdout).toMatchFileSnapshot("__snapshots__/cli-output.junit.xml");
  });

  it("junit: a hostile file name comes back as written, a control character as \\uXXXX", async () => {
    const directory = tempDir();
    const name = `a<b>&"c"'d' ]]>\te\u0007.jsonl`;
    writeFiles(directory, { [name]: "{not json\n" });
    const result = await runCli([name, "--format", "junit"], { cwd: directory });
    expect(result.code).toBe(1);
    const suite = parseJUnit(result.stdout).testsuites.testsuite[0];
    const shown = name.replace("\u0007", "\\u0007");
    expect(suite["@name"]).toBe(shown);
    expect(suite.testcase[0]).toMatchObject({ "@classname": shown, "@file": shown, "@line": "1" });
    expect(suite.testcase[0].failure["#text"].startsWith(`${shown}:1`)).toBe(true);
  });

  it("github: an annotation per issue on its file, line and column, then the summary", async () => {
    const result = await runCli([...argv, "--format", "github"], { cwd });
    expect(result.code).toBe(2);
    await expect(result.stdout).toMatchFileSnapshot("__snapshots__/cli-output.github.txt");
  });

  it("every format reports the same issues", async () => {
    const json = JSON.parse((await runCli([...argv, "--format", "json"], { cwd })).stdout) as { issues: { severity: string; line?: number }[] };
    const github = (await runCli([...argv, "--format", "github"], { cwd })).stdout.split("\n").filter((l) => l.startsWith("::"));
    const human = (await runCli(argv, { cwd })).stdout.split("\n").filter((l) => l.startsWith("recordings/"));
    expect(github).toHaveLength(json.issues.length);
    expect(human).toHaveLength(json.issues.length);
    expect(github.filter((l) => l.startsWith("::warning")).length).toBe(json.issues.filter((i) => i.severity === "warning").length);
  });
});

describe("the summary", () => {
  it("events per kind, errors and warnings per rule, inputs with their format and counts", async () => {
    const output = JSON.parse((await runCli([...argv, "--format", "json"], { cwd })).stdout) as Record<string, any>;
    expect(output.summary).toEqual({
      inputs: 4,
      events: 18,
      kinds: { SystemPromptEvent: 3, MessageEvent: 5, ActionEvent: 6, ObservationEvent: 2, AgentErrorEvent: 2 },
      errors: 5,
      warnings: 1,
      errorsByRule: { unknownKind: 1, "sequence/orphan-observation": 1, required: 1, minimum: 1, "input/not-found": 1 },
      warningsByRule: { legacyField: 1 },
      truncated: false,
      skippedInputs: 0,
    });
    expect(output.inputs.map((i: Record<string, unknown>) => [i.file, i.format, i.events, i.errors, i.warnings])).toEqual([
      ["recordings/conversation.jsonl", "jsonl", 7, 2, 1],
      ["recordings/page.json", "page", 4, 2, 0],
      ["recordings/valid.jsonl", "jsonl", 7, 0, 0],
      ["recordings/missing.jsonl", undefined, 0, 1, 0],
    ]);
  });

  it("a valid run: exit code 0, a short summary", async () => {
    const result = await runCli(["recordings/valid.jsonl"], { cwd });
    expect(result).toEqual({
      code: 0,
      stderr: "",
      stdout:
        "Summary\n  inputs    1\n  events    7: ActionEvent 2, MessageEvent 2, AgentErrorEvent 1, ObservationEvent 1, SystemPromptEvent 1\n  errors    0\n  warnings  0\n✔ valid (exit code 0)\n",
    });
  });

  it("warnings alone leave the exit code at 0", async () => {
    const events = trajectory().slice(1);
    const directory = tempDir();
    writeFiles(directory, { "t.jsonl": jsonl(events) });
    const result = await runCli(["t.jsonl"], { cwd: directory });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      "t.jsonl:1  /kind  warning: the trajectory starts with a MessageEvent, not a SystemPromptEvent: it is read as a fragment of a longer conversation, so references to events before it are warnings  (sequence/system-prompt-not-first)",
    );
    expect(result.stdout).toContain("✔ valid (exit code 0)");
  });
});

describe("options", () => {
  it("--max-errors stops after that many errors and says so; later inputs are not read", async () => {
    const output = JSON.parse((await runCli([...argv, "--format", "json", "--max-errors", "2"], { cwd })).stdout) as Record<string, any>;
    expect(output.issues.filter((i: { severity: string }) => i.severity === "error")).toHaveLength(2);
    expect(output.summary).toMatchObject({ errors: 2, truncated: true, skippedInputs: 3 });
    expect(output.exitCode).toBe(1);
    const human = await runCli([...argv, "--max-errors", "2"], { cwd });
    expect(human.stdout).toContain("  stopped after 2 errors (--max-errors); 3 inputs not read\n");
  });

  it("--max-errors stops reading a large input early", async () => {
    const bad = trajectory();
    bad[2]!.action.kind = "TerminalActon";
    const many = Array.from({ length: 2000 }, (_, i) => bad.map((e) => ({ ...e, id: `${e.id.slice(0, 24)}${String(i * 10 + Number(e.id.slice(-2))).padStart(12, "0")}` }))).flat();
    const directory = tempDir();
    writeFiles(directory, { "big.jsonl": jsonl(many) });
    const output = JSON.parse((await runCli(["big.jsonl", "--format", "json", "--max-errors", "3", "--no-sequence"], { cwd: directory })).stdout) as Record<string, any>;
    expect(output.summary.errors).toBe(3);
    expect(output.summary.events).toBeLessThan(many.length);
  });

  it("--unknown-kinds warn and --unknown-properties warn accept events of a newer version, with warnings", async () => {
    const events = trajectory();
    events[2]!.action = { kind: "BrowserDragAction", from: 1, to: 2 };
    events[6]!.new_field = true;
    const directory = tempDir();
    writeFiles(directory, { "newer.jsonl": jsonl(events) });
    const strict = JSON.parse((await runCli(["newer.jsonl", "--format", "json"], { cwd: directory })).stdout) as Record<string, any>;
    expect(strict.summary).toMatchObject({ errors: 2, errorsByRule: { unknownKind: 1, unknownProperty: 1 } });
    const lenient = await runCli(["newer.jsonl", "--format", "json", "--unknown-kinds", "warn", "--unknown-properties", "warn"], { cwd: directory });
    expect(lenient.code).toBe(0);
    expect((JSON.parse(lenient.stdout) as Record<string, any>).summary).toMatchObject({ errors: 0, warnings: 2, warningsByRule: { unknownKind: 1, unknownProperty: 1 } });
  });
});

describe("--profile", () => {
  it("releases (the default) accepts what a later release wrote; interface and an earlier release reject it, naming the release", async () => {
    const events = trajectory();
    events.push({ id: "00000000-0000-4000-8000-0000000000f1", timestamp: "2026-05-20T15:31:44.87012", source: "user", parent_id: events[6]!.id, kind: "InterruptEvent" });
    const directory = tempDir();
    writeFiles(directory, { "today.jsonl": jsonl(events) });
    for (const args of [[], ["--profile", "releases"], ["--profile", "1.31.0"]]) expect((await runCli(["today.jsonl", ...args], { cwd: directory })).code, args.join(" ")).toBe(0);
    const strict = await runCli(["today.jsonl", "--profile", "interface"], { cwd: directory });
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('today.jsonl:8  /kind  unknown Event kind "InterruptEvent" in the interface profile: it came with OpenHands 1.23.0 and is not in the interface 0.1.0 catalogue  (unknownKind)');
    expect(strict.stdout).toContain("today.jsonl:8  /parent_id  is not a property of InterruptEvent in the interface profile");
    const older = JSON.parse((await runCli(["today.jsonl", "--profile", "1.23.0", "--format", "json"], { cwd: directory })).stdout) as Record<string, any>;
    expect(older.issues.map((i: Record<string, unknown>) => [i.line, i.pointer, i.message])).toEqual([[8, "/parent_id", "is not a property of InterruptEvent in profile 1.23.0: it came with OpenHands 1.31.0"]]);
    const lenient = await runCli(["today.jsonl", "--profile", "interface", "--unknown-kinds", "warn", "--unknown-properties", "warn"], { cwd: directory });
    expect(lenient.code).toBe(0);
  });
});

describe("terminal niceties", () => {
  it("colours with --color, or FORCE_COLOR; none when NO_COLOR, --no-color, or not a terminal", async () => {
    const args = ["recordings/conversation.jsonl"];
    expect((await runCli(args, { cwd })).stdout).not.toContain("\x1b[");
    expect((await runCli([...args, "--color"], { cwd })).stdout).toContain("\x1b[31m");
    expect((await runCli(args, { cwd, env: { FORCE_COLOR: "1" } })).stdout).toContain("\x1b[31m");
    expect((await runCli(args, { cwd, tty: 120 })).stdout).toContain("\x1b[31m");
    expect((await runCli(args, { cwd, tty: 120, env: { NO_COLOR: "1" } })).stdout).not.toContain("\x1b[");
    expect((await runCli([...args, "--no-color"], { cwd, tty: 120 })).stdout).not.toContain("\x1b[");
  });

  it("a progress line on standard error, on a terminal only, not in CI nor piped, cleared at the end", async () => {
    const pace = { minBytes: 0, everyMs: 0 };
    const args = ["recordings/valid.jsonl", "--format", "json"];
    const shown = await runCli(args, { cwd, tty: 100, progressPace: pace });
    const line = new RegExp(String.raw`\r\x1b\[2Krecordings/valid\.jsonl {2}\[#+\.*\] +\d+% {2}[\d.]+ kB / [\d.]+ kB {2}[\d.]+ (kB|MB|bytes)/s {2}\d+ events`);
    expect(shown.stderr).toMatch(line);
    expect(shown.stderr.endsWith("\r\x1b[2K")).toBe(true);
    expect(JSON.parse(shown.stdout)).toMatchObject({ ok: true });
    expect((await runCli(args, { cwd, tty: 100, progressPace: pace, env: { CI: "true" } })).stderr).toBe("");
    expect((await runCli([...args, "--no-progress"], { cwd, tty: 100, progressPace: pace })).stderr).toBe("");
    expect((await runCli(args, { cwd, progressPace: pace })).stderr).toBe("");
    expect((await runCli(args, { cwd, tty: 100, pipedStdout: true, progressPace: pace })).stderr).toBe("");
    expect((await runCli([...args, "--progress"], { cwd, progressPace: pace })).stderr).toContain("recordings/valid.jsonl  [");
    // Inputs under 8 MB are read before anyone would look at a progress line.
    expect((await runCli(args, { cwd, tty: 100 })).stderr).toBe("");
  });

  it("input that would drive the terminal is shown inert", async () => {
    const events = trajectory();
    events[2]!.action.kind = "Terminal\x1b[2J\u202eAction";
    const directory = tempDir();
    // A raw escape character (not JSON), and a right-to-left override inside a kind (valid JSON).
    writeFiles(directory, { "raw.jsonl": jsonl(events).replace("\\u001b", "\x1b"), "bidi.jsonl": jsonl(events).replace("\\u001b", "") });
    const result = await runCli(["raw.jsonl", "bidi.jsonl"], { cwd: directory, tty: 100, env: { NO_COLOR: "1" } });
    expect(result.stdout).toContain("raw.jsonl:3  is not valid JSON");
    expect(result.stdout).toContain('bidi.jsonl:3  /action/kind  unknown Action kind "Terminal[2J·Action"');
    expect(result.stdout).not.toContain("\x1b");
    expect(result.stdout).not.toContain("\u202e");
  });
});

describe("the github format", () => {
  it("escapes what workflow commands give meaning to, in file names and messages", async () => {
    const events = trajectory();
    events[2]!.action.kind = "100%\nfake::error";
    const directory = tempDir();
    writeFiles(directory, { "a,b:c.jsonl": jsonl(events) });
    const result = await runCli(["a,b:c.jsonl", "--format", "github"], { cwd: directory });
    const annotation = result.stdout.split("\n")[0]!;
    expect(annotation).toMatch(/^::error file=a%2Cb%3Ac\.jsonl,line=3,col=\d+,title=acs-validate unknownKind::\/action\/kind: unknown Action kind "100%25\\nfake::error"; expected one of /);
    expect(result.stdout.split("\n").filter((l) => l.startsWith("::"))).toHaveLength(1);
  });

  it("appends a Markdown summary to $GITHUB_STEP_SUMMARY", async () => {
    const summary = path.join(tempDir(), "summary.md");
    await runCli([...argv, "--format", "github"], { cwd, env: { GITHUB_STEP_SUMMARY: summary } });
    await expect(readFileSync(summary, "utf8")).toMatchFileSnapshot("__snapshots__/cli-output.step-summary.md");
  });
});
