/**
 * The suite expects what the server does because both use the toolkit's one definition of search
 * (`eventMatches`): the suite once joined message parts with a newline where the server joins them
 * with a space, so a body filter spanning two parts was expected to match nothing.
 */
import { describe, expect, it } from "vitest";
import { expectedIds, type AnyEvent } from "../src/data.js";

const events: AnyEvent[] = [
  { id: "m1", kind: "MessageEvent", source: "user", timestamp: "2026-02-05T11:24:47", llm_message: { role: "user", content: [{ type: "text", text: "alpha" }, { type: "text", text: "beta" }] } },
  { id: "a1", kind: "ActionEvent", timestamp: "2026-02-05T11:24:46" },
];

describe("expectedIds", () => {
  it.each<[string, Record<string, string>, string[]]>([
    ["a body spanning two text parts", { body: "ALPHA beta" }, ["m1"]],
    ["an empty body (no filter)", { body: "" }, ["a1", "m1"]],
    ["a fully qualified kind", { kind: "openhands.sdk.event.ActionEvent" }, ["a1"]],
    ["the kind's default source", { source: "agent" }, ["a1"]],
  ])("%s", (_name, filters, ids) => {
    expect(expectedIds(events, filters)).toEqual(ids);
  });
});
