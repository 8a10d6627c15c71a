import { describe, expect, it } from "vitest";
import { validateTrajectory } from "../src/index.js";
import { allExamples, example, readCorpus } from "./support.js";

const badClick = () => {
  const e = example("ActionEvent", "BrowserClickAction");
  e.action.index = -1;
  return e;
};

describe("validateTrajectory inputs", () => {
  const events = [example("PauseEvent"), badClick(), example("TokenEvent")];
  const expected = [{ index: 1, pointer: "/action/index", rule: "minimum" }];
  const pick = (r: ReturnType<typeof validateTrajectory>) => r.errors.map(({ index, pointer, rule }) => ({ index, pointer, rule }));

  it("an array", () => {
    const result = validateTrajectory(events);
    expect(result).toMatchObject({ ok: false, count: 3, truncated: false });
    expect(pick(result)).toEqual(expected);
    expect(result.errors[0]!.eventId).toBe(events[1]!.id);
    expect(result.errors[0]!.line).toBeUndefined();
  });

  it("an iterable (a generator)", () => {
    function* gen() { yield* events; }
    expect(pick(validateTrajectory(gen()))).toEqual(expected);
  });

  it("an EventPage object", () => {
    expect(pick(validateTrajectory({ items: events }))).toEqual(expected);
  });

  it("JSON array text", () => {
    expect(pick(validateTrajectory(JSON.stringify(events, null, 2)))).toEqual(expected);
  });

  it("EventPage text", () => {
    expect(pick(validateTrajectory(JSON.stringify({ items: events, next_page_id: null })))).toEqual(expected);
  });

  it("one event as text", () => {
    const result = validateTrajectory(`\n\n${JSON.stringify(badClick())}`);
    expect(result.count).toBe(1);
    expect(result.errors.map((e) => [e.line, e.pointer])).toEqual([[3, "/action/index"]]);
  });

  it("JSONL text, with the line of each failure (blank lines skipped, CRLF accepted)", () => {
    const text = [JSON.stringify(events[0]), "", JSON.stringify(events[1]), JSON.stringify(events[2])].join("\r\n") + "\r\n";
    const result = validateTrajectory(text);
    expect(result.count).toBe(3);
    expect(result.errors.map((e) => [e.index, e.line, e.pointer])).toEqual([[1, 3, "/action/index"]]);
  });

  it("the recorded conversations as JSONL", () => {
    const result = validateTrajectory(readCorpus("conversation-2026-02-05.jsonl"));
    expect(result).toEqual({ ok: true, count: 8, errors: [], warnings: [], truncated: false });
  });
});

describe("broken text", () => {
  it("a truncated JSONL line is a json error on its line, the rest still checked", () => {
    const good = JSON.stringify(example("PauseEvent"));
    const text = `${good}\n${good.slice(0, 40)}\n${JSON.stringify(badClick())}\n`;
    const result = validateTrajectory(text);
    expect(result.count).toBe(3);
    expect(result.errors.map((e) => [e.line, e.rule])).toEqual([[2, "json"], [3, "minimum"]]);
    expect(result.errors[0]!.message).toMatch(/^is not valid JSON: /);
  });

  it("a broken JSON array is one json error", () => {
    const result = validateTrajectory('[{"kind": "PauseEvent"},');
    expect(result.errors.map((e) => e.rule)).toEqual(["json"]);
  });

  it("text that is not JSON at all", () => {
    const result = validateTrajectory("hello world\n");
    expect(result.errors.map((e) => [e.line, e.rule])).toEqual([[1, "json"]]);
  });

  it("binary garbage", () => {
    const bytes = String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i));
    const result = validateTrajectory(bytes);
    expect(result.ok).toBe(false);
    expect(result.errors.every((e) => e.rule === "json")).toBe(true);
  });

  it("empty input is an empty, valid trajectory", () => {
    expect(validateTrajectory("")).toEqual({ ok: true, count: 0, errors: [], warnings: [], truncated: false });
    expect(validateTrajectory("  \n\n")).toMatchObject({ ok: true, count: 0 });
    expect(validateTrajectory([])).toMatchObject({ ok: true, count: 0 });
  });
});

describe("maxErrors and warnings", () => {
  it("stops after maxErrors", () => {
    const result = validateTrajectory(Array.from({ length: 10 }, badClick), { maxErrors: 3 });
    expect(result.errors).toHaveLength(3);
    expect(result.truncated).toBe(true);
    expect(result.count).toBe(3);
  });

  it("warnings carry their index", () => {
    const legacy = example("MessageEvent");
    legacy.llm_message.cache_enabled = true;
    const result = validateTrajectory([example("PauseEvent"), legacy]);
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => [w.index, w.pointer])).toEqual([[1, "/llm_message/cache_enabled"]]);
  });

  it("options reach every event", () => {
    const newer = { ...example("PauseEvent"), kind: "ResumeEvent" };
    expect(validateTrajectory([newer]).ok).toBe(false);
    expect(validateTrajectory([newer], { unknownKinds: "warn" }).ok).toBe(true);
  });

  it("a large trajectory of every kind", () => {
    const many = Array.from({ length: 200 }, () => allExamples()).flat();
    const result = validateTrajectory(many);
    expect(result).toMatchObject({ ok: true, count: many.length });
  });
});
