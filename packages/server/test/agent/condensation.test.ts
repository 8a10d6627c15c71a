/**
 * Condensation through the server (`enable_default_condenser`): once the history passes the
 * threshold, an LLM summary replaces the oldest events; the Condensation is stored, searchable,
 * pushed once, and the trajectory stays valid.
 */
import { afterEach, expect, it } from "vitest";
import { expectValidRun, startAgentServer, timeline, waitForStatus, type AgentServer } from "./support.js";

let s: AgentServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const think = (thought: string) => ({ toolCalls: [{ name: "think", arguments: { thought } }] });

it("replaces the oldest events with an LLM summary once the history passes the threshold", async () => {
  s = await startAgentServer([], { condenser: { maxSize: 8, keepFirst: 2 } });
  await s.settings({ enable_default_condenser: true });
  const summary = "USER_CONTEXT: think four times. COMPLETED: four thoughts.";
  s.llm.play(think("1"), think("2"), think("3"), think("4"), { text: summary }, { toolCalls: [{ name: "finish", arguments: { message: "done" } }] });
  const { id, peer } = await s.create({ initial_user_msg: "Think four times, then finish." });
  await waitForStatus(peer, "finished");
  const events = await expectValidRun(s.t, id, peer);
  const condensation = events.find((event) => event.kind === "Condensation");
  expect(condensation).toMatchObject({ summary, summary_offset: 2 });
  const forgotten = (condensation as { forgotten_event_ids: string[] }).forgotten_event_ids;
  expect(forgotten.length).toBeGreaterThan(0);
  expect(forgotten.every((forgottenId) => events.some((event) => event.id === forgottenId))).toBe(true);
  expect(timeline(events).slice(-4)).toEqual(["Condensation", "ActionEvent:finish", "ObservationEvent:FinishObservation", "status:finished"]);
  // The call after it sees the summary in place of the forgotten events.
  expect(JSON.stringify(s.llm.requests[5]!.body.messages)).toContain(summary);
  const info = await s.t.call("GET", `/api/conversations/${id}`);
  expect(Object.keys(info.body.stats.usage_to_metrics).sort()).toEqual(["agent", "condenser"]);
});
