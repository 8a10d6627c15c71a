import { describe, expect, it } from "vitest";
import { userText } from "../src/test-kit/index.js";
import { API_KEY, expectValidTrajectory, timeline, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

const errorEvent = (harnessed: Harness) => harnessed.host.ofKind("ConversationErrorEvent").at(-1) as unknown as Record<string, unknown>;

describe("LLM failures", () => {
  it("stops on a 401 with a classified ConversationErrorEvent, status error, lifecycle ERROR, and no key anywhere", async () => {
    h = await start();
    h.llm.play({ status: 401, body: { error: { message: "Incorrect API key provided.", type: "invalid_request_error", code: "invalid_api_key" } } });
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    await h.conversation.idle();

    expect(timeline(h.host).slice(2)).toEqual(["status:running", "status:error", "ConversationErrorEvent"]);
    expect(errorEvent(h)).toMatchObject({
      source: "environment",
      code: "LLMAuthenticationError",
      detail: "Error code: 401 - Incorrect API key provided.",
      classification: { kind: "auth", retryable: false, user_action: "settings" },
    });
    // Stored as OpenHands stores it: the null error_id omitted.
    expect(errorEvent(h)!.classification).not.toHaveProperty("error_id");
    expect(h.llm.requests).toHaveLength(1); // 401 is not retried
    expect(h.host.statuses.at(-1)).toBe("ERROR");
    expect(h.llm.requests[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(JSON.stringify(h.host.events)).not.toContain(API_KEY);
    expectValidTrajectory(h.host);
  });

  it("retries a 429 after its Retry-After, then goes on", async () => {
    h = await start();
    h.llm.play({ status: 429, headers: { "retry-after": "0" } }, { status: 429, headers: { "retry-after-ms": "10" } }, { text: "Hello!" });
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    await h.conversation.idle();
    expect(h.llm.requests).toHaveLength(3);
    expect(h.host.ofKind("ConversationErrorEvent")).toEqual([]);
    expect(h.conversation.executionStatus).toBe("finished");
    expectValidTrajectory(h.host);
  });

  it("retries 5xx with backoff and fails with a retryable classification when they persist", async () => {
    h = await start({ runtime: {} });
    h.llm.play(...Array.from({ length: 5 }, () => ({ status: 503 })));
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    await h.conversation.idle();
    expect(h.llm.requests).toHaveLength(5); // the first attempt and 4 retries
    expect(errorEvent(h)).toMatchObject({ code: "LLMServiceUnavailableError", classification: { kind: "transient", retryable: true, user_action: "retry" } });
    expectValidTrajectory(h.host);
  });

  it("does not wait out a Retry-After longer than the limit: the call fails as a rate limit at once", async () => {
    h = await start();
    h.llm.play({ status: 429, headers: { "retry-after": "3600" } });
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    await h.conversation.idle();
    expect(h.llm.requests).toHaveLength(1);
    expect(errorEvent(h)).toMatchObject({ code: "LLMRateLimitError", classification: { kind: "rate_limit", retryable: true, user_action: "retry" } });
  });

  it("reports a model it cannot reach as a configuration error", async () => {
    h = await start({ settings: { llm_model: "acme/model-x", llm_base_url: null } });
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    await h.conversation.idle();
    expect(errorEvent(h)).toMatchObject({ code: "LLMBadRequestError", classification: { kind: "config", user_action: "settings" } });
    expect(String(errorEvent(h).detail)).toContain('Unknown LLM provider "acme"');
    expect(h.llm.requests).toHaveLength(0);
  });
});

describe("limits", () => {
  it("stops at max_iterations with MaxIterationsReached", async () => {
    h = await start({ settings: { max_iterations: 2 } });
    h.llm.play({ toolCalls: [{ name: "think", arguments: { thought: "one" } }] }, { toolCalls: [{ name: "think", arguments: { thought: "two" } }] });
    await h.conversation.sendMessage(userText("Think forever"), { run: true });
    await h.conversation.idle();
    expect(timeline(h.host).slice(-3)).toEqual(["ObservationEvent:ThinkObservation", "status:error", "ConversationErrorEvent"]);
    expect(errorEvent(h)).toMatchObject({
      code: "MaxIterationsReached",
      detail: "Agent reached maximum iterations limit (2).",
      classification: { kind: "agent_action", retryable: false, user_action: "none" },
    });
    expect(h.llm.unexpected).toBe(0);
    expectValidTrajectory(h.host);
  });

  it("stops at max_budget_per_task with MaxBudgetReached, the budget surviving a reopen", async () => {
    h = await start({ settings: { max_budget_per_task: 0.05 } });
    h.llm.play(
      { toolCalls: [{ name: "think", arguments: { thought: "costly" } }], usage: { cost: 0.03 } },
      { toolCalls: [{ name: "think", arguments: { thought: "costlier" } }], usage: { cost: 0.03 } },
    );
    await h.conversation.sendMessage(userText("Spend"), { run: true });
    await h.conversation.idle();
    expect(h.llm.requests).toHaveLength(2);
    expect(errorEvent(h)).toMatchObject({ code: "MaxBudgetReached", classification: { kind: "quota", retryable: false, user_action: "settings" } });
    expect(String(errorEvent(h).detail)).toBe("Agent reached maximum budget for conversation: spent $0.0600, max_budget_per_task is $0.0500.");

    // The spent amount is read back from the stored `stats`: a reopened conversation is still over budget.
    await h.runtime.close();
    const { AgentRuntime, openAiLlmFactory } = await import("../src/index.js");
    const runtime = new AgentRuntime({ llm: openAiLlmFactory() });
    const reopened = await runtime.open(h.host);
    await reopened.run();
    expect(h.llm.requests).toHaveLength(2);
    expect(h.host.ofKind("ConversationErrorEvent")).toHaveLength(2);
    await runtime.close();
    expectValidTrajectory(h.host);
  });
});
