import { describe, expect, it } from "vitest";
import type { Condensation } from "@acs-toolkit/schema";
import { userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, timeline, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

const think = (thought: string) => ({ toolCalls: [{ name: "think", arguments: { thought } }] });

describe("condensation (enable_default_condenser)", () => {
  it("replaces the oldest events with an LLM summary once the history passes the threshold", async () => {
    h = await start({ settings: { enable_default_condenser: true }, runtime: { condenser: { maxSize: 8, keepFirst: 2 } } });
    h.llm.play(think("1"), think("2"), think("3"), think("4"), { text: "USER_CONTEXT: think four times. COMPLETED: four thoughts." }, { toolCalls: [{ name: "finish", arguments: { message: "done" } }] });
    await h.conversation.sendMessage(userText("Think four times, then finish."), { run: true });
    await h.conversation.idle();

    const [condensation] = h.host.ofKind("Condensation") as Condensation[];
    const forgotten = h.host.events.filter((event) => event.kind === "ActionEvent" || event.kind === "ObservationEvent").slice(0, 8).map((event) => event.id);
    expect(condensation).toMatchObject({
      source: "environment",
      forgotten_event_ids: forgotten,
      summary: "USER_CONTEXT: think four times. COMPLETED: four thoughts.",
      summary_offset: 2,
      llm_response_id: "chatcmpl-scripted-5",
    });
    // The summarising call: a user prompt holding the forgotten events, no tools.
    const summarising = h.llm.requests[4]!.body;
    expect(summarising.tools).toBeUndefined();
    expect(JSON.stringify(summarising.messages)).toContain(`<EVENT id=${forgotten[0]}>`);
    // The next call sees the system prompt, the first message and the summary in place of the forgotten events.
    const after = h.llm.requests[5]!.body.messages as Array<{ role: string; content: string }>;
    expect(after.map((message) => message.role)).toEqual(["system", "user", "user"]);
    expect(after[2]!.content).toBe("USER_CONTEXT: think four times. COMPLETED: four thoughts.");
    // The condenser's tokens are counted under its own usage id.
    expect(Object.keys(h.conversation.stats.usage_to_metrics)).toEqual(["agent", "condenser"]);
    expect(timeline(h.host).slice(-4)).toEqual(["Condensation", "ActionEvent:finish", "ObservationEvent:FinishObservation", "status:finished"]);
    expectValidTrajectory(h.host);
  });

  it("asks for a condensation when the context window is exceeded, then condenses and goes on", async () => {
    h = await start({ settings: { enable_default_condenser: true } });
    h.llm.play(
      think("a"),
      think("b"),
      { status: 400, body: { error: { message: "This model's maximum context length is 128000 tokens.", type: "invalid_request_error", code: "context_length_exceeded" } } },
      { text: "summary of a and b" },
      { text: "answer" },
    );
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.conversation.idle();
    expect(timeline(h.host).filter((kind) => kind.startsWith("Condensation"))).toEqual(["CondensationRequest", "Condensation"]);
    expect(h.host.ofKind("ConversationErrorEvent")).toEqual([]);
    expect(h.conversation.executionStatus).toBe("finished");
    expectValidTrajectory(h.host);
  });

  it("condenses on request (requestCondensation)", async () => {
    h = await start({ settings: { enable_default_condenser: true } });
    h.llm.play(think("a"), { text: "first answer" }, { text: "the summary" }, { text: "second answer" });
    await h.conversation.sendMessage(userText("One"), { run: true });
    await h.conversation.idle();
    await h.conversation.requestCondensation();
    await h.conversation.sendMessage(userText("Two"), { run: true });
    await h.conversation.idle();
    const [condensation] = h.host.ofKind("Condensation") as Condensation[];
    expect(condensation!.summary).toBe("the summary");
    expect(condensation!.forgotten_event_ids!.length).toBeGreaterThan(0);
    expectValidTrajectory(h.host);
  });

  it("never condenses with the condenser off", async () => {
    h = await start({ settings: { enable_default_condenser: false }, runtime: { condenser: { maxSize: 4, keepFirst: 0 } } });
    h.llm.play(think("a"), think("b"), { text: "done" });
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.conversation.idle();
    expect(h.host.ofKind("Condensation")).toEqual([]);
  });
});
