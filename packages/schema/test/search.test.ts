/**
 * The toolkit's one definition of event search (kind by short name, source with the kind's default,
 * body over the joined message text, timestamp bounds), which the server's stores and routes and
 * the conformance suite all use.
 */
import { describe, expect, it } from "vitest";
import { eventMatches, eventSource, instantMicros, kindShortName, searchableText, type EventFilters } from "../src/search.js";

const message = {
  id: "m1",
  kind: "MessageEvent",
  source: "user",
  timestamp: "2026-02-05T11:24:47.5",
  llm_message: {
    role: "user",
    content: [{ type: "text", text: "Deploy the" }, { type: "image", image_urls: ["x"] }, { text: "STAGING" }],
    reasoning_content: "first",
  },
  extended_content: [{ type: "text", text: "build" }],
};
const action = { id: "a1", kind: "ActionEvent", timestamp: "2026-02-05T11:24:48" };
const at = (text: string) => instantMicros(text)!;

describe("searchableText", () => {
  it("joins text content, extended content and reasoning with a space; other parts and kinds have none", () => {
    expect(searchableText(message)).toBe("Deploy the STAGING build first");
    expect(searchableText({ kind: "MessageEvent", llm_message: { content: [] } })).toBe("");
    expect(searchableText(action)).toBeUndefined();
  });
});

describe("kindShortName and eventSource", () => {
  it.each([
    ["MessageEvent", "MessageEvent"],
    ["openhands.sdk.event.llm_convertible.message.MessageEvent", "MessageEvent"],
    ["", ""],
  ])("%j → %j", (kind, short) => expect(kindShortName(kind)).toBe(short));

  it("takes the kind's default source when the event carries none, and nothing for an unknown kind", () => {
    expect(eventSource(action)).toBe("agent");
    expect(eventSource({ kind: "ActionEvent", source: "user" })).toBe("user");
    expect(eventSource({ kind: "toString" })).toBeUndefined();
    expect(eventSource({ kind: "NoSuchEvent" })).toBeUndefined();
  });
});

describe("eventMatches", () => {
  it.each<[string, EventFilters, boolean, boolean]>([
    ["no filter", {}, true, true],
    ["kind, short", { kind: "MessageEvent" }, true, false],
    ["kind, fully qualified", { kind: "openhands.sdk.event.ActionEvent" }, false, true],
    ["source, own", { source: "user" }, true, false],
    ["source, the kind's default", { source: "agent" }, false, true],
    ["body across two parts (a space between them)", { body: "the staging" }, true, false],
    ["body, any case", { body: "sTaGiNg BuIlD" }, true, false],
    ["body, reasoning", { body: "build first" }, true, false],
    ["body absent from the text", { body: "production" }, false, false],
    ["empty body is no filter", { body: "" }, true, true],
    ["timestamp__gte, inclusive", { timestampGte: at("2026-02-05T11:24:47.5") }, true, true],
    ["timestamp__lt, exclusive", { timestampLt: at("2026-02-05T11:24:48Z") }, true, false],
    ["both bounds", { timestampGte: at("2026-02-05T11:24:47.6"), timestampLt: at("2026-02-05T12:00:00") }, false, true],
  ])("%s", (_name, filters, messageMatches, actionMatches) => {
    expect(eventMatches(message, filters)).toBe(messageMatches);
    expect(eventMatches(action, filters)).toBe(actionMatches);
  });
});
