import { describe, expect, it } from "vitest";
import { userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

describe("streaming (stream: true)", () => {
  it("publishes tokens as StreamingDeltaEvents (never recorded) and records the whole response", async () => {
    h = await start({ runtime: { stream: true } });
    const malformed = '{"thought": "unfinished';
    h.llm.play(
      { content: "Let me think about it.", reasoning: "The user wants thought.", toolCalls: [{ name: "think", arguments: { thought: "streamed arguments" } }, { name: "think", arguments: malformed }] },
      { text: "Here is the answer." },
    );
    await h.conversation.sendMessage(userText("Think"), { run: true });
    await h.conversation.idle();

    expect(h.llm.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const deltas = h.host.published;
    expect(deltas.every((delta) => delta.kind === "StreamingDeltaEvent" && delta.source === "agent")).toBe(true);
    expect(deltas.map((delta) => delta.content ?? "").join("")).toBe("Let me think about it.Here is the answer.");
    expect(deltas.map((delta) => delta.reasoning_content ?? "").join("")).toBe("The user wants thought.");
    expect(h.host.events.some((event) => (event.kind as string) === "StreamingDeltaEvent")).toBe(false);

    const [first, second] = h.host.ofKind("ActionEvent");
    // The streamed pieces joined, then written again as OpenHands re-serialises arguments (json.dumps).
    expect(first!.tool_call.arguments).toBe('{"thought": "streamed arguments"}');
    expect(first!.thought).toEqual([{ cache_prompt: false, type: "text", text: "Let me think about it." }]);
    expect(first!.reasoning_content).toBe("The user wants thought.");
    // A malformed call is recorded as OpenHands records it: a marker and the error, the received text gone.
    expect(JSON.parse(second!.tool_call.arguments)).toMatchObject({ _openhands_malformed_tool_call: true });
    expect(h.host.ofKind("AgentErrorEvent")).toHaveLength(1);
    // Usage arrives in the last chunk and is counted.
    expect(h.conversation.stats.usage_to_metrics.agent!.accumulated_token_usage.prompt_tokens).toBe(200);
    expectValidTrajectory(h.host);
  });
});
