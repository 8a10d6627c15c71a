/** Broken inputs and command lines: a clear message and the documented exit code, never a crash or a hang. */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { jsonl, runCli, tempDir, trajectory, writeFiles } from "./cli-support.js";

interface Output {
  issues: { severity: string; file: string; line?: number; column?: number; pointer?: string; rule: string; message: string; fragment?: string }[];
  inputs: { file: string; events: number; unreadable?: { rule: string; message: string } }[];
}

async function check(files: Record<string, string | Buffer>, argv: string[] = Object.keys(files), options: Parameters<typeof runCli>[1] = {}) {
  const directory = tempDir();
  writeFiles(directory, files);
  const human = await runCli(argv, { cwd: directory, ...options });
  const json = await runCli([...argv, "--format", "json"], { cwd: directory, ...options });
  return { code: human.code, human: human.stdout, stderr: human.stderr, ...(JSON.parse(json.stdout) as Output) };
}

const events = () => trajectory();

describe("content that is not a valid recording (exit code 1)", () => {
  it("a truncated JSONL line: a json error on its line and column; the other lines are still checked", async () => {
    const lines = jsonl(events()).split("\n");
    lines[3] = lines[3]!.slice(0, 120);
    const result = await check({ "t.jsonl": lines.join("\n") });
    expect(result.code).toBe(1);
    expect(result.issues.map((i) => [i.rule, i.line, i.column])).toEqual([["json", 4, 121]]);
    expect(result.issues[0]!.message).toMatch(/^is not valid JSON: (Unterminated string|Unexpected end|Expected)/);
    expect(result.inputs[0]!.events).toBe(7);
    expect(result.human).toContain("t.jsonl:4  is not valid JSON: ");
  });

  it("a broken first line: still JSONL (the second line tells), the error on line 1", async () => {
    const lines = jsonl(events()).split("\n");
    lines[0] = lines[0]!.slice(0, 50);
    const result = await check({ "t.jsonl": lines.join("\n") });
    expect(result.code).toBe(1);
    expect(result.issues.map((i) => [i.rule, i.line])).toEqual([["json", 1]]);
    expect(result.inputs[0]!.events).toBe(7);
  });

  it("a truncated file ending mid-line: the last line is a json error", async () => {
    const text = jsonl(events());
    const result = await check({ "t.jsonl": text.slice(0, text.length - 40) });
    expect(result.code).toBe(1);
    expect(result.issues.map((i) => [i.rule, i.line])).toEqual([["json", 7]]);
  });

  it("a truncated JSON array: says so, where the input ends; the elements before are checked", async () => {
    const text = JSON.stringify(events(), null, 2);
    const result = await check({ "t.json": text.slice(0, Math.floor(text.length * 0.6)) });
    expect(result.code).toBe(1);
    expect(result.issues.map((i) => i.rule)).toEqual(["json"]);
    expect(result.issues[0]!.message).toMatch(/^is not valid JSON: the input ends inside element \d of the JSON array \(it starts at line \d+\): the file is truncated$/);
    expect(result.issues[0]!.line).toBe(text.slice(0, Math.floor(text.length * 0.6)).split("\n").length);
    expect(result.inputs[0]!.events).toBeGreaterThan(0);
  });

  it("a broken element in an array: an error at it, the rest checked", async () => {
    const text = `[${jsonl(events()).trim().split("\n").map((l, i) => (i === 6 ? l.replace('"kind":"MessageEvent"', '"kind":MessageEvent') : l)).join(",\n")}]`;
    const result = await check({ "t.json": text });
    expect(result.issues.map((i) => [i.rule, i.line, i.pointer])).toEqual([["json", 7, "/6"]]);
    expect(result.inputs[0]!.events).toBe(7);
  });

  it("an EventPage with a wrong next_page_id: the error is on its member", async () => {
    const text = JSON.stringify({ items: events(), next_page_id: 5 }, null, 2);
    const result = await check({ "page.json": text });
    expect(result.issues.map((i) => [i.rule, i.pointer, i.fragment])).toEqual([["type", "/next_page_id", '"next_page_id": 5']]);
    expect(text.split("\n")[result.issues[0]!.line! - 1]).toBe('  "next_page_id": 5');
  });

  it("a JSONL line longer than the limit: reported on its line and skipped, the next lines read", async () => {
    const lines = jsonl(events()).split("\n");
    lines.splice(2, 0, JSON.stringify({ kind: "PauseEvent", padding: "x".repeat(5000) }));
    const result = await check({ "t.jsonl": lines.join("\n") }, ["t.jsonl"], { limits: { maxLineBytes: 4096, maxValueChars: 1 << 20, peekBytes: 1 << 20 } });
    expect(result.issues.map((i) => [i.rule, i.line, i.message])).toEqual([["json", 3, "is not valid JSON: the line is longer than 4 kB: it is not read"]]);
    expect(result.inputs[0]!.events).toBe(8);
  });
});

describe("an event directory with problems", () => {
  const directory = (names: [number, number, string?][]) => {
    const all = events();
    return Object.fromEntries(names.map(([fileIndex, eventIndex, id]) => [`events/event-${String(fileIndex).padStart(5, "0")}-${id ?? all[eventIndex]!.id}.json`, JSON.stringify(all[eventIndex])]));
  };

  it("gaps in the indices: an error at the file after each gap, naming what is missing", async () => {
    const result = await check(directory([[0, 0], [1, 1], [4, 2], [5, 3], [7, 4]]), ["events"]);
    expect(result.code).toBe(1);
    expect(result.issues.map((i) => [i.rule, i.file.replace(/-[0-9a-f]{8}-.*$/, ""), i.message.replace(/ \(the previous.*$/, "")])).toEqual([
      ["directory/index-gap", "events/event-00004", "the events with indices 2 to 3 are missing before this file"],
      ["directory/index-gap", "events/event-00007", "the event with index 6 is missing before this file"],
    ]);
    expect(result.issues[1]!.message).toMatch(/\(the previous file is event-00005-.*\.json\): the trajectory is incomplete$/);
    expect(result.human).toContain("events/event-00004-");
  });

  it("a directory that does not start at index 0", async () => {
    const result = await check(directory([[1, 0], [2, 1]]), ["events"]);
    expect(result.issues.map((i) => i.message)).toEqual(["the event with index 0 is missing before this file (indices start at 00000): the trajectory is incomplete"]);
  });

  it("two files with one index, a file name that disagrees with its event's id, a misnamed file", async () => {
    const files = directory([[0, 0], [1, 1], [1, 2], [2, 3, "00000000-0000-4000-8000-0000000000ff"]]);
    files["events/event-3-bad.json"] = "{}";
    const result = await check(files, ["events"]);
    expect(result.code).toBe(1);
    expect(result.issues.map((i) => [i.severity, i.rule])).toEqual([
      ["warning", "directory/unrecognised-file"],
      ["error", "directory/duplicate-index"],
      ["error", "directory/id-mismatch"],
    ]);
    expect(result.issues[0]!.message).toBe("event-3-bad.json is not named event-NNNNN-<id>.json: it is not read as an event of this trajectory");
    expect(result.issues[2]!.message).toBe('the file name gives the id "00000000-0000-4000-8000-0000000000ff", the event has "00000000-0000-4000-8000-000000000004"');
  });

  it("an event file that is empty, binary or not JSON: an error for that event, the others checked", async () => {
    const files: Record<string, string | Buffer> = directory([[0, 0], [1, 1]]);
    const all = events();
    files[`events/event-00002-${all[2]!.id}.json`] = "";
    files[`events/event-00003-${all[3]!.id}.json`] = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]);
    files[`events/event-00004-${all[4]!.id}.json`] = '{"id": ';
    const result = await check(files, ["events"]);
    expect(result.code).toBe(1);
    expect(result.issues.filter((i) => i.rule === "json").map((i) => i.message.replace(/:.*$/, ""))).toEqual([
      "is not valid JSON",
      "is not valid JSON",
      "is not valid JSON",
    ]);
    expect(result.issues.filter((i) => i.rule === "json").map((i) => i.message)).toEqual([
      "is not valid JSON: is empty: an event file holds one event",
      "is not valid JSON: is a binary file, not JSON",
      expect.stringMatching(/^is not valid JSON: (Unexpected end of JSON input|Expected)/),
    ]);
  });
});

describe("inputs that are not recordings at all (exit code 2)", () => {
  it.each([
    ["an empty file", "", "input/empty", "is empty: there is no event to validate"],
    ["a file of whitespace", " \n\n\t\n", "input/empty", "holds only whitespace: there is no event to validate"],
    ["a text file", "hello world\nthis is not JSON\n", "input/not-json", 'is not JSON: it starts with "hello world\\nthis is not "; expected an event, an array or page of events, or JSONL'],
    ["a number", "42\n", "input/not-json", 'is not JSON: it starts with "42\\n"; expected an event, an array or page of events, or JSONL'],
    ["a binary file", Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(2048)]), "input/binary", "is a binary file, not JSON"],
    ["a binary file starting with {", Buffer.concat([Buffer.from("{"), Buffer.alloc(16), randomBytes(100)]), "input/binary", "is a binary file, not JSON"],
    ["UTF-16 text", Buffer.from(`\uFEFF${jsonl(trajectory())}`, "utf16le"), "input/binary", "is UTF-16 text: events are read as UTF-8 (convert the file first)"],
    ["a corrupt gzip file", Buffer.from([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3, 4, 5, 6, 7, 8]), "input/unreadable", expect.stringMatching(/^is not a readable gzip file: /)],
  ])("%s", async (_name, content, rule, message) => {
    const result = await check({ input: content });
    expect(result.code).toBe(2);
    expect(result.issues).toEqual([{ severity: "error", file: "input", rule, message }]);
    expect(result.inputs[0]!.unreadable).toEqual({ rule, message });
    expect(result.human).toContain("✖ an input could not be read (exit code 2)");
  });

  it("a missing file", async () => {
    const result = await check({}, ["missing.jsonl"]);
    expect(result.code).toBe(2);
    expect(result.issues).toEqual([{ severity: "error", file: "missing.jsonl", rule: "input/not-found", message: "no such file or directory" }]);
    expect(result.human).toMatch(/^missing\.jsonl {2}no such file or directory {2}\(input\/not-found\)$/m);
  });

  it("empty standard input", async () => {
    const result = await runCli(["-"], { stdin: "" });
    expect(result.code).toBe(2);
    expect(result.stdout).toContain("<stdin>  is empty: there is no event to validate  (input/empty)");
  });

  it("2 wins over 1: an unreadable input and an invalid one", async () => {
    const bad = events();
    bad[2]!.action.kind = "TerminalActon";
    const result = await check({ "invalid.jsonl": jsonl(bad), "empty.jsonl": "" });
    expect(result.code).toBe(2);
    expect(result.issues.map((i) => i.rule)).toEqual(["unknownKind", "input/empty"]);
  });
});

describe("the command line (exit code 2, message on standard error)", () => {
  it.each([
    [[], 'no input: give files, directories or globs, or "-" for standard input'],
    [["--frobnicate", "x"], "unknown option --frobnicate"],
    [["--fromat", "json", "x"], "unknown option --fromat (did you mean --format?)"],
    [["--sequence", "x"], "unknown option --sequence (did you mean --no-sequence?)"],
    [["--format", "xml", "x"], '--format must be one of human, json, junit, github, html, got "xml"'],
    [["--unknown-kinds", "ignore", "x"], '--unknown-kinds must be one of error, warn, got "ignore"'],
    [["--profile", "latest", "x"], '--profile must be releases, interface or a release from 1.9.0 on (such as 1.11.5), got "latest"'],
    [["--profile", "1.8.9", "x"], '--profile must be releases, interface or a release from 1.9.0 on (such as 1.11.5), got "1.8.9"'],
    [["--max-errors", "0", "x"], '--max-errors must be a whole number of at least 1, got "0"'],
    [["--max-errors", "ten", "x"], '--max-errors must be a whole number of at least 1, got "ten"'],
    [["--format"], "option --format needs a value"],
  ])("%j", async (argv, message) => {
    const result = await runCli(argv);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`acs-validate: ${message}; see acs-validate --help\n`);
  });

  it("--help documents the formats, the options and the exit codes", async () => {
    const result = await runCli(["--help"]);
    expect(result.code).toBe(0);
    for (const text of ["--format <human|json|junit|github|html>", "--no-sequence", "--profile <name>", "--unknown-kinds", "--unknown-properties", "--max-errors", "Exit codes:", "0  every input is valid", "2  a usage error"]) {
      expect(result.stdout).toContain(text);
    }
  });

  it("--version prints the package's version", async () => {
    const { version } = (await import("../package.json", { with: { type: "json" } })).default;
    expect(await runCli(["--version"])).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });
});
