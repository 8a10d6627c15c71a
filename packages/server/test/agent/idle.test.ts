/**
 * An agent conversation that has not run for --agent-idle-seconds is closed (its shell stops, its
 * status becomes STOPPED) and reopened by the next message, with nothing lost.
 */
import { afterEach, expect, it, vi } from "vitest";
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
