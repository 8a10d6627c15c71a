/**
 * Full conversations run by the agent runtime inside the reference server, over HTTP and the live
 * channel, against the scripted LLM: each trajectory passes the validator with every sequence rule
 * and the live channel delivers it exactly once.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { gate } from "@acs-toolkit/agent/test-kit";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentConversationRuntime } from "../../src/llm-agent-runtime.js";
import { expectConforms } from "../support/harness.js";
import type { Frame } from "@acs-toolkit/test-kit/live";
import { validateEvent } from "@acs-toolkit/validator";
import { LLM_KEY, expectValidRun, startAgentServer, statusFrame, stored, timeline, waitForStatus, type AgentServer } from "./support.js";

let s: AgentServer;
beforeEach(async () => {
  s = await startAgentServer();
  await s.settings();
});
afterEach(async () => {
  await s.close();
});

const userMessage = (text: string, run = true) => ({ role: "user", content: [{ type: "text", text }], run });

/**
 * A spy on one control of the open agent conversation `id`: once it has been called, the request
 * has reached the agent (a message sent during a step is queued by then, a pause is requested).
 */
function reachedAgent(id: string, control: "sendMessage" | "pause") {
  const conversation = (s.t.server.runtime as AgentConversationRuntime).agent.get(id);
  expect(conversation, "the conversation is open").toBeDefined();
  return vi.spyOn(conversation!, control);
}

describe("the agent runs conversations", () => {
  it("creates with initial_user_msg: STARTING, then a terminal command that writes a file and finish", async () => {
    s.llm.play(
      { toolCalls: [{ name: "terminal", arguments: { command: "echo 'hi from the sandbox' > note.txt" } }] },
      { toolCalls: [{ name: "finish", arguments: { message: "Wrote note.txt." } }] },
    );
    const { id, peer, reply } = await s.create({ initial_user_msg: "Write a note" });
    expectConforms("createConversation", reply, 200);
    expect(reply.body.conversation_status).toBe("STARTING");
    await waitForStatus(peer, "finished");
    const events = await expectValidRun(s.t, id, peer);
    expect(timeline(events)).toEqual([
      "SystemPromptEvent",
      "MessageEvent:user",
      "status:running",
      "ActionEvent:terminal",
      "ObservationEvent:TerminalObservation",
      "ActionEvent:finish",
      "ObservationEvent:FinishObservation",
      "status:finished",
    ]);
    const info = await s.t.call("GET", `/api/conversations/${id}`);
    expectConforms("getConversation", info, 200);
    expect(info.body).toMatchObject({ status: "RUNNING", execution_status: "finished" });
    expect(info.body.stats.usage_to_metrics.agent.accumulated_token_usage.prompt_tokens).toBeGreaterThan(0);
    expect(await readFile(path.join(s.t.dataDir, "uploads", id, "note.txt"), "utf8")).toBe("hi from the sandbox\n");
    expect(JSON.stringify(events)).not.toContain(LLM_KEY);
  });
});

describe("messages, uploads and the live channel", () => {
  it("an uploaded file is in the workspace; a message with run: true runs the agent; the live channel delivers every event once, live", async () => {
    const { id, peer } = await s.create();
    await vi.waitFor(async () => expect((await s.t.call("GET", `/api/conversations/${id}`)).body.status).toBe("RUNNING"), { timeout: 10_000, interval: 20 });
    const form = new FormData();
    form.append("files", new Blob(["uploaded bytes\n"]), "data.txt");
    expect((await s.t.call("POST", `/api/conversations/${id}/upload-files`, { body: form })).status).toBe(200);
    s.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "cp data.txt copy.txt && cat copy.txt" } }] }, { text: "Copied." });

    const sent = await s.t.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Copy data.txt") });
    expectConforms("sendMessage", sent, 200);
    await waitForStatus(peer, "finished");
    const events = await expectValidRun(s.t, id, peer);
    expect(events.some((event) => event.id === sent.body.id)).toBe(true);
    const observation = events.find((event) => event.kind === "ObservationEvent")!;
    expect(JSON.stringify(observation)).toContain("uploaded bytes");
    const download = await s.t.call("GET", `/api/conversations/${id}/files/copy.txt`);
    expect(download.text).toBe("uploaded bytes\n");
    expect(timeline(events).slice(-2)).toEqual(["MessageEvent:agent", "status:finished"]);
  });

  it("a message without run is recorded and waits; POST …/run runs it", async () => {
    const { id, peer } = await s.create();
    s.llm.play({ text: "Hello!" });
    expectConforms("sendMessage", await s.t.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Hi", false) }), 200);
    expect(s.llm.requests).toHaveLength(0);
    const run = await s.t.call("POST", `/api/conversations/${id}/run`);
    expectConforms("runConversation", run, 200);
    expect(run.body).toEqual({ success: true });
    await waitForStatus(peer, "finished");
    await expectValidRun(s.t, id, peer);
  });

  it("a message on the live channel always runs the agent", async () => {
    const { id, peer } = await s.create();
    s.llm.play({ text: "Hello from the socket!" });
    await vi.waitFor(async () => expect((await s.t.call("GET", `/api/conversations/${id}`)).body.status).toBe("RUNNING"), { timeout: 10_000, interval: 20 });
    peer.send({ role: "user", content: [{ type: "text", text: "Hi" }] });
    await waitForStatus(peer, "finished");
    await expectValidRun(s.t, id, peer);
  });

  it("a user message sent while a step runs is recorded when the step ends; the next step reads it", async () => {
    const held = gate();
    s.llm.play({ hold: held.promise, toolCalls: [{ name: "think", arguments: { thought: "first" } }] }, { text: "Both done." });
    const { id, peer } = await s.create({ initial_user_msg: "First" });
    await vi.waitFor(() => expect(s.llm.requests).toHaveLength(1), { timeout: 10_000, interval: 10 });
    const sent = reachedAgent(id, "sendMessage");
    const second = s.t.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Second") });
    // The message reaches the agent while the step is held (queued until the step ends), not after.
    await vi.waitFor(() => expect(sent).toHaveBeenCalledOnce(), { timeout: 10_000, interval: 5 });
    held.open();
    expectConforms("sendMessage", await second, 200);
    await waitForStatus(peer, "finished");
    const events = await expectValidRun(s.t, id, peer);
    // The second message comes after the think step's observation, not inside it.
    expect(timeline(events).slice(1)).toEqual([
      "MessageEvent:user",
      "status:running",
      "ActionEvent:think",
      "ObservationEvent:ThinkObservation",
      "MessageEvent:user",
      "MessageEvent:agent",
      "status:finished",
    ]);
    expect(JSON.stringify(s.llm.requests[1]!.body.messages)).toContain("Second");
  });
});

describe("errors the loop goes on after, and errors that stop it", () => {
  it("an unknown tool and malformed argument JSON give AgentErrorEvents, and the loop goes on", async () => {
    s.llm.play(
      { toolCalls: [{ name: "no_such_tool", arguments: {} }] },
      { toolCalls: [{ name: "terminal", arguments: '{"command": "ls -la", "is_input": fals' }] },
      { toolCalls: [{ name: "finish", arguments: { message: "gave up" } }] },
    );
    const { id, peer } = await s.create({ initial_user_msg: "Try things" });
    await waitForStatus(peer, "finished");
    const events = await expectValidRun(s.t, id, peer);
    const errors = events.filter((event) => event.kind === "AgentErrorEvent");
    expect(errors).toHaveLength(2);
    expect(JSON.stringify(errors[0])).toContain("no_such_tool");
  });

  it("an LLM 401 stops the run: ConversationErrorEvent classified auth, execution_status error, status ERROR", async () => {
    s.llm.play({ status: 401, body: { error: { message: "Incorrect API key provided.", type: "invalid_request_error", code: "invalid_api_key" } } });
    const { id, peer } = await s.create({ initial_user_msg: "Hi" });
    await waitForStatus(peer, "error");
    const events = await expectValidRun(s.t, id, peer);
    expect(events.find((event) => event.kind === "ConversationErrorEvent")).toMatchObject({
      code: "LLMAuthenticationError",
      classification: { kind: "auth", retryable: false, user_action: "settings" },
    });
    const info = await s.t.call("GET", `/api/conversations/${id}`);
    expectConforms("getConversation", info, 200);
    expect(info.body).toMatchObject({ status: "ERROR", execution_status: "error" });
    expect(JSON.stringify(events)).not.toContain(LLM_KEY);
  });

  it("an LLM 429 is retried after its Retry-After, and the run goes on", async () => {
    s.llm.play({ status: 429, headers: { "retry-after": "0" } }, { text: "Hello!" });
    const { id, peer } = await s.create({ initial_user_msg: "Hi" });
    await waitForStatus(peer, "finished");
    await expectValidRun(s.t, id, peer);
    expect(s.llm.requests).toHaveLength(2);
  });

  it("max_iterations from the settings stops the run with MaxIterationsReached", async () => {
    await s.settings({ max_iterations: 2 });
    s.llm.play(...Array.from({ length: 3 }, (_, n) => ({ toolCalls: [{ name: "think", arguments: { thought: `step ${n}` } }] })));
    const { id, peer } = await s.create({ initial_user_msg: "Think forever" });
    await waitForStatus(peer, "error");
    const events = await expectValidRun(s.t, id, peer);
    expect(events.find((event) => event.kind === "ConversationErrorEvent")).toMatchObject({ code: "MaxIterationsReached" });
    expect(s.llm.requests).toHaveLength(2);
  });
});

describe("confirmation mode", () => {
  beforeEach(() => s.settings({ confirmation_mode: true }));

  it("holds the action until respond_to_confirmation accepts it", async () => {
    s.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "touch approved.txt" } }] }, { toolCalls: [{ name: "finish", arguments: { message: "done" } }] });
    const { id, peer } = await s.create({ initial_user_msg: "Touch a file" });
    await waitForStatus(peer, "waiting_for_confirmation");
    // The agent server's clients read the policy from ConversationInfo (getConfirmationPolicy()).
    expect((await s.t.call("GET", `/api/conversations/${id}`)).body.confirmation_policy).toEqual({ kind: "AlwaysConfirm" });
    const reply = await s.t.call("POST", `/api/conversations/${id}/events/respond_to_confirmation`, { json: { accept: true } });
    expectConforms("respondToConfirmation", reply, 200);
    expect(reply.body).toEqual({ success: true });
    await waitForStatus(peer, "finished");
    const events = await expectValidRun(s.t, id, peer);
    expect(timeline(events).slice(-7)).toEqual([
      "ActionEvent:terminal",
      "status:waiting_for_confirmation",
      "status:running",
      "ObservationEvent:TerminalObservation",
      "ActionEvent:finish",
      "ObservationEvent:FinishObservation",
      "status:finished",
    ]);
  });

  it("confirmation_policy changes the policy of a conversation: recorded, in its state, applied from the next step", async () => {
    await s.settings({ confirmation_mode: false });
    s.llm.play({ text: "Ready." }, { toolCalls: [{ name: "terminal", arguments: { command: "touch held.txt" } }] });
    const { id, peer } = await s.create({ initial_user_msg: "Wait" });
    await waitForStatus(peer, "finished");
    const reply = await s.t.call("POST", `/api/conversations/${id}/confirmation_policy`, { json: { policy: { kind: "AlwaysConfirm" }, ignored: true } });
    expectConforms("setConfirmationPolicy", reply, 200);
    expect(reply.body).toEqual({ success: true });
    expect((await s.t.call("GET", `/api/conversations/${id}`)).body.confirmation_policy).toEqual({ kind: "AlwaysConfirm" });

    expect((await s.t.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Touch a file") })).status).toBe(200);
    await waitForStatus(peer, "waiting_for_confirmation");
    const events = await expectValidRun(s.t, id, peer);
    const policies = events.flatMap((event) => (event.kind === "ConversationStateUpdateEvent" && event.key === "confirmation_policy" ? [event.value] : []));
    expect(policies).toEqual([{ kind: "AlwaysConfirm" }]);
    expect(timeline(events).slice(-2)).toEqual(["ActionEvent:terminal", "status:waiting_for_confirmation"]);
  });

  it("a rejection records a UserRejectObservation with the reason, and the conversation is idle", async () => {
    s.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "rm -rf data" } }] });
    const { id, peer } = await s.create({ initial_user_msg: "Clean up" });
    await waitForStatus(peer, "waiting_for_confirmation");
    const reply = await s.t.call("POST", `/api/conversations/${id}/events/respond_to_confirmation`, { json: { accept: false, reason: "Not this one." } });
    expectConforms("respondToConfirmation", reply, 200);
    await waitForStatus(peer, "idle");
    const events = await expectValidRun(s.t, id, peer);
    expect(events.at(-1)).toMatchObject({ kind: "UserRejectObservation", rejection_reason: "Not this one.", rejection_source: "user" });
    expect((await s.t.call("GET", `/api/conversations/${id}`)).body.execution_status).toBe("idle");
  });
});

describe("pause, interrupt and run", () => {
  it("pause waits for the step, records a PauseEvent; run resumes to the end", async () => {
    const held = gate();
    s.llm.play({ hold: held.promise, toolCalls: [{ name: "think", arguments: { thought: "slow" } }] }, { text: "Resumed and done." });
    const { id, peer } = await s.create({ initial_user_msg: "Go" });
    await vi.waitFor(() => expect(s.llm.requests).toHaveLength(1), { timeout: 10_000, interval: 10 });
    const running = await s.t.call("POST", `/api/conversations/${id}/run`);
    expectConforms("runConversation", running, 409);
    expect(running.body).toEqual({ detail: "Conversation already running. Wait for completion or pause first." });
    const pauseRequested = reachedAgent(id, "pause");
    const pause = s.t.call("POST", `/api/conversations/${id}/pause`);
    // The pause reaches the agent while the step is held, and waits for it.
    await vi.waitFor(() => expect(pauseRequested).toHaveBeenCalledOnce(), { timeout: 10_000, interval: 5 });
    held.open();
    const paused = await pause;
    expectConforms("pauseConversation", paused, 200);
    expect((await s.t.call("GET", `/api/conversations/${id}`)).body.execution_status).toBe("paused");
    expect(s.llm.requests).toHaveLength(1);

    expectConforms("runConversation", await s.t.call("POST", `/api/conversations/${id}/run`), 200);
    await waitForStatus(peer, "finished");
    const events = await expectValidRun(s.t, id, peer);
    expect(timeline(events).slice(2)).toEqual([
      "status:running",
      "ActionEvent:think",
      "ObservationEvent:ThinkObservation",
      "status:paused",
      "PauseEvent",
      "status:running",
      "MessageEvent:agent",
      "status:finished",
    ]);
  });

  it("after a run ends, a pause and an interrupt, live subscribers get the full_state, not stored (as the agent server publishes it)", async () => {
    const fullState = (frame: Frame) => frame.value.key === "full_state";
    const held = gate();
    s.llm.play({ text: "Done." }, { hold: held.promise, text: "never delivered" });
    const { id, peer } = await s.create({ initial_user_msg: "Go" });
    const [, afterRun] = await peer.waitFor(2, fullState, 30_000); // the opening frame, then the run's end
    expect(afterRun!.value.value).toMatchObject({ conversation_id: id, conversation_status: "RUNNING", execution_status: "finished" });
    expect(afterRun!.value.value.last_event_id).toBe((await stored(s.t, id)).at(-1)!.id);

    expect((await s.t.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Wait", false) })).status).toBe(200);
    expectConforms("pauseConversation", await s.t.call("POST", `/api/conversations/${id}/pause`), 200);
    const afterPause = (await peer.waitFor(3, fullState, 30_000))[2]!;
    expect(afterPause.value.value).toMatchObject({ execution_status: "paused" });

    expect((await s.t.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Go on") })).status).toBe(200);
    await vi.waitFor(() => expect(s.llm.requests).toHaveLength(2), { timeout: 10_000, interval: 10 });
    expectConforms("interruptConversation", await s.t.call("POST", `/api/conversations/${id}/interrupt`), 200);
    held.open();
    const frames = await peer.waitFor(5, fullState, 30_000); // the run's end, then the interrupt's answer
    for (const frame of frames.slice(3)) expect(frame.value.value).toMatchObject({ execution_status: "paused" });
    for (const frame of frames) expect(validateEvent(frame.value).ok).toBe(true);

    const events = await expectValidRun(s.t, id, peer);
    expect(events.filter((event) => event.kind === "ConversationStateUpdateEvent" && event.key === "full_state")).toEqual([]);
  });

  it("interrupt cancels the LLM call now: InterruptEvent, paused", async () => {
    const held = gate();
    s.llm.play({ hold: held.promise, text: "never delivered" });
    const { id, peer } = await s.create({ initial_user_msg: "Go" });
    await vi.waitFor(() => expect(s.llm.requests).toHaveLength(1), { timeout: 10_000, interval: 10 });
    const reply = await s.t.call("POST", `/api/conversations/${id}/interrupt`, { json: {} });
    expectConforms("interruptConversation", reply, 200);
    held.open();
    await peer.waitFor(1, statusFrame("paused"));
    const events = await expectValidRun(s.t, id, peer);
    expect(events.some((event) => event.kind === "InterruptEvent")).toBe(true);
    expect(events.some((event) => event.kind === "MessageEvent" && event.source === "agent")).toBe(false);
  });
});

describe("deleting a conversation the agent runs", () => {
  it("stops the run, removes the conversation and its workspace, closes its live connections; the step's end writes nothing back", async () => {
    const held = gate();
    s.llm.play({ hold: held.promise, toolCalls: [{ name: "think", arguments: { thought: "never recorded" } }] }, { text: "Never said." });
    const { id, peer } = await s.create({ initial_user_msg: "Think for a while" });
    await vi.waitFor(() => expect(s.llm.requests).toHaveLength(1), { timeout: 10_000, interval: 10 });
    const deleted = await s.t.call("DELETE", `/api/conversations/${id}`);
    expectConforms("deleteConversation", deleted, 200);
    expect((await peer.closed).code).toBe(4004);
    held.open();
    expectConforms("getConversation", await s.t.call("GET", `/api/conversations/${id}`), 404);
    await expect(readFile(path.join(s.t.dataDir, "uploads", id, "x"))).rejects.toMatchObject({ code: "ENOENT" });
    expect((await s.t.call("POST", `/api/conversations/${id}/run`)).status).toBe(404);
    // The same id, created again as a recording, is no agent's.
    expect((await s.t.call("POST", "/api/conversations", { json: { conversation_id: id, replay_json: "[]" } })).status).toBe(200);
    expect((await s.t.call("POST", `/api/conversations/${id}/run`)).body).toEqual({ detail: expect.stringMatching(/^No agent runs this conversation/) });
    expect(s.llm.requests).toHaveLength(1);
  });
});
