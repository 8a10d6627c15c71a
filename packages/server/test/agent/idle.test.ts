/**
 * An agent conversation that has not run for --agent-idle-seconds is closed (its shell stops, its
 * status becomes STOPPED) and reopened by the next message, with nothing lost.
 */
import { afterEach, expect, it, vi } from "vitest";
import type { AgentConversationRuntime } from "../../src/llm-agent-runtime.js";
import { expectConforms } from "../support/harness.js";
import { expectValidRun, startAgentServer, timeline, waitForStatus, type AgentServer } from "./support.js";

let s: AgentServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

it("closes an idle conversation (STOPPED) and reopens it on the next message", async () => {
  s = await startAgentServer(["--agent-idle-seconds", "1"]);
  await s.settings();
  s.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "export MARK=first; echo $MARK" } }] }, { text: "First." }, { toolCalls: [{ name: "terminal", arguments: { command: "echo mark=${MARK:-gone}" } }] }, { text: "Second." });
  const { id, peer } = await s.create({ initial_user_msg: "One" });
  await waitForStatus(peer, "finished");
  await vi.waitFor(async () => expect((await s!.t.call("GET", `/api/conversations/${id}`)).body.status).toBe("STOPPED"), { timeout: 10_000, interval: 100 });

  const sent = await s.t.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [{ type: "text", text: "Two" }], run: true } });
  expect(sent.status).toBe(200);
  await waitForStatus(peer, "finished", 2);
  const events = await expectValidRun(s.t, id, peer);
  // A new shell: the variable of the first one is gone.
  expect(JSON.stringify(events.filter((event) => event.kind === "ObservationEvent").at(-1))).toContain("mark=gone");
  expect(timeline(events).filter((kind) => kind === "SystemPromptEvent")).toHaveLength(1);
  const statuses = events.flatMap((event) => (event.kind === "ConversationStateUpdateEvent" && event.key === "conversation_status" ? [event.value] : []));
  expect(statuses).toEqual(["RUNNING", "STOPPED", "STARTING", "RUNNING"]);
});

it("a message and a run that come while the idle close runs reopen the conversation (never a 500)", async () => {
  s = await startAgentServer(["--agent-idle-seconds", "3600"]);
  await s.settings();
  s.llm.play({ text: "First." }, { text: "Second." }, { text: "Third." });
  const { id, peer } = await s.create({ initial_user_msg: "One" });
  await waitForStatus(peer, "finished");
  const runtime = s.t.server.runtime as AgentConversationRuntime;
  const context = s.t.server.conversations.contextFor(id);

  // The sweep starts closing the conversation at once (nothing has run for 0 ms); the message
  // comes in the same turn, while the close is under way.
  const sweep = runtime.closeIdle(0);
  const sent = runtime.sendMessage!(id, { role: "user", content: [{ type: "text", text: "Two" }] }, context, { run: true });
  await expect(sent).resolves.toMatchObject({ kind: "MessageEvent", source: "user" });
  await sweep;
  await waitForStatus(peer, "finished", 2);

  expect((await s.t.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [{ type: "text", text: "Three" }] } })).status).toBe(200);
  const swept = runtime.closeIdle(0);
  await expect(runtime.controls.run(id, context)).resolves.toBeUndefined();
  await swept;
  await waitForStatus(peer, "finished", 3);
  const events = await expectValidRun(s.t, id, peer);
  const statuses = events.flatMap((event) => (event.kind === "ConversationStateUpdateEvent" && event.key === "conversation_status" ? [event.value] : []));
  expect(statuses).toEqual(["RUNNING", "STOPPED", "STARTING", "RUNNING", "STOPPED", "STARTING", "RUNNING"]);
});

it("a message or a control for the agent while the server stops is a documented 503 with Retry-After, and records nothing", async () => {
  s = await startAgentServer();
  await s.settings();
  s.llm.play({ text: "First." });
  const { id, peer } = await s.create({ initial_user_msg: "One" });
  await waitForStatus(peer, "finished");
  // The runtime stops first (the server's shutdown), while HTTP still answers.
  await (s.t.server.runtime as AgentConversationRuntime).close();
  const before = (await s.t.call("GET", `/api/conversations/${id}/events/count`)).body as number;
  const sent = await s.t.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [{ type: "text", text: "Two" }], run: true } });
  expect(sent.status, sent.text).toBe(503);
  expect(sent.headers.get("retry-after")).toBe("1");
  expectConforms("sendMessage", sent, 503);
  const paused = await s.t.call("POST", `/api/conversations/${id}/pause`);
  expect(paused.status, paused.text).toBe(503);
  expectConforms("pauseConversation", paused, 503);
  expect((await s.t.call("GET", `/api/conversations/${id}/events/count`)).body).toBe(before);
});

