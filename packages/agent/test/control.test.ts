import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { ActionEvent } from "@acs-toolkit/schema";
import { AgentRuntime, ConversationAlreadyRunningError, openAiLlmFactory } from "../src/index.js";
import { MemoryHost, gate, userText } from "../src/test-kit/index.js";
import { FOREGROUND_WAIT, expectValidTrajectory, timeline, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

describe("confirmation mode", () => {
  it("holds actions in waiting_for_confirmation until approved", async () => {
    h = await start({ settings: { confirmation_mode: true } });
    h.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "touch approved.txt" } }] }, { toolCalls: [{ name: "finish", arguments: { message: "done" } }] });
    await h.conversation.sendMessage(userText("Touch a file"), { run: true });
    await h.conversation.idle();

    expect(h.conversation.executionStatus).toBe("waiting_for_confirmation");
    expect(timeline(h.host).slice(-2)).toEqual(["ActionEvent:terminal", "status:waiting_for_confirmation"]);
    // The state field follows the settings (recorded once, when the run starts).
    const policies = h.host.events.filter((event) => event.kind === "ConversationStateUpdateEvent" && event.key === "confirmation_policy");
    expect(policies.map((event) => (event as { value: unknown }).value)).toEqual([{ kind: "AlwaysConfirm" }]);
    expect(existsSync(path.join(h.host.workspaceDir, "approved.txt"))).toBe(false);

    await h.conversation.respondToConfirmation({ accept: true });
    await h.conversation.idle();
    expect(existsSync(path.join(h.host.workspaceDir, "approved.txt"))).toBe(true);
    expect(timeline(h.host).slice(-7)).toEqual([
      "ActionEvent:terminal",
      "status:waiting_for_confirmation",
      "status:running",
      "ObservationEvent:TerminalObservation",
      "ActionEvent:finish",
      "ObservationEvent:FinishObservation",
      "status:finished",
    ]);
    expectValidTrajectory(h.host);
  });

  it("answers a rejection with a UserRejectObservation per pending action and status idle", async () => {
    h = await start({ settings: { confirmation_mode: true } });
    h.llm.play(
      { toolCalls: [{ name: "terminal", arguments: { command: "rm -rf data" } }, { name: "terminal", arguments: { command: "echo second" } }] },
      { text: "Understood, I will not delete anything." },
    );
    await h.conversation.sendMessage(userText("Clean up"), { run: true });
    await h.conversation.idle();
    await h.conversation.respondToConfirmation({ accept: false, reason: "Not this one." });

    expect(h.conversation.executionStatus).toBe("idle");
    const rejections = h.host.ofKind("UserRejectObservation");
    const actions = h.host.ofKind("ActionEvent");
    expect(rejections.map((event) => [event.action_id, event.rejection_reason, event.rejection_source])).toEqual(actions.map((action) => [action.id, "Not this one.", "user"]));

    // The next run tells the LLM what was rejected.
    await h.conversation.run();
    const messages = h.llm.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    expect(messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual(["Action rejected: Not this one.", "Action rejected: Not this one."]);
    expectValidTrajectory(h.host);
  });

  it("does not ask to confirm a lone finish", async () => {
    h = await start({ settings: { confirmation_mode: true } });
    h.llm.play({ toolCalls: [{ name: "finish", arguments: { message: "bye" } }] });
    await h.conversation.sendMessage(userText("Bye"), { run: true });
    await h.conversation.idle();
    expect(h.conversation.executionStatus).toBe("finished");
  });

  it("with the LLM security analyzer, asks for risky actions and for those it cannot rate (no security_risk: UNKNOWN)", async () => {
    h = await start({ settings: { confirmation_mode: true, security_analyzer: "llm" } });
    h.llm.play(
      { toolCalls: [{ name: "terminal", arguments: { command: "ls", security_risk: "LOW" } }] }, // low: runs
      { toolCalls: [{ name: "terminal", arguments: { command: "ls" } }] }, // not rated: UNKNOWN, held (confirm_unknown)
    );
    await h.conversation.sendMessage(userText("Look around"), { run: true });
    await h.conversation.idle();
    expect(h.host.ofKind("ActionEvent").map((action) => action.security_risk)).toEqual(["LOW", "UNKNOWN"]);
    expect(h.host.ofKind("AgentErrorEvent")).toEqual([]);
    expect(h.conversation.executionStatus).toBe("waiting_for_confirmation");
    expect(h.host.ofKind("ObservationEvent")).toHaveLength(1);
    const analyzers = h.host.events.filter((event) => event.kind === "ConversationStateUpdateEvent" && event.key === "security_analyzer");
    expect(analyzers.map((event) => (event as { value: unknown }).value)).toEqual([{ kind: "LLMSecurityAnalyzer" }]);
    expectValidTrajectory(h.host);
  });

  it("an analyzer set on the conversation applies from the next run (the actions' security_risk counts) and stays until the settings' analyzer changes", async () => {
    const analyzers = () => h.host.events.flatMap((event) => (event.kind === "ConversationStateUpdateEvent" && event.key === "security_analyzer" ? [event.value] : []));
    const rated = { toolCalls: [{ name: "task_tracker", arguments: { command: "view", security_risk: "LOW" } }] };
    h = await start();
    // The SystemPromptEvent first (an analyzer set before it would be recorded before it, as in OpenHands).
    await h.conversation.prepare();
    await h.conversation.setSecurityAnalyzer({ kind: "LLMSecurityAnalyzer" });
    h.llm.play(rated, { text: "One." }, rated, { text: "Two." }, rated, { text: "Three." });
    await h.conversation.sendMessage(userText("One"), { run: true });
    await h.conversation.idle();
    await h.conversation.setSecurityAnalyzer(null);
    await h.conversation.sendMessage(userText("Two"), { run: true });
    await h.conversation.idle();
    h.host.currentSettings = { ...h.host.currentSettings, security_analyzer: "llm" };
    await h.conversation.sendMessage(userText("Three"), { run: true });
    await h.conversation.idle();
    // The tools offer security_risk in every run; only an analyzer reads it.
    expect(h.host.ofKind("ActionEvent").map((action) => action.security_risk)).toEqual(["LOW", "UNKNOWN", "LOW"]);
    expect(analyzers()).toEqual([{ kind: "LLMSecurityAnalyzer" }, null, { kind: "LLMSecurityAnalyzer" }]);
    expectValidTrajectory(h.host);
  });

  it("a policy set on the conversation applies from the next step and stays until the settings' policy changes", async () => {
    const states = (key: string) => h.host.events.flatMap((event) => (event.kind === "ConversationStateUpdateEvent" && event.key === key ? [event.value] : []));
    h = await start({ settings: { security_analyzer: "llm" } });
    // The SystemPromptEvent first (a policy set before it would be recorded before it, as in OpenHands).
    await h.conversation.prepare();
    await h.conversation.setConfirmationPolicy({ kind: "ConfirmRisky", threshold: "MEDIUM" });
    await h.conversation.setConfirmationPolicy({ kind: "ConfirmRisky", threshold: "MEDIUM", confirm_unknown: true }); // the same: not recorded again
    expect(states("confirmation_policy")).toEqual([{ kind: "ConfirmRisky", threshold: "MEDIUM", confirm_unknown: true }]);
    h.llm.play(
      { toolCalls: [{ name: "terminal", arguments: { command: "ls", security_risk: "LOW" } }] }, // below MEDIUM: runs
      { toolCalls: [{ name: "terminal", arguments: { command: "rm -rf build", security_risk: "MEDIUM" } }] }, // held
    );
    await h.conversation.sendMessage(userText("Tidy up"), { run: true });
    await h.conversation.idle();
    expect(h.conversation.executionStatus).toBe("waiting_for_confirmation");
    expect(h.host.ofKind("ObservationEvent")).toHaveLength(1);

    // Never confirm: run takes the held action as approved, and the next ones run.
    await h.conversation.setConfirmationPolicy({ kind: "NeverConfirm" });
    h.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "ls", security_risk: "HIGH" } }] }, { text: "Tidy." });
    await h.conversation.run();
    expect(h.conversation.executionStatus).toBe("finished");
    expect(h.host.ofKind("ObservationEvent")).toHaveLength(3);

    // A change of the settings' policy wins from the next run.
    h.host.currentSettings = { ...h.host.currentSettings, confirmation_mode: true };
    h.llm.play({ text: "Ok." });
    await h.conversation.sendMessage(userText("Again"), { run: true });
    await h.conversation.idle();
    expect(states("confirmation_policy").at(-1)).toEqual({ kind: "ConfirmRisky", threshold: "HIGH", confirm_unknown: true });
    expect(states("confirmation_policy")).toHaveLength(3);
    expectValidTrajectory(h.host);
  });
});

describe("pause, interrupt and run", () => {
  it("pauses between steps (the in-flight call finishes first) and resumes on run", async () => {
    h = await start();
    const slow = gate();
    h.llm.play({ hold: slow.promise, toolCalls: [{ name: "think", arguments: { thought: "slow" } }] }, { toolCalls: [{ name: "finish", arguments: { message: "resumed" } }] });
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.llm.waitForRequests(1);
    const paused = h.conversation.pause();
    slow.open();
    await paused;

    expect(h.conversation.executionStatus).toBe("paused");
    expect(timeline(h.host).slice(-4)).toEqual(["ActionEvent:think", "ObservationEvent:ThinkObservation", "status:paused", "PauseEvent"]);
    expect(h.host.statuses.at(-1)).toBe("RUNNING");

    await h.conversation.run();
    expect(h.conversation.executionStatus).toBe("finished");
    expect(timeline(h.host).slice(-5)).toEqual(["PauseEvent", "status:running", "ActionEvent:finish", "ObservationEvent:FinishObservation", "status:finished"]);
    expectValidTrajectory(h.host);
  });

  it("pauses an idle conversation at once, and does nothing to a paused one", async () => {
    h = await start();
    await h.conversation.pause();
    await h.conversation.pause();
    expect(timeline(h.host).slice(-2)).toEqual(["status:paused", "PauseEvent"]);
    expect(h.host.ofKind("PauseEvent")).toHaveLength(1);
  });

  it("interrupts an in-flight LLM call: InterruptEvent, status paused, nothing of the cancelled response", async () => {
    h = await start();
    const never = gate();
    h.llm.play({ hold: never.promise, toolCalls: [{ name: "terminal", arguments: { command: "touch never.txt" } }] }, { text: "back" });
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.llm.waitForRequests(1);
    await h.conversation.interrupt();
    never.open();

    expect(h.conversation.executionStatus).toBe("paused");
    expect(timeline(h.host).slice(-3)).toEqual(["status:running", "status:paused", "InterruptEvent"]);
    expect(h.host.ofKind("ActionEvent")).toEqual([]);

    await h.conversation.run();
    expect(h.conversation.executionStatus).toBe("finished");
    expectValidTrajectory(h.host);
  });

  it("interrupts a running terminal command with Ctrl-C and records its observation", async () => {
    h = await start();
    h.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: `echo started; python3 -c "${FOREGROUND_WAIT}"`, timeout: 900 } }] });
    await h.conversation.sendMessage(userText("Wait"), { run: true });
    // The sandboxed command starts in its own time (vi.waitFor's default 1 s is a wall-clock bound): wait on the flag.
    await vi.waitFor(() => expect(existsSync(path.join(h.host.workspaceDir, "started.flag"))).toBe(true), { timeout: 30_000, interval: 20 });
    await h.conversation.interrupt();

    const [observation] = h.host.ofKind("ObservationEvent");
    expect(observation!.observation).toMatchObject({ kind: "TerminalObservation", exit_code: 130, content: [{ text: "started" }] });
    expect(timeline(h.host).slice(-3)).toEqual(["ObservationEvent:TerminalObservation", "status:paused", "InterruptEvent"]);
    expectValidTrajectory(h.host);
  });

  it("tells the host its state settled when a run ends and after pause and interrupt (where the agent server publishes full_state)", async () => {
    h = await start();
    h.llm.play({ text: "Hi." }, { hold: gate().promise, text: "never" });
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    await h.conversation.idle();
    await vi.waitFor(() => expect(h.host.settledStatuses).toEqual(["finished"]));
    await h.conversation.sendMessage(userText("Wait"), { run: false }); // idle
    await h.conversation.pause();
    await h.conversation.pause(); // no change, published all the same
    await vi.waitFor(() => expect(h.host.settledStatuses).toEqual(["finished", "paused", "paused"]));
    await h.conversation.sendMessage(userText("Again"), { run: true });
    await h.llm.waitForRequests(2);
    await h.conversation.interrupt();
    // The run's end, then the interrupt's answer.
    await vi.waitFor(() => expect(h.host.settledStatuses).toEqual(["finished", "paused", "paused", "paused", "paused"]));
  });

  it("falls back to pause when no run is active", async () => {
    h = await start();
    await h.conversation.interrupt();
    expect(timeline(h.host).slice(-2)).toEqual(["status:paused", "PauseEvent"]);
  });

  it("refuses a second run while one is active, and does nothing on a finished conversation", async () => {
    h = await start();
    const slow = gate();
    h.llm.play({ hold: slow.promise, text: "hi" });
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    expect(() => h.conversation.run()).toThrow(ConversationAlreadyRunningError);
    expect(() => h.conversation.run()).toThrow("Conversation already running. Wait for completion or pause first.");
    slow.open();
    await h.conversation.idle();
    const before = h.host.events.length;
    await h.conversation.run();
    expect(h.host.events.length).toBe(before);
  });
});

describe("user messages", () => {
  it("records a message sent while a step runs when the step ends, and handles it in the same run", async () => {
    h = await start();
    const slow = gate();
    h.llm.play(
      { hold: slow.promise, toolCalls: [{ name: "think", arguments: { thought: "working" } }] },
      { toolCalls: [{ name: "finish", arguments: { message: "saw your note" } }] },
    );
    await h.conversation.sendMessage(userText("Start"), { run: true });
    await h.llm.waitForRequests(1);
    const sent = h.conversation.sendMessage(userText("Also: be brief"));
    slow.open();
    await sent;
    await h.conversation.idle();

    expect(timeline(h.host).slice(2)).toEqual([
      "status:running",
      "ActionEvent:think",
      "ObservationEvent:ThinkObservation",
      "MessageEvent:user",
      "ActionEvent:finish",
      "ObservationEvent:FinishObservation",
      "status:finished",
    ]);
    const messages = h.llm.requests[1]!.body.messages as Array<{ role: string; content: unknown }>;
    expect(messages.at(-1)).toEqual({ role: "user", content: "Also: be brief" });
    expectValidTrajectory(h.host);
  });

  it("run: false only records (a finished conversation becomes idle); run: true after a finished run runs again", async () => {
    h = await start();
    h.llm.play({ text: "first answer" }, { text: "second answer" });
    await h.conversation.sendMessage(userText("One"), { run: true });
    await h.conversation.idle();
    expect(h.conversation.executionStatus).toBe("finished");

    await h.conversation.sendMessage(userText("Two"));
    expect(h.conversation.executionStatus).toBe("idle");
    expect(h.llm.requests).toHaveLength(1);

    await h.conversation.sendMessage(userText("Three"), { run: true });
    await h.conversation.idle();
    expect(h.llm.requests).toHaveLength(2);
    const texts = (h.llm.requests[1]!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "user").map((m) => m.content);
    expect(texts).toEqual(["One", "Two", "Three"]);
    expectValidTrajectory(h.host);
  });

  it("queues a re-run for a message with run: true that arrives as the run finishes", async () => {
    h = await start();
    const slow = gate();
    h.llm.play({ hold: slow.promise, text: "first" }, { text: "answer to the second" });
    await h.conversation.sendMessage(userText("First"), { run: true });
    await h.llm.waitForRequests(1);
    const second = h.conversation.sendMessage(userText("Second"), { run: true });
    slow.open();
    await second;
    await h.conversation.idle();
    expect(timeline(h.host).slice(2)).toEqual([
      "status:running",
      "MessageEvent:agent",
      "status:finished",
      "MessageEvent:user",
      "status:idle",
      "status:running",
      "MessageEvent:agent",
      "status:finished",
    ]);
    expectValidTrajectory(h.host);
  });

  it("takes a message the host recorded itself (userMessageRecorded), with the same run semantics", async () => {
    h = await start();
    h.llm.play({ text: "seen" });
    const event = {
      id: "6f1f8a52-5c1e-4c50-9a43-0d3c51e2a0a1",
      timestamp: new Date().toISOString().replace("Z", ""),
      source: "user" as const,
      llm_message: userText("recorded by the host"),
      kind: "MessageEvent" as const,
    };
    // A new conversation's SystemPromptEvent first, then the host's own record of the message.
    await h.conversation.prepare();
    await h.host.record([event]);
    await h.conversation.userMessageRecorded(event, { run: true });
    await h.conversation.idle();
    const messages = h.llm.requests[0]!.body.messages as Array<{ role: string; content: string }>;
    expect(messages.at(-1)).toEqual({ role: "user", content: "recorded by the host" });
    expect(h.host.ofKind("MessageEvent").filter((message) => message.source === "user")).toHaveLength(1);
    expect(h.host.events[0]!.kind).toBe("SystemPromptEvent");
  });

  it("refuses a message that is not the user's", async () => {
    h = await start();
    await expect(h.conversation.sendMessage({ role: "assistant", content: [] } as never)).rejects.toThrow("Only user messages are allowed to be sent to the agent.");
  });
});

describe("a restart", () => {
  it("marks a conversation stored as running as error, with an AgentErrorEvent for its first unanswered action", async () => {
    // A first server records a run up to an action, then dies (its runtime is never closed).
    const first = await start();
    first.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "sleep 600", timeout: 900 } }, { name: "think", arguments: { thought: "next" } }] });
    await first.conversation.sendMessage(userText("Long job"), { run: true });
    await first.host.waitFor((event) => event.kind === "ActionEvent" && event.tool_name === "think");
    const stored = structuredClone(first.host.events);
    expect(first.host.executionStatuses.at(-1)).toBe("running");

    const host = new MemoryHost({ conversationId: first.host.conversationId, workspaceDir: first.host.workspaceDir, settings: first.host.currentSettings, events: stored });
    const runtime = new AgentRuntime({ llm: openAiLlmFactory() });
    const conversation = await runtime.open(host);

    expect(conversation.executionStatus).toBe("error");
    expect(host.statuses).toEqual(["STARTING", "ERROR"]);
    const added = host.events.slice(stored.length);
    expect(added.map((event) => event.kind)).toEqual(["ConversationStateUpdateEvent", "AgentErrorEvent"]);
    const terminalAction = stored.find((event): event is ActionEvent => event.kind === "ActionEvent" && event.tool_name === "terminal")!;
    expect(added[1]).toMatchObject({
      tool_name: "terminal",
      tool_call_id: terminalAction.tool_call_id,
      error: "A restart occurred while this tool was in progress. This may indicate a fatal memory error or system crash. The tool execution was interrupted and did not complete.",
    });
    expect(host.ofKind("ConversationErrorEvent")).toEqual([]);

    // Run again: the other pending action runs first, then the LLM resumes from the stored history.
    first.llm.play({ text: "recovered" });
    await conversation.run();
    expect(timeline(host).slice(-5)).toEqual(["AgentErrorEvent", "status:running", "ObservationEvent:ThinkObservation", "MessageEvent:agent", "status:finished"]);
    expect(host.ofKind("ObservationEvent").map((event) => event.tool_name)).toEqual(["think"]);
    const messages = first.llm.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    expect(messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
    expect(conversation.executionStatus).toBe("finished");
    await runtime.close();
    expectValidTrajectory(host);
  });

  it("closing a conversation interrupts its run, so the stored status is not running", async () => {
    h = await start();
    const never = gate();
    h.llm.play({ hold: never.promise, text: "never" });
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.llm.waitForRequests(1);
    await h.conversation.close();
    never.open();
    expect(h.host.executionStatuses.at(-1)).toBe("paused");
    expect(h.host.statuses.at(-1)).toBe("STOPPED");
    expect(h.runtime.get(h.host.conversationId)).toBeUndefined();
  });

  it("a conversation being closed is not handed out: get() has none, open() waits for the close and opens it anew", async () => {
    h = await start();
    h.llm.play({ text: "Hello again." });
    const closing = h.conversation.close();
    expect(h.runtime.get(h.host.conversationId)).toBeUndefined();
    const reopened = await h.runtime.open(h.host);
    expect(reopened).not.toBe(h.conversation);
    expect(h.conversation.close()).toBe(closing);
    expect(h.host.statuses.slice(-3)).toEqual(["STOPPED", "STARTING", "RUNNING"]);

    await reopened.sendMessage(userText("Hi"), { run: true });
    await reopened.idle();
    expect(reopened.executionStatus).toBe("finished");
    expect(h.runtime.get(h.host.conversationId)).toBe(reopened);
    expectValidTrajectory(h.host);
  });
});
