/**
 * Stuck detection, as OpenHands' StuckDetector: before each step, the events since the last user
 * message are checked for a loop; a stuck agent gets status `stuck` and the run stops.
 */
import { describe, expect, it } from "vitest";
import type { Event } from "@acs-toolkit/schema";
import { userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, timeline, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

/** A state field a conversation started with, stored before the runtime opens it (as the server stores a StartConversationRequest's). */
const startState = (key: string, value: unknown): Event => ({ id: crypto.randomUUID(), timestamp: "2026-03-01T10:00:00.000000", source: "environment", key, value, kind: "ConversationStateUpdateEvent" });
const think = (thought: string) => ({ toolCalls: [{ name: "think", arguments: { thought } }] });
const many = <T>(count: number, make: (index: number) => T) => Array.from({ length: count }, (_, index) => make(index));

/** A run of `replies` that should stop stuck before using them all. */
async function runUntilStuck(replies: Parameters<Harness["llm"]["play"]>) {
  h = await start({ settings: { max_iterations: 50 } });
  h.llm.play(...replies);
  await h.conversation.sendMessage(userText("Go"), { run: true });
  await h.conversation.idle();
}

function expectStuck(llmCalls: number) {
  expect(h.conversation.executionStatus).toBe("stuck");
  expect(h.host.executionStatuses.slice(-2)).toEqual(["running", "stuck"]);
  expect(h.llm.requests).toHaveLength(llmCalls);
  expect(h.host.ofKind("ConversationErrorEvent")).toEqual([]);
  expect(h.host.statuses.at(-1)).toBe("ERROR");
  expectValidTrajectory(h.host);
}

describe("stuck detection", () => {
  it("stops on the same action with the same observation four times", async () => {
    await runUntilStuck(many(10, () => think("again")));
    expect(timeline(h.host).filter((kind) => kind === "ActionEvent:think")).toHaveLength(4);
    expectStuck(4);
  });

  it("nudges once after the same action failed three times, and stops at the fourth", async () => {
    // The same action (malformed arguments: no action), failing with the same error each time.
    await runUntilStuck(many(10, (index) => ({ toolCalls: [{ name: "terminal", arguments: `{"command": "ls", ${index}` }] })));
    const errors = h.host.ofKind("AgentErrorEvent");
    expect(errors).toHaveLength(4);
    expect(new Set(errors.map((error) => error.error)).size).toBe(1);
    const nudges = h.host.ofKind("MessageEvent").filter((message) => message.source === "environment");
    expect(nudges).toHaveLength(1);
    expect(nudges[0]!.llm_message).toEqual({
      ...userText(
        `You've called \`terminal\` with the same arguments 3 times in a row and gotten the same error each time: ${errors[2]!.error}. Repeating the exact same call again will not work — review the error message and either correct the arguments or try a different approach.`,
      ),
      thinking_blocks: [],
    });
    // The nudge comes right after the third error, and the LLM reads it as a user message.
    expect(h.host.events.indexOf(nudges[0]!)).toBeGreaterThan(h.host.events.indexOf(errors[2]!));
    expect(h.host.events.indexOf(nudges[0]!)).toBeLessThan(h.host.events.indexOf(errors[3]!));
    expect((h.llm.requests[3]!.body.messages as Array<{ role: string }>).at(-1)).toMatchObject({ role: "user" });
    expectStuck(4);
  });

  it("stops on an action and observation alternating with another pair, six times each", async () => {
    await runUntilStuck(many(12, (index) => think(index % 2 ? "b" : "a")));
    expect(timeline(h.host).filter((kind) => kind === "ActionEvent:think")).toHaveLength(6);
    expectStuck(6);
  });

  it("stops on three agent messages in a row (a monologue) before calling the LLM", async () => {
    const head = (id: number) => ({ id: `00000000-0000-4000-8000-00000000000${id}`, timestamp: `2026-01-01T00:00:0${id}` });
    const agent = (id: number): Event => ({
      ...head(id),
      source: "agent",
      llm_message: { role: "assistant", content: [{ cache_prompt: false, type: "text", text: "Let me think again." }], thinking_blocks: [] },
      llm_response_id: `chatcmpl-${id}`,
      activated_skills: [],
      extended_content: [],
      kind: "MessageEvent",
    });
    const events: Event[] = [
      { ...head(0), source: "agent", system_prompt: { cache_prompt: false, type: "text", text: "You are an agent." }, tools: [], kind: "SystemPromptEvent" },
      { ...head(1), source: "user", llm_message: userText("Go"), activated_skills: [], extended_content: [], kind: "MessageEvent" },
      agent(2),
      agent(3),
      agent(4),
    ];
    h = await start({ host: { events } });
    h.llm.play({ text: "And again." });
    await h.conversation.run();
    expect(h.conversation.executionStatus).toBe("stuck");
    expect(h.llm.requests).toHaveLength(0);
    expect(h.host.statuses.at(-1)).toBe("ERROR");
  });

  it("looks only at the events since the last user message", async () => {
    h = await start();
    h.llm.play(...many(3, () => think("same")), { text: "One." }, ...many(3, () => think("same")), { text: "Two." });
    await h.conversation.sendMessage(userText("One"), { run: true });
    await h.conversation.idle();
    await h.conversation.sendMessage(userText("Two"), { run: true });
    await h.conversation.idle();
    expect(h.conversation.executionStatus).toBe("finished");
    expectValidTrajectory(h.host);
  });

  it("is off with stuckDetection: false", async () => {
    h = await start({ runtime: { stuckDetection: false } });
    h.llm.play(...many(6, () => think("again")), { text: "Done." });
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.conversation.idle();
    expect(h.conversation.executionStatus).toBe("finished");
  });

  it("is off for a conversation that started with stuck_detection false (the agent server's StartConversationRequest)", async () => {
    h = await start({ host: { events: [startState("stuck_detection", false)] } });
    h.llm.play(...many(6, () => think("again")), { text: "Done." });
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.conversation.idle();
    expect(h.conversation.executionStatus).toBe("finished");
    expect(h.llm.requests).toHaveLength(7);
    expectValidTrajectory(h.host);
  });

  it("a conversation's own max_iterations stops its run over the settings' limit", async () => {
    h = await start({ settings: { max_iterations: 50 }, runtime: { stuckDetection: false }, host: { events: [startState("max_iterations", 3)] } });
    h.llm.play(...many(5, (index) => think(`step ${index}`)));
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.conversation.idle();
    expect(h.llm.requests).toHaveLength(3);
    expect(h.host.ofKind("ConversationErrorEvent").map((error) => error.code)).toEqual(["MaxIterationsReached"]);
  });

  it("a stuck conversation runs again after a user message", async () => {
    await runUntilStuck(many(4, () => think("again")));
    expect(h.conversation.executionStatus).toBe("stuck");
    h.llm.play({ text: "Trying something else." });
    await h.conversation.sendMessage(userText("Try another way"), { run: true });
    await h.conversation.idle();
    expect(h.conversation.executionStatus).toBe("finished");
    expect(h.host.executionStatuses.slice(-4)).toEqual(["stuck", "idle", "running", "finished"]);
  });
});
