/**
 * The condenser's defaults (240 events, the first 2 kept) and its token limit: the agent model's
 * context window (its max input tokens), or a smaller `maxTokens`.
 */
import { describe, expect, it } from "vitest";
import type { Condensation } from "@acs-toolkit/schema";
import { SummarizingCondenser } from "../src/history/condenser.js";
import { contextWindowOf, DEFAULT_CONTEXT_WINDOWS } from "../src/llm/model.js";
import { ScriptedLlmServer, userText, type ScriptedReply } from "../src/test-kit/index.js";
import { expectValidTrajectory, timeline, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

/**
 * A model that thinks `thoughts` long thoughts (about 4,000 tokens each) then answers, and summarises
 * when the condenser asks (a request without tools), whenever that comes.
 */
function thinker(thoughts: number): Promise<ScriptedLlmServer> {
  let agentCalls = 0;
  return ScriptedLlmServer.start({
    fallback: (request): ScriptedReply => {
      if (!Array.isArray(request.body.tools) || request.body.tools.length === 0) return { text: "summary of the thoughts" };
      agentCalls++;
      if (agentCalls > thoughts) return { text: "done" };
      return { toolCalls: [{ name: "think", arguments: { thought: `${String.fromCharCode(96 + agentCalls)} `.repeat(8_000) } }] };
    },
  });
}

describe("the condenser's defaults", () => {
  it("condenses above 240 events and keeps the first 2, with no token limit of its own", () => {
    const condenser = new SummarizingCondenser();
    expect([condenser.maxSize, condenser.keepFirst, condenser.maxTokens]).toEqual([240, 2, undefined]);
  });

  it("refuses a keepFirst that leaves no room for the tail, as the SDK's validator", () => {
    expect(() => new SummarizingCondenser({ maxSize: 8, keepFirst: 3 })).toThrow("keep_first must be less than max_size // 2 to leave room for condensation");
  });

  it("knows the context window of common models, by name without provider, and takes explicit ones first", () => {
    expect(contextWindowOf("openai/gpt-4o", DEFAULT_CONTEXT_WINDOWS)).toBe(128_000);
    expect(contextWindowOf("anthropic/claude-sonnet-4-5-20250929", DEFAULT_CONTEXT_WINDOWS)).toBe(200_000);
    expect(contextWindowOf("openrouter/openai/gpt-4.1-mini", DEFAULT_CONTEXT_WINDOWS)).toBe(1_047_576);
    expect(contextWindowOf("openai/my-local-model", DEFAULT_CONTEXT_WINDOWS)).toBeUndefined();
    expect(contextWindowOf("openai/my-local-model", { ...DEFAULT_CONTEXT_WINDOWS, "my-local": 32_768 })).toBe(32_768);
  });
});

describe("condensation by tokens", () => {
  it("condenses a model with a small context window long before the event limit", async () => {
    // Each thought is about 4,000 tokens: the history passes 16,384 tokens after a few steps, far below 240 events.
    h = await start({
      llm: await thinker(5),
      settings: { enable_default_condenser: true, llm_model: "openai/small-model" },
      runtime: { contextWindows: { "small-model": 16_384 } },
    });
    await h.conversation.sendMessage(userText("Think a lot"), { run: true });
    await h.conversation.idle();

    const [condensation] = h.host.ofKind("Condensation") as Condensation[];
    expect(condensation).toBeDefined();
    // Condensed before the event limit: the view never came near 240 events.
    expect(h.host.events.length).toBeLessThan(60);
    expect(h.host.ofKind("CondensationRequest")).toEqual([]);
    // The system prompt and the user message are kept; the forgotten range holds whole exchanges.
    const forgotten = new Set(condensation!.forgotten_event_ids);
    const [system, user] = [h.host.ofKind("SystemPromptEvent")[0]!, h.host.ofKind("MessageEvent")[0]!];
    expect(forgotten.has(system.id) || forgotten.has(user.id)).toBe(false);
    expect(condensation!.summary_offset).toBe(2);
    expect(timeline(h.host).filter((kind) => kind.startsWith("ActionEvent"))).toHaveLength(5);
    expect(h.conversation.executionStatus).toBe("finished");
    // The stats carry the context window, as OpenHands' TokenUsage does.
    expect(h.conversation.stats.usage_to_metrics.agent!.accumulated_token_usage.context_window).toBe(16_384);
    expectValidTrajectory(h.host);
  });

  it("takes a maxTokens smaller than the context window", async () => {
    h = await start({ llm: await thinker(5), settings: { enable_default_condenser: true }, runtime: { condenser: { maxTokens: 16_384 } } });
    await h.conversation.sendMessage(userText("Think a lot"), { run: true });
    await h.conversation.idle();
    expect(h.host.ofKind("Condensation").length).toBeGreaterThanOrEqual(1);
    expectValidTrajectory(h.host);
  });
});
