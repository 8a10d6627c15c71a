/**
 * The conversation tree (`parent_id`): every event but the first names the active leaf when it is
 * recorded, the last event that is not a ConversationStateUpdateEvent; a restarted runtime finds
 * that leaf in the stored events.
 */
import { describe, expect, it } from "vitest";
import type { Event } from "@acs-toolkit/schema";
import { AgentRuntime, openAiLlmFactory } from "../src/index.js";
import { MemoryHost, userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

/** The id of the last event before `index` that is not a state update: the leaf when event `index` was recorded. */
function leafBefore(events: readonly Event[], index: number): string | undefined {
  for (let at = index - 1; at >= 0; at--) if (events[at]!.kind !== "ConversationStateUpdateEvent") return events[at]!.id;
  return undefined;
}

/** Opens the stored events of `h` in a new runtime, as a restarted server does. */
async function reopen(events: Event[]) {
  const host = new MemoryHost({ conversationId: h.host.conversationId, workspaceDir: h.host.workspaceDir, settings: h.host.currentSettings, events });
  const runtime = new AgentRuntime({ llm: openAiLlmFactory() });
  return { host, runtime, conversation: await runtime.open(host) };
}

describe("parent_id", () => {
  it("chains every event to the last event recorded before it that is not a state update", async () => {
    h = await start();
    h.llm.play({ toolCalls: [{ name: "think", arguments: { thought: "first" } }] }, { toolCalls: [{ name: "finish", arguments: { message: "done" } }] });
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.conversation.idle();

    const events = h.host.events;
    expect(events[0]!.kind).toBe("SystemPromptEvent");
    expect(events[0]!.parent_id).toBeUndefined();
    // State updates sit between the other events (status and stats after each LLM call)…
    expect(events.filter((event) => event.kind === "ConversationStateUpdateEvent").length).toBeGreaterThanOrEqual(4);
    for (const [index, event] of events.entries()) {
      if (index === 0) continue;
      expect(event.parent_id, `${index} ${event.kind}`).toBe(leafBefore(events, index));
    }
    // …and are never a parent.
    const stateUpdates = new Set(events.filter((event) => event.kind === "ConversationStateUpdateEvent").map((event) => event.id));
    expect(events.some((event) => event.parent_id !== undefined && stateUpdates.has(event.parent_id!))).toBe(false);
    expect(h.conversation.leafEventId).toBe(leafBefore(events, events.length));
    expectValidTrajectory(h.host);
  });

  it("goes on from the stored leaf after a restart", async () => {
    h = await start();
    h.llm.play({ text: "Hello." });
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    await h.conversation.idle();
    await h.runtime.close();
    const stored = structuredClone(h.host.events);
    expect(stored.at(-1)!.kind).toBe("ConversationStateUpdateEvent");

    const again = await reopen(stored);
    h.llm.play({ text: "Hello again." });
    await again.conversation.sendMessage(userText("Still there?"), { run: true });
    await again.conversation.idle();
    const [message] = again.host.events.slice(stored.length).filter((event) => event.kind === "MessageEvent");
    // The agent's answer, not the state updates recorded after it.
    expect(message!.parent_id).toBe(stored.filter((event) => event.kind === "MessageEvent").at(-1)!.id);
    await again.runtime.close();
    expectValidTrajectory(again.host);
  });

  it("skips a trailing ConversationErrorEvent of a log written before the tree, as the SDK's legacy fallback", async () => {
    h = await start();
    h.llm.play({ status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } } });
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    await h.conversation.idle();
    await h.runtime.close();
    expect(h.host.events.at(-1)!.kind).toBe("ConversationErrorEvent");
    const user = h.host.events.find((event) => event.kind === "MessageEvent")!;

    // A tree log: the ConversationErrorEvent moved HEAD when it was appended.
    const tree = await reopen(structuredClone(h.host.events));
    expect(tree.conversation.leafEventId).toBe(h.host.events.at(-1)!.id);
    await tree.runtime.close();

    // The same log without parent_id (written before release 1.31): the error event is not a tree node.
    const legacy = await reopen(structuredClone(h.host.events).map(({ parent_id: _parent, ...event }) => event as Event));
    expect(legacy.conversation.leafEventId).toBe(user.id);
    await legacy.runtime.close();
  });
});
