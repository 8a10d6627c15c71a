/** acs-validate reads every input shape, recognised by content: files, stdin, directories, globs. */
import { mkdirSync, symlinkSync } from "node:fs";
import { gzipSync } from "node:zlib";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { eventDirectoryFixture, jsonl, repoDir, runCli, tempDir, trajectory, writeFiles } from "./cli-support.js";
import { corpusFiles } from "./support.js";

interface JsonOutput {
  issues: { severity: string; file: string; line?: number; column?: number; pointer?: string; rule: string; message: string; index?: number; eventId?: string }[];
  inputs: { file: string; format?: string; events: number; errors: number; warnings: number; unreadable?: { rule: string; message: string } }[];
  summary: { events: number; kinds: Record<string, number>; errors: number; warnings: number; errorsByRule: Record<string, number> };
  exitCode: number;
}

async function json(argv: string[], options: Parameters<typeof runCli>[1] = {}): Promise<JsonOutput & { code: number }> {
  const result = await runCli([...argv, "--format", "json"], options);
  return { ...(JSON.parse(result.stdout) as JsonOutput), code: result.code };
}

describe("the recorded corpus passes", () => {
  it("the whole fixtures directory: 13 recordings, each read by content, exit code 0", async () => {
    const result = await json(["fixtures/openhands-recorded"], { cwd: repoDir });
    expect(result.code).toBe(0);
    expect(result.issues).toEqual([]);
    expect(result.inputs.map((i) => [path.basename(i.file), i.format])).toEqual(
      corpusFiles.map((f) => [f, f.endsWith(".jsonl") ? "jsonl" : "event"]),
    );
    expect(result.summary.events).toBe(22);
  });

  it.each(corpusFiles)("%s alone, with every rule on", async (file) => {
    const result = await json([`fixtures/openhands-recorded/${file}`], { cwd: repoDir });
    expect(result).toMatchObject({ code: 0, issues: [] });
  });

  it("the recorded conversation as the reference stores it: a directory of event files, in index order", async () => {
    for (const target of [eventDirectoryFixture, path.join(eventDirectoryFixture, "events")]) {
      const result = await json([target], { cwd: repoDir });
      expect(result).toMatchObject({ code: 0, issues: [] });
      expect(result.inputs).toEqual([expect.objectContaining({ file: "packages/validator/test/fixtures/conversation-2026-02-05/events", format: "directory", events: 8 })]);
      expect(result.summary.kinds).toEqual({ SystemPromptEvent: 1, MessageEvent: 3, ActionEvent: 2, ObservationEvent: 2 });
    }
  });
});

/** The trajectory with its first action's kind misspelt (event 2). */
function broken() {
  const events = trajectory();
  events[2]!.action.kind = "TerminalActon";
  return events;
}

describe("every input shape, recognised by content", () => {
  const events = trajectory();
  const shapes: [string, string, string | Buffer, string][] = [
    ["JSONL", "t.jsonl", jsonl(events), "jsonl"],
    ["JSONL with CRLF, blank lines and a BOM", "t.jsonl", `\uFEFF${jsonl(events).replace(/\n/g, "\r\n\r\n")}`, "jsonl"],
    ["JSONL without a final newline", "t.jsonl", jsonl(events).trimEnd(), "jsonl"],
    ["JSONL in a .json file", "t.json", jsonl(events), "jsonl"],
    ["a JSON array", "t.json", JSON.stringify(events), "array"],
    ["an indented JSON array in a .jsonl file", "t.jsonl", JSON.stringify(events, null, 2), "array"],
    ["an EventPage", "page.json", JSON.stringify({ items: events, next_page_id: null }, null, 2), "page"],
    ["an EventPage on one line", "page.json", JSON.stringify({ items: events, next_page_id: "abc" }), "page"],
    ["JSONL of EventPages", "pages.jsonl", jsonl([{ items: events.slice(0, 3) }, { items: events.slice(3), next_page_id: null }]), "page"],
    ["gzip-compressed JSONL", "t.jsonl.gz", gzipSync(jsonl(events)), "jsonl"],
    ["a gzip-compressed array without extension", "t", gzipSync(JSON.stringify(events)), "array"],
  ];

  it.each(shapes)("%s", async (_name, file, content, format) => {
    const directory = tempDir();
    writeFiles(directory, { [file]: content });
    const result = await json([file], { cwd: directory });
    expect(result.issues).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.inputs).toEqual([expect.objectContaining({ file, format, events: events.length })]);
  });

  it("line numbers stay exact across reads and decode windows, long lines included", async () => {
    const lines = jsonl(events).trim().split("\n");
    const long = { ...events[6]!, llm_message: { role: "assistant", content: [{ type: "text", text: "x".repeat(300_000) }] } };
    const all = Array.from({ length: 3000 }, (_, i) => lines[i % lines.length]!);
    all.splice(1234, 0, JSON.stringify(long));
    const bad = { ...events[2]!, action: { ...events[2]!.action, kind: "TerminalActon" } };
    const badAt = 2500;
    all.splice(badAt, 0, JSON.stringify(bad));
    const directory = tempDir();
    writeFiles(directory, { "big.jsonl": `${all.join("\n")}\n`, "crlf.jsonl": `${all.join("\r\n")}\r\n` });
    for (const file of ["big.jsonl", "crlf.jsonl"]) {
      const result = await json([file, "--no-sequence"], { cwd: directory });
      expect(result.summary.events).toBe(all.length);
      expect(result.issues.map((i) => [i.rule, i.line])).toEqual([["unknownKind", badAt + 1]]);
    }
  });

  it("one event, indented or on one line, is checked alone (no sequence rule applies to a lone event)", async () => {
    const observation = trajectory()[3]!;
    const directory = tempDir();
    writeFiles(directory, { "one.json": JSON.stringify(observation, null, 2), "line.json": JSON.stringify(observation) });
    const result = await json(["one.json", "line.json"], { cwd: directory });
    expect(result).toMatchObject({ code: 0, issues: [] });
    expect(result.inputs.map((i) => [i.file, i.format, i.events])).toEqual([
      ["one.json", "event", 1],
      ["line.json", "event", 1],
    ]);
  });

  it("standard input, as JSONL and as an array", async () => {
    for (const text of [jsonl(events), JSON.stringify(events, null, 1)]) {
      const result = await json(["-"], { stdin: text });
      expect(result).toMatchObject({ code: 0, issues: [] });
      expect(result.inputs).toEqual([expect.objectContaining({ file: "<stdin>", events: events.length })]);
    }
  });

  it.each<[string, string, string, { file: string; pointer: string; line?: number }]>([
    ["JSONL", "t.jsonl", jsonl(broken()), { file: "t.jsonl", line: 3, pointer: "/action/kind" }],
    ["an indented array", "t.json", JSON.stringify(broken(), null, 2), { file: "t.json", pointer: "/2/action/kind" }],
    ["an EventPage", "page.json", JSON.stringify({ items: broken() }, null, 2), { file: "page.json", pointer: "/items/2/action/kind" }],
    ["JSONL of pages", "pages.jsonl", jsonl([{ items: broken().slice(0, 2) }, { items: broken().slice(2) }]), { file: "pages.jsonl", line: 2, pointer: "/items/0/action/kind" }],
  ])("%s: the issue's file, line and pointer into the document", async (_name, file, content, expected) => {
    const directory = tempDir();
    writeFiles(directory, { [file]: content });
    const result = await json([file], { cwd: directory });
    expect(result.code).toBe(1);
    expect(result.issues).toEqual([expect.objectContaining({ ...expected, rule: "unknownKind", index: 2, message: 'unknown Action kind "TerminalActon"; did you mean "TerminalAction"?' })]);
    if (expected.line === undefined) {
      // Indented: the line is the one of "kind": "TerminalActon".
      const lines = String(content).split("\n");
      expect(lines[result.issues[0]!.line! - 1]).toContain('"kind": "TerminalActon"');
      expect(lines[result.issues[0]!.line! - 1]!.indexOf('"kind"') + 1).toBe(result.issues[0]!.column);
    }
  });

  it("an event directory: the issue names the event's file", async () => {
    const directory = tempDir();
    const events = broken();
    writeFiles(directory, Object.fromEntries(events.map((e, i) => [`conversation/events/event-${String(i).padStart(5, "0")}-${e.id}.json`, JSON.stringify(e)])));
    const result = await json(["conversation"], { cwd: directory });
    expect(result.code).toBe(1);
    expect(result.inputs).toEqual([expect.objectContaining({ file: "conversation/events", format: "directory", events: events.length })]);
    expect(result.issues).toEqual([
      expect.objectContaining({ file: `conversation/events/event-00002-${events[2]!.id}.json`, line: 1, pointer: "/action/kind", rule: "unknownKind", index: 2 }),
    ]);
  });
});

describe("directories, globs and repeated paths", () => {
  function tree() {
    const directory = tempDir();
    const events = trajectory();
    writeFiles(directory, {
      "recordings/a.jsonl": jsonl(events),
      "recordings/deep/b.ndjson": jsonl(events),
      "recordings/deep/c.json": JSON.stringify(events),
      "recordings/notes.md": "not a recording",
      "recordings/.hidden/d.jsonl": "broken",
      "recordings/node_modules/e.jsonl": "broken",
      ...Object.fromEntries(events.map((e, i) => [`recordings/conv/events/event-${String(i).padStart(5, "0")}-${e.id}.json`, JSON.stringify(e)])),
    });
    return directory;
  }

  it("a directory is searched for recordings and event directories, dot directories and node_modules skipped", async () => {
    const result = await json(["recordings"], { cwd: tree() });
    expect(result.code).toBe(0);
    expect(result.inputs.map((i) => [i.file, i.format])).toEqual([
      ["recordings/a.jsonl", "jsonl"],
      ["recordings/conv/events", "directory"],
      ["recordings/deep/b.ndjson", "jsonl"],
      ["recordings/deep/c.json", "array"],
    ]);
  });

  it.each([
    ["recordings/**/*.jsonl", ["recordings/a.jsonl"]],
    ["recordings/**/*.{jsonl,ndjson}", ["recordings/a.jsonl", "recordings/deep/b.ndjson"]],
    ["recordings/*/[bc].*", ["recordings/deep/b.ndjson", "recordings/deep/c.json"]],
    ["recordings/?.jsonl", ["recordings/a.jsonl"]],
    ["**/events", ["recordings/conv/events"]],
  ])("the glob %s (quoted: the command expands it)", async (pattern, files) => {
    const result = await json([pattern], { cwd: tree() });
    expect(result.code).toBe(0);
    expect(result.inputs.map((i) => i.file)).toEqual(files);
  });

  it("an absolute glob keeps absolute paths outside the working directory", async () => {
    const directory = tree();
    const result = await json([`${directory}/recordings/*.jsonl`], { cwd: tempDir() });
    expect(result.inputs.map((i) => i.file)).toEqual([`${directory}/recordings/a.jsonl`]);
  });

  it("a path given twice (or through a glob and a name) is read once", async () => {
    const result = await json(["recordings/a.jsonl", "./recordings/a.jsonl", "recordings/*.jsonl"], { cwd: tree() });
    expect(result.inputs.map((i) => i.file)).toEqual(["recordings/a.jsonl"]);
  });

  it("symbolic links: to a file, read; broken, an error (exit code 2); to a directory, not followed", async () => {
    const directory = tree();
    mkdirSync(path.join(directory, "linked"));
    symlinkSync(path.join(directory, "recordings/a.jsonl"), path.join(directory, "linked/a.jsonl"));
    symlinkSync(path.join(directory, "recordings/deep"), path.join(directory, "linked/deep"));
    symlinkSync(path.join(directory, "recordings/gone.jsonl"), path.join(directory, "linked/gone.jsonl"));
    const result = await json(["linked"], { cwd: directory });
    expect(result.code).toBe(2);
    expect(result.inputs.map((i) => [i.file, i.format ?? i.unreadable?.message])).toEqual([
      ["linked/a.jsonl", "jsonl"],
      ["linked/gone.jsonl", "is a broken symbolic link"],
    ]);
  });

  it("a glob matching nothing, and a directory without recordings, cannot be read: exit code 2", async () => {
    const directory = tree();
    writeFiles(directory, { "empty/readme.txt": "nothing here" });
    const result = await json(["nothing/**/*.jsonl", "empty"], { cwd: directory });
    expect(result.code).toBe(2);
    expect(result.inputs.map((i) => [i.file, i.unreadable?.rule])).toEqual([
      ["nothing/**/*.jsonl", "input/not-found"],
      ["empty", "input/no-recordings"],
    ]);
  });
});
