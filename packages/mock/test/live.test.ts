/**
 * The live channel of the mock (the server's channel on the mock's world): a scenario streams when its
 * first client subscribes, a message gets a scripted turn back, resume with after_id, every frame valid.
 */
import { validateEvent } from "@acs-toolkit/validator";
import { afterEach, describe, expect, it } from "vitest";
import { connectLive, isEventFrame, livePath, type Frame } from "@acs-toolkit/test-kit/live";
import { KEY, startTestMock, type TestMock } from "./support.js";

let t: TestMock | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const expectValidEvents = (frames: Frame[]) => {
  for (const frame of frames.filter((f) => f.value.kind)) expect(validateEvent(frame.value).errors, frame.text).toEqual([]);
};

describe("live events from the mock", () => {
  it("a scenario streams, paced by the speed factor, once its first client subscribes", async () => {
    t = await startTestMock({ scenarios: ["happy"], speed: 200 });
    const scenario = t.mock.world.scenarios[0]!;
    // Before anyone subscribes, only the history is stored.
    expect((await t.call("GET", `/api/conversations/${scenario.conversationId}/events/count`)).body).toBe(scenario.preload);
    const peer = connectLive(t.url, livePath(scenario.conversationId, { resend_all: "true" }));
    const frames = await peer.waitFor(scenario.events.length, isEventFrame);
    expect(peer.frames[0]!.value).toMatchObject({ kind: "ConversationStateUpdateEvent", key: "full_state", value: { conversation_id: scenario.conversationId, event_count: scenario.preload } });
    // The history as recorded; what streams, as recorded but for the time it was delivered.
    expect(frames.slice(0, scenario.preload).map((f) => f.text)).toEqual(scenario.events.slice(0, scenario.preload).map((e) => JSON.stringify(e)));
    const untimed = ({ timestamp: _, ...rest }: { timestamp: string }) => rest;
    expect(frames.map((f) => untimed(f.value))).toEqual(scenario.events.map(untimed));
    const streamed = frames.slice(scenario.preload).map((f) => f.value.timestamp as string);
    expect(streamed).toEqual([...streamed].sort());
    expect(streamed[0]! > scenario.events[scenario.preload - 1]!.timestamp).toBe(true);
    expectValidEvents(peer.frames);
    peer.ws.close();
  });

  it("a message sent while a scenario streams sorts in search where it arrived live", async () => {
    t = await startTestMock({ scenarios: ["happy"], speed: 20 });
    const scenario = t.mock.world.scenarios[0]!;
    const peer = connectLive(t.url, livePath(scenario.conversationId, { resend_all: "true" }), { headers: { "X-Session-API-Key": KEY } });
    await peer.waitFor(scenario.preload + 1, isEventFrame);
    peer.send({ role: "user", content: [{ type: "text", text: "While you are at it, run the linter" }] });
    // Everything: the scenario, the message and the scripted turn (5 events).
    const live = (await peer.waitFor(scenario.events.length + 6, isEventFrame)).map((f) => f.value.id as string);
    const found = await t.call("GET", `/api/conversations/${scenario.conversationId}/events/search`, { query: { limit: 100 } });
    expect(found.body.items.map((e: { id: string }) => e.id)).toEqual(live);
    peer.ws.close();
  });

  it("a message sent in gets the agent's turn back: action, observation, reply", async () => {
    t = await startTestMock({ scenarios: ["happy"], speed: "instant" });
    const id = t.mock.world.scenarios[0]!.conversationId;
    const peer = connectLive(t.url, livePath(id), { headers: { "X-Session-API-Key": KEY } });
    await peer.waitFor(1);
    peer.send({ role: "user", content: [{ type: "text", text: "Please add a changelog entry" }] });
    const events = (await peer.waitFor(6, isEventFrame)).map((f) => f.value);
    expect(events.map((e) => e.kind)).toEqual(["MessageEvent", "ConversationStateUpdateEvent", "ActionEvent", "ObservationEvent", "MessageEvent", "ConversationStateUpdateEvent"]);
    expect(events[0]).toMatchObject({ source: "user", llm_message: { content: [{ text: "Please add a changelog entry" }] } });
    expect(events[3].action_id).toBe(events[2].id);
    expect(events[4]).toMatchObject({ source: "agent", llm_message: { role: "assistant" } });
    expect(events[4].llm_message.content[0].text).toContain("Please add a changelog entry");
    expectValidEvents(peer.frames);
    peer.send("not json");
    const [error] = await peer.waitFor(1, (f) => f.value.kind === "ServerErrorEvent");
    expect(error!.value).toMatchObject({ code: "JSONDecodeError", detail: expect.stringMatching(/^message\.0: /) }); // where the text breaks
    peer.ws.close();
  });

  it("resumes with after_id exactly after the last event received", async () => {
    t = await startTestMock({ scenarios: ["confirmation"], speed: "instant" });
    const scenario = t.mock.world.scenarios[0]!;
    const cut = scenario.events[10]!;
    const peer = connectLive(t.url, livePath(scenario.conversationId, { after_id: cut.id }));
    const frames = await peer.waitFor(scenario.events.length - 11, isEventFrame);
    expect(frames.map((f) => f.value.id)).toEqual(scenario.events.slice(11).map((e) => e.id));
    peer.ws.close();
    const unknown = connectLive(t.url, livePath(scenario.conversationId, { after_id: "nope" }));
    expect((await unknown.closed).code).toBe(4400);
  });

  it("an unknown conversation closes with 4004; with --private-read no key closes with 4001", async () => {
    t = await startTestMock({ scenarios: ["happy"], publicRead: false });
    const missing = connectLive(t.url, livePath("00000000-0000-4000-8000-00000000beef"), { headers: { "X-Session-API-Key": KEY } });
    expect((await missing.closed).code).toBe(4004);
    const anonymous = connectLive(t.url, livePath(t.mock.world.scenarios[0]!.conversationId));
    await anonymous.opened;
    anonymous.send({ type: "auth", session_api_key: "wrong" });
    expect((await anonymous.closed).code).toBe(4001);
  });
});
