/**
 * Every AgentErrorEvent carries a `classification`, as OpenHands fills it: a call the agent can
 * correct (an unknown tool, bad arguments, a tool that refuses) is `agent_action` and retryable; a
 * tool cut off by a restart is `internal`.
 */
import { describe, expect, it } from "vitest";
import type { ActionEvent } from "@acs-toolkit/schema";
import { AgentRuntime, openAiLlmFactory } from "../src/index.js";
import { MemoryHost, userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

const AGENT_OUTCOME = { kind: "agent_action", retryable: true, user_action: "retry" };

describe("AgentErrorEvent.classification", () => {
  it("an unknown tool is an agent outcome", async () => {
    h = await start();
    h.llm.play({ toolCalls: [{ name: "browse_web", arguments: { url: "https://example.com" } }] }, { text: "I cannot browse." });
    await h.conversation.sendMessage(userText("Browse"), { run: true });
    await h.conversation.idle();
    const [error] = h.host.ofKind("AgentErrorEvent");
    expect(error!.error).toBe("Tool 'browse_web' not found. Available: ['terminal', 'file_editor', 'task_tracker', 'think', 'finish']");
    expect(error!.classification).toEqual(AGENT_OUTCOME);
    expectValidTrajectory(h.host);
  });

  it("malformed arguments and a tool that refuses (no sandbox) are agent outcomes", async () => {
    h = await start({ runtime: { sandbox: "none" } });
    h.llm.play(
      { toolCalls: [{ name: "terminal", arguments: '{"command": "ls"' }] },
      { toolCalls: [{ name: "terminal", arguments: { command: "ls" } }] },
      { text: "No terminal here." },
    );
    await h.conversation.sendMessage(userText("List"), { run: true });
    await h.conversation.idle();
    const errors = h.host.ofKind("AgentErrorEvent");
    expect(errors).toHaveLength(2);
    expect(errors.map((error) => error.classification)).toEqual([AGENT_OUTCOME, AGENT_OUTCOME]);
    expectValidTrajectory(h.host);
  });

  it("a tool cut off by a restart is internal", async () => {
    const first = await start();
    first.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "sleep 600", timeout: 900 } }] });
    await first.conversation.sendMessage(userText("Long job"), { run: true });
    await first.host.waitFor((event): event is ActionEvent => event.kind === "ActionEvent");
    const stored = structuredClone(first.host.events);

    const host = new MemoryHost({ conversationId: first.host.conversationId, workspaceDir: first.host.workspaceDir, settings: first.host.currentSettings, events: stored });
    const runtime = new AgentRuntime({ llm: openAiLlmFactory() });
    await runtime.open(host);
    const [error] = host.ofKind("AgentErrorEvent");
    expect(error!.error).toMatch(/^A restart occurred while this tool was in progress/);
    expect(error!.classification).toEqual({ kind: "internal", retryable: false, user_action: "none" });
    await runtime.close();
  });
});
