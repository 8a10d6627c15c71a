import { describe, expect, it } from "vitest";
import { assertEvent, EventValidationError, formatIssue, isEvent, validateEvent, validateEventPage } from "../src/index.js";
import { example } from "./support.js";

describe("legacy fields of SDK 1.9 (ground-truth §1)", () => {
  it("TextContent.enable_truncation is accepted with a warning", () => {
    const event = example("MessageEvent");
    event.llm_message.content[0].enable_truncation = true;
    const result = validateEvent(event);
    expect(result.ok).toBe(true);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([
      { pointer: "/llm_message/content/0/enable_truncation", rule: "legacyField", message: "is a legacy field (SDK 1.9): accepted, but current readers drop it" },
    ]);
  });

  it.each(["cache_enabled", "vision_enabled", "function_calling_enabled", "force_string_serializer", "send_reasoning_content"])(
    "Message.%s is accepted with a warning",
    (field) => {
      const event = example("MessageEvent");
      event.llm_message[field] = false;
      const result = validateEvent(event);
      expect(result.ok).toBe(true);
      expect(result.warnings.map((w) => [w.pointer, w.rule])).toEqual([[`/llm_message/${field}`, "legacyField"]]);
    },
  );

  it("legacy fields in a thought and an observation are found too", () => {
    const action = example("ActionEvent", "ThinkAction");
    action.thought = [{ type: "text", text: "hm", enable_truncation: false }];
    expect(validateEvent(action).warnings.map((w) => w.pointer)).toEqual(["/thought/0/enable_truncation"]);
    const observation = example("ObservationEvent", "FinishObservation");
    observation.observation.content = [{ type: "text", text: "done", enable_truncation: true }];
    expect(validateEvent(observation).warnings.map((w) => w.pointer)).toEqual(["/observation/content/0/enable_truncation"]);
  });

  it("a legacy field of the wrong type is an error", () => {
    const event = example("MessageEvent");
    event.llm_message.vision_enabled = "yes";
    const result = validateEvent(event);
    expect(result.errors.map((e) => [e.pointer, e.rule])).toEqual([["/llm_message/vision_enabled", "type"]]);
  });

  it("warnings are reported beside errors", () => {
    const event = example("MessageEvent");
    event.llm_message.cache_enabled = true;
    event.sender = 5;
    const result = validateEvent(event);
    expect(result.ok).toBe(false);
    expect(result.errors.map((e) => e.pointer)).toEqual(["/sender"]);
    expect(result.warnings.map((e) => e.pointer)).toEqual(["/llm_message/cache_enabled"]);
  });
});

describe("options for recordings from newer versions", () => {
  const newerEvent = () => ({ ...example("PauseEvent"), kind: "ResumeEvent" });
  const newerAction = () => {
    const e = example("ActionEvent", "TerminalAction");
    e.action = { kind: "BrowserDragAction", from: 1, to: 2 };
    return e;
  };
  const newerProperty = () => {
    const e = example("ActionEvent", "TerminalAction");
    e.action.shell = "zsh";
    e.trace_id = "abc";
    return e;
  };

  it.each([
    ["an unknown event kind", newerEvent, "unknownKinds", ["/kind"]],
    ["an unknown action kind", newerAction, "unknownKinds", ["/action/kind"]],
    ["unknown properties", newerProperty, "unknownProperties", ["/trace_id", "/action/shell"]],
  ] as const)("%s: an error by default, a warning with %s: warn", (_name, make, option, pointers) => {
    const strict = validateEvent(make());
    expect(strict.ok).toBe(false);
    expect(strict.errors.map((e) => e.pointer).sort()).toEqual([...pointers].sort());
    const lenient = validateEvent(make(), { [option]: "warn" });
    expect(lenient.ok).toBe(true);
    expect(lenient.errors).toEqual([]);
    expect(lenient.warnings.map((e) => e.pointer).sort()).toEqual([...pointers].sort());
  });

  it("warn for one option keeps the other strict", () => {
    const event = newerAction();
    event.extra = 1;
    const result = validateEvent(event, { unknownKinds: "warn" });
    expect(result.ok).toBe(false);
    expect(result.errors.map((e) => [e.pointer, e.rule])).toEqual([["/extra", "unknownProperty"]]);
    expect(result.warnings.map((e) => [e.pointer, e.rule])).toEqual([["/action/kind", "unknownKind"]]);
  });

  it("unknown properties still fail other rules in warn mode", () => {
    const event = newerProperty();
    event.action.command = 5;
    const result = validateEvent(event, { unknownProperties: "warn" });
    expect(result.ok).toBe(false);
    expect(result.errors.map((e) => e.pointer)).toEqual(["/action/command"]);
  });
});

describe("assertEvent, isEvent, validateEventPage", () => {
  it("assertEvent throws an EventValidationError listing every error", () => {
    const event = example("ActionEvent", "BrowserClickAction");
    event.action.index = -1;
    event.source = "robot";
    expect(() => assertEvent(event)).toThrow(EventValidationError);
    try {
      assertEvent(event);
    } catch (error) {
      expect((error as EventValidationError).issues.map(formatIssue)).toEqual([
        '/source: must be one of "agent", "user", "environment" or "hook", got "robot"',
        "/action/index: must be >= 0, got -1",
      ]);
      expect((error as Error).message).toContain("/action/index: must be >= 0, got -1");
    }
  });

  it("assertEvent narrows and returns for a valid event", () => {
    const value: unknown = example("PauseEvent");
    assertEvent(value);
    expect(value.kind).toBe("PauseEvent");
  });

  it("isEvent is a boolean guard", () => {
    expect(isEvent(example("TokenEvent"))).toBe(true);
    expect(isEvent({ kind: "TokenEvent" })).toBe(false);
    expect(isEvent(null)).toBe(false);
  });

  it("validateEventPage points into items", () => {
    const bad = example("ActionEvent", "BrowserClickAction");
    bad.action.index = -1;
    const result = validateEventPage({ items: [example("PauseEvent"), bad], next_page_id: "abc" });
    expect(result.errors.map(formatIssue)).toEqual(["/items/1/action/index: must be >= 0, got -1"]);
    expect(validateEventPage({ items: [], next_page_id: null }).ok).toBe(true);
    expect(validateEventPage({ items: [] }).ok).toBe(true);
    expect(validateEventPage({ next_page_id: null }).errors.map(formatIssue)).toEqual(["/items: is required in EventPage"]);
    expect(validateEventPage({ items: [], next_page_id: 3 }).errors.map(formatIssue)).toEqual(["/next_page_id: must be string or null, got integer 3"]);
  });
});
