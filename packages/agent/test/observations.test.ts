/**
 * ObservationEvent as OpenHands writes it: `extended_content` always present (empty unless the
 * agent context adds text after the tool result), and a long terminal output cut as OpenHands'
 * `maybe_truncate` cuts it, with no `full_output_save_dir` (nothing is saved).
 */
import { describe, expect, it } from "vitest";
import type { ActionEvent, Event, ObservationEvent } from "@acs-toolkit/schema";
import { messagesOf } from "../src/history/messages.js";
import { viewOf } from "../src/history/view.js";
import { maybeTruncate } from "../src/tools/truncate.js";
import { userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

const NOTICE = "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>";

describe("ObservationEvent", () => {
  it("is recorded with extended_content: []", async () => {
    h = await start();
    h.llm.play({ toolCalls: [{ name: "think", arguments: { thought: "x" } }] }, { text: "Done." });
    await h.conversation.sendMessage(userText("Think"), { run: true });
    await h.conversation.idle();
    const [observation] = h.host.ofKind("ObservationEvent");
    expect(observation!.extended_content).toEqual([]);
    expectValidTrajectory(h.host);
  });

  it("gives the LLM its extended_content after the tool result", () => {
    const action: ActionEvent = {
      id: "a1",
      timestamp: "2026-01-01T00:00:01",
      source: "agent",
      thought: [],
      action: { thought: "x", kind: "ThinkAction" },
      tool_name: "think",
      tool_call_id: "c1",
      tool_call: { id: "c1", name: "think", arguments: "{}", origin: "completion" },
      llm_response_id: "r1",
      kind: "ActionEvent",
    };
    const observation: ObservationEvent = {
      id: "o1",
      timestamp: "2026-01-01T00:00:02",
      source: "environment",
      tool_name: "think",
      tool_call_id: "c1",
      observation: { content: [{ cache_prompt: false, type: "text", text: "Your thought has been logged." }], kind: "ThinkObservation" },
      action_id: "a1",
      extended_content: [{ cache_prompt: false, type: "text", text: "Rule for src/: keep modules small." }],
      kind: "ObservationEvent",
    };
    const system: Event = { id: "s", timestamp: "2026-01-01T00:00:00", source: "agent", system_prompt: { type: "text", text: "You are an agent." }, tools: [], kind: "SystemPromptEvent" };
    expect(messagesOf(viewOf([system, action, observation])).at(-1)).toEqual({
      role: "tool",
      tool_call_id: "c1",
      name: "think",
      content: "Your thought has been logged.\nRule for src/: keep modules small.",
    });
  });
});

describe("a long terminal output", () => {
  it("is cut as OpenHands' maybe_truncate cuts it, head and tail around its notice, and saved nowhere", async () => {
    h = await start();
    h.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "head -c 20000 /dev/zero | tr '\\0' a; head -c 20000 /dev/zero | tr '\\0' b" } }] }, { text: "Long." });
    await h.conversation.sendMessage(userText("Print"), { run: true });
    await h.conversation.idle();
    const [event] = h.host.ofKind("ObservationEvent");
    const observation = event!.observation;
    if (observation.kind !== "TerminalObservation") throw new Error(observation.kind);
    const text = observation.content![0]!.type === "text" ? observation.content![0]!.text : "";
    expect(text).toHaveLength(30_000);
    const head = Math.ceil((30_000 - NOTICE.length) / 2);
    expect(text.slice(head, head + NOTICE.length)).toBe(NOTICE);
    expect(text.startsWith("a".repeat(head))).toBe(true);
    expect(text.slice(head + NOTICE.length).trimEnd()).toMatch(/^b+$/);
    expect(observation).not.toHaveProperty("full_output_save_dir");
    expectValidTrajectory(h.host);
  });

  it("maybeTruncate keeps short text and splits the budget as the SDK does", () => {
    expect(maybeTruncate("short", 10)).toBe("short");
    expect(maybeTruncate("x".repeat(200), 150)).toBe(`${"x".repeat(19)}${NOTICE}${"x".repeat(18)}`);
    expect(maybeTruncate("x".repeat(200), 100)).toBe(NOTICE.slice(0, 100));
  });
});
