/** Hostile and malformed input: always a clear result, never a throw or a stack overflow. */
import { describe, expect, it } from "vitest";
import { formatIssue, validateEvent, validateEventPage, validateTrajectory } from "../src/index.js";
import { example } from "./support.js";

const nest = (depth: number, leaf: unknown = {}) => {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};
const nestObjects = (depth: number) => {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

describe("values that are not events", () => {
  it.each([
    ["null", null, "/: must be object, got null"],
    ["undefined", undefined, "/: must be object, got nothing"],
    ["a number", 42, "/: must be object, got integer 42"],
    ["a string", "MessageEvent", '/: must be object, got string "MessageEvent"'],
    ["a boolean", true, "/: must be object, got boolean true"],
    ["an array", [example("PauseEvent")], "/: must be object, got an array of 1 item"],
    ["an empty object", {}, "/kind: is required in Event"],
    ["a kind that is a number", { kind: 3 }, "/kind: must be a string naming the Event, got number 3"],
    ["a kind that is an object", { kind: { name: "PauseEvent" } }, "/kind: must be a string naming the Event, got an object"],
    ["a kind that is null", { kind: null }, "/kind: must be a string naming the Event, got null"],
  ])("%s", (_name, value, expected) => {
    const result = validateEvent(value);
    expect(result.ok).toBe(false);
    expect(result.errors.map(formatIssue)).toEqual([expected]);
  });

  it("an array where an object belongs", () => {
    const event = example("MessageEvent");
    event.llm_message = [event.llm_message];
    expect(validateEvent(event).errors.map(formatIssue)).toEqual(["/llm_message: must be object, got an array of 1 item"]);
  });

  it("an object where an array belongs", () => {
    const event = example("ActionEvent", "ThinkAction");
    event.thought = { type: "text", text: "x" };
    expect(validateEvent(event).errors.map(formatIssue)).toEqual(["/thought: must be array, got an object"]);
  });
});

describe("deep nesting (10,000 levels)", () => {
  it("in a validated position", () => {
    const event = example("ActionEvent", "ThinkAction");
    event.action = nest(10_000);
    expect(validateEvent(event).errors.map(formatIssue)).toEqual(["/action: must be object or null, got an array of 1 item"]);
  });

  it("in message content", () => {
    const event = example("MessageEvent");
    event.llm_message.content = nest(10_000);
    expect(validateEvent(event).errors.map((e) => e.pointer)).toEqual(["/llm_message/content/0"]);
  });

  it("inside free-form values, which are valid", () => {
    expect(validateEvent({ ...example("ConversationStateUpdateEvent"), value: nestObjects(10_000) }).ok).toBe(true);
    const mcp = example("ActionEvent", "MCPToolAction");
    mcp.action.data = nestObjects(10_000);
    expect(validateEvent(mcp).ok).toBe(true);
  });

  it("as JSONL text", () => {
    const deep = `${"[".repeat(10_000)}{}${"]".repeat(10_000)}`;
    const line = JSON.stringify({ ...example("ConversationStateUpdateEvent"), value: 0 }).replace('"value":0', `"value":${deep}`);
    const result = validateTrajectory(`${line}\n${"[".repeat(100_000)}\n`);
    expect(result.count).toBe(2);
    expect(result.errors.map((e) => [e.line, e.rule])).toEqual([[2, "json"]]);
  });
});

describe("50 MB strings", () => {
  const huge = "x".repeat(50 * 1024 * 1024);
  it("as an id: rejected by length, the value not echoed whole", () => {
    const result = validateEvent({ ...example("PauseEvent"), id: huge });
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]!.rule).toBe("maxLength");
    expect(formatIssue(result.errors[0]!).length).toBeLessThan(200);
  });

  it("as message text: valid", () => {
    const event = example("MessageEvent");
    event.llm_message.content[0].text = huge;
    expect(validateEvent(event).ok).toBe(true);
  });

  it("as an enum value: rejected, message short", () => {
    const result = validateEvent({ ...example("PauseEvent"), source: huge });
    expect(result.errors[0]!.rule).toBe("enum");
    expect(result.errors[0]!.message.length).toBeLessThan(300);
  });
});

describe("objects that fight back", () => {
  it("a throwing getter gives an internal issue, not an exception", () => {
    const event = example("PauseEvent");
    Object.defineProperty(event, "source", { enumerable: true, get() { throw new Error("boom"); } });
    const result = validateEvent(event);
    expect(result.ok).toBe(false);
    expect(result.errors).toEqual([{ pointer: "", rule: "internal", message: "could not be validated: boom" }]);
  });

  it("a Proxy that throws on every access", () => {
    const value = new Proxy({}, { get() { throw new TypeError("no"); }, has() { throw new TypeError("no"); } });
    expect(validateEvent(value).errors[0]!.rule).toBe("internal");
    expect(validateEventPage(value).errors[0]!.rule).toBe("internal");
    expect(validateTrajectory([value]).errors[0]!.rule).toBe("internal");
  });

  it("a cycle through a validated field terminates", () => {
    const event = example("MessageEvent");
    event.llm_message.content = [event];
    expect(validateEvent(event).errors.map((e) => e.pointer)).toEqual(["/llm_message/content/0/type"]);
  });

  it("a cycle through a free-form field is valid", () => {
    const event = example("ConversationStateUpdateEvent");
    event.value = event;
    expect(validateEvent(event).ok).toBe(true);
  });
});
