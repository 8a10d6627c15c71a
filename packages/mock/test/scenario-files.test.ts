/** Scenarios from files: a recording works as is; mistakes are named by file, line and field. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { loadScenarioFile, ScenarioFileError } from "../src/index.js";
import { startTestMock } from "./support.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/openhands-recorded");
const recordingFile = path.join(fixtures, "conversation-2026-02-05.jsonl");
const dir = mkdtempSync(path.join(tmpdir(), "acs-mock-scenarios-"));
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};
const issuesOf = (file: string) => {
  try {
    loadScenarioFile(file);
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioFileError);
    return (error as ScenarioFileError).issues;
  }
  throw new Error(`${file} loaded`);
};

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("loading scenario files", () => {
  it("a recording from the reference implementation works as is, and the mock serves it", async () => {
    const scenario = loadScenarioFile(recordingFile);
    const lines = readFileSync(recordingFile, "utf8").trim().split("\n");
    expect(scenario.name).toBe("conversation-2026-02-05");
    expect(scenario.events.map((e) => JSON.stringify(e))).toEqual(lines.map((l) => JSON.stringify(JSON.parse(l))));
    expect(scenario.preload).toBe(2); // up to the first user message; the rest streams
    const t = await startTestMock({ scenarios: [scenario] });
    try {
      const page = await t.call("GET", `/api/conversations/${scenario.conversationId}/events/search`);
      expect(page.body.items).toEqual(scenario.events);
    } finally {
      await t.close();
    }
  });

  it("a scenario document sets name, id and preload; JSON arrays and EventPages load too", () => {
    const events = exampleEvents({ seed: 8 });
    const file = write("doc.json", JSON.stringify({ name: "every-kind", description: "All kinds", conversation_id: "ABCDEF0123456789ABCDEF0123456789", preload: 5, events }, null, 2));
    expect(loadScenarioFile(file)).toMatchObject({ name: "every-kind", description: "All kinds", conversationId: "abcdef01-2345-6789-abcd-ef0123456789", preload: 5 });
    expect(loadScenarioFile(write("array.json", JSON.stringify(events))).events).toHaveLength(events.length);
    expect(loadScenarioFile(write("page.json", JSON.stringify({ items: events, next_page_id: null }))).events).toHaveLength(events.length);
  });

  it("JSONL: the line and the field of a bad event", () => {
    const lines = readFileSync(recordingFile, "utf8").trim().split("\n");
    const bad = JSON.parse(lines[2]!);
    bad.action.kind = "TerminalActon";
    lines[2] = JSON.stringify(bad);
    lines[4] = "{ not json";
    const file = write("bad.jsonl", lines.join("\n"));
    const issues = issuesOf(file);
    expect(issues.map((i) => [i.line, i.pointer])).toEqual([
      [3, "/action/kind"],
      [5, ""],
    ]);
    expect(issues[0]!.file).toBe(file);
    expect((() => { try { loadScenarioFile(file); } catch (e) { return (e as Error).message; } })()).toContain(`${file}:3: /action/kind: `);
  });

  it("pretty-printed JSON: the line of the field itself; repeated ids; empty files", () => {
    const events = exampleEvents({ seed: 9 });
    (events[3] as any).tool_call_id = 42;
    events[5]!.id = events[4]!.id;
    const file = write("pretty.json", JSON.stringify(events, null, 2));
    const text = readFileSync(file, "utf8").split("\n");
    const issues = issuesOf(file);
    expect(issues.map((i) => i.pointer)).toEqual(["/3/tool_call_id", "/5/id"]);
    expect(text[issues[0]!.line! - 1]).toContain('"tool_call_id": 42');
    expect(text[issues[1]!.line! - 1]).toContain(`"id": "${events[4]!.id}"`);
    expect(issuesOf(write("empty.jsonl", "\n"))[0]!.message).toBe("holds no event");
    expect(issuesOf(path.join(dir, "missing.jsonl"))[0]!.message).toMatch(/cannot be read/);
  });

  it("a scenario document with bad settings names them", () => {
    const file = write("bad-doc.json", JSON.stringify({ name: "has space", conversation_id: "nope", preload: -1, events: exampleEvents() }, null, 2));
    expect(issuesOf(file).map((i) => [i.pointer, i.line])).toEqual([
      ["/name", 2],
      ["/conversation_id", 3],
      ["/preload", 4],
    ]);
  });
});
