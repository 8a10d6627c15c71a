import { describe, expect, it } from "vitest";
import type { ActionEvent, Event, ObservationEvent } from "@acs-toolkit/schema";
import { SummarizingCondenser } from "../src/history/condenser.js";
import { messagesOf } from "../src/history/messages.js";
import { unmatchedActions, viewOf } from "../src/history/view.js";

let clock = 0;
const head = (id: string) => ({ id, timestamp: `2026-01-01T00:00:${String(clock++ % 60).padStart(2, "0")}` });
const system = (): Event => ({ ...head("sys"), source: "agent", system_prompt: { type: "text", text: "You are an agent." }, tools: [], kind: "SystemPromptEvent" });
const user = (id: string, text: string): Event => ({ ...head(id), source: "user", llm_message: { role: "user", content: [{ type: "text", text }] }, kind: "MessageEvent" });
const action = (id: string, call: string, response = `r-${call}`): ActionEvent => ({
  ...head(id),
  source: "agent",
  thought: [],
  action: { thought: call, kind: "ThinkAction" },
  tool_name: "think",
  tool_call_id: call,
  tool_call: { id: call, name: "think", arguments: "{}", origin: "completion" },
  llm_response_id: response,
  kind: "ActionEvent",
});
const observation = (id: string, of: ActionEvent): ObservationEvent => ({
  ...head(id),
  source: "environment",
  tool_name: "think",
  tool_call_id: of.tool_call_id,
  observation: { content: [{ type: "text", text: `result ${of.tool_call_id}` }], kind: "ThinkObservation" },
  action_id: of.id,
  kind: "ObservationEvent",
});
const condensation = (id: string, forgotten: string[], summary: string, offset: number): Event => ({
  ...head(id),
  source: "environment",
  forgotten_event_ids: forgotten,
  summary,
  summary_offset: offset,
  llm_response_id: `resp-${id}`,
  kind: "Condensation",
});

describe("the view", () => {
  it("drops forgotten events and shows only the latest summary, at its offset", () => {
    const a1 = action("a1", "c1");
    const a2 = action("a2", "c2");
    const events: Event[] = [
      system(),
      user("u1", "start"),
      a1,
      observation("o1", a1),
      condensation("k1", ["a1", "o1"], "first summary", 2),
      a2,
      observation("o2", a2),
      // The second condensation forgets the first summary too (versions §2 #1).
      condensation("k2", ["k1-summary", "a2", "o2"], "second summary", 2),
      user("u2", "more"),
    ];
    const view = viewOf(events);
    expect(view.events.map((event) => event.id)).toEqual(["sys", "u1", "k2-summary", "u2"]);
    expect(view.unhandledCondensationRequest).toBe(false);
    expect(messagesOf(view)).toEqual([
      { role: "system", content: "You are an agent." },
      { role: "user", content: "start" },
      { role: "user", content: "second summary" },
      { role: "user", content: "more" },
    ]);
  });

  it("knows an unhandled CondensationRequest", () => {
    const request: Event = { ...head("req"), source: "environment", kind: "CondensationRequest" };
    expect(viewOf([system(), request]).unhandledCondensationRequest).toBe(true);
    expect(viewOf([system(), request, condensation("k", [], "s", 1)]).unhandledCondensationRequest).toBe(false);
  });
});

describe("messages", () => {
  it("moves a user message recorded between a tool call and its result after the result", () => {
    const a1 = action("a1", "c1");
    const messages = messagesOf(viewOf([system(), user("u1", "go"), a1, user("u2", "by the way"), observation("o1", a1)]));
    expect(messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
  });

  it("leaves out a tool call without result, and a result without its call", () => {
    const answered = action("a1", "c1");
    const pending = action("a2", "c2");
    const orphan = observation("o9", action("gone", "c9"));
    const messages = messagesOf(viewOf([system(), user("u1", "go"), answered, observation("o1", answered), pending, orphan]));
    expect(messages).toEqual([
      { role: "system", content: "You are an agent." },
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", name: "think", arguments: "{}" }] },
      { role: "tool", tool_call_id: "c1", name: "think", content: "result c1" },
    ]);
    expect(unmatchedActions([answered, observation("o1", answered), pending]).map((event) => event.id)).toEqual(["a2"]);
  });
});

describe("the summarising condenser", () => {
  it("keeps the first events and a tail, and never cuts between a tool call and its result", () => {
    const events: Event[] = [system(), user("u1", "go")];
    for (let i = 0; i < 6; i++) {
      const a = action(`a${i}`, `c${i}`);
      events.push(a, observation(`o${i}`, a));
    }
    const condenser = new SummarizingCondenser({ maxSize: 10, keepFirst: 3 });
    const view = viewOf(events);
    expect(condenser.shouldCondense(view)).toBe(true);
    const plan = condenser.plan(view)!;
    // keepFirst 3 would cut a0 from o0: the range starts after o0 (index 4), and the summary goes there.
    expect(plan.summaryOffset).toBe(4);
    // The tail of one event (o5) would cut a5 from o5: the range ends after o5.
    expect(plan.forgottenEventIds).toEqual(["a1", "o1", "a2", "o2", "a3", "o3", "a4", "o4", "a5", "o5"]);
    expect(plan.prompt).toContain("<EVENT id=a1>");
  });
});
