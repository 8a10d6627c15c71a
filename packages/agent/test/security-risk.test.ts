/**
 * `security_risk`: every tool that is not read-only offers it to the model, analyzer or not; the
 * ActionEvent records the model's rating only when a security analyzer is set (else UNKNOWN).
 */
import { describe, expect, it } from "vitest";
import { userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

interface SentTool {
  function: { name: string; parameters: { properties: Record<string, unknown>; required?: string[] } };
}

const sentTools = (request = 0) =>
  Object.fromEntries((h.llm.requests[request]!.body.tools as SentTool[]).map((tool) => [tool.function.name, tool.function.parameters]));

describe("security_risk", () => {
  it("is offered by every tool that is not read-only, without any analyzer, and never required", async () => {
    h = await start();
    h.llm.play({ text: "Hello." });
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    await h.conversation.idle();

    const tools = sentTools();
    for (const name of ["terminal", "file_editor", "task_tracker"]) {
      expect(tools[name]!.properties.security_risk, name).toEqual({
        type: "string",
        description: "Security risk levels for actions.\n\nBased on OpenHands security risk levels but adapted for agent-sdk.\nInteger values allow for easy comparison and ordering.",
        enum: ["UNKNOWN", "LOW", "MEDIUM", "HIGH"],
      });
      expect(tools[name]!.required ?? [], name).not.toContain("security_risk");
      // The short fields come first, so that a truncated answer still has them.
      expect(Object.keys(tools[name]!.properties).slice(0, 2), name).toEqual(["security_risk", "summary"]);
    }
    for (const name of ["think", "finish"]) {
      expect(tools[name]!.properties, name).not.toHaveProperty("security_risk");
      expect(tools[name]!.properties, name).toHaveProperty("summary");
    }
  });

  it("is recorded as UNKNOWN without an analyzer, whatever the model said", async () => {
    h = await start();
    h.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "true", security_risk: "HIGH" } }] }, { text: "Done." });
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.conversation.idle();
    const [action] = h.host.ofKind("ActionEvent");
    expect(action!.security_risk).toBe("UNKNOWN");
    expect(action!.action).toEqual({ command: "true", is_input: false, reset: false, kind: "TerminalAction" });
    expect(h.host.ofKind("AgentErrorEvent")).toEqual([]);
    expectValidTrajectory(h.host);
  });

  it("is read with the LLM analyzer, and a call without it is UNKNOWN (not an error)", async () => {
    h = await start({ settings: { security_analyzer: "llm" } });
    h.llm.play(
      { toolCalls: [{ name: "terminal", arguments: { command: "true", security_risk: "LOW" } }] },
      { toolCalls: [{ name: "terminal", arguments: { command: "true" } }] },
      { text: "Done." },
    );
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.conversation.idle();
    expect(h.host.ofKind("ActionEvent").map((action) => action.security_risk)).toEqual(["LOW", "UNKNOWN"]);
    expect(h.host.ofKind("AgentErrorEvent")).toEqual([]);
    expect(sentTools().terminal!.required ?? []).not.toContain("security_risk");
    expectValidTrajectory(h.host);
  });
});
