/**
 * Today's OpenHands dialect over HTTP: what the agent server's clients send and read.
 * Search takes any kind name, every timestamp form the agent server accepts and an event id as
 * `page_id`; `GET /api/conversations/{id}` carries the agent server's conversation state derived
 * from what was recorded; the send-message body's `run` is a request flag handed to the runtime.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Event, MessageEvent } from "@acs-toolkit/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConversationRuntime } from "../../src/core/runtime.js";
import { KEY, expectConforms, startTestServer, type TestServer } from "../support/harness.js";
import { connectLive, isEventFrame, livePath } from "@acs-toolkit/test-kit/live";

const releases = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../fixtures/openhands-releases");

/** 2026-02-05T11:24:40Z, epoch seconds: event n of a trajectory is at BASE + n seconds. */
const BASE = Date.UTC(2026, 1, 5, 11, 24, 40) / 1000;
const at = (n: number, form: "naive" | "Z" = "naive") => new Date((BASE + n) * 1000).toISOString().replace("Z", form === "Z" ? "Z" : "");

const text = (value: string) => ({ cache_prompt: false, type: "text" as const, text: value });
const userMessageEvent = (n: number, words: string): Event =>
  ({ id: randomUUID(), timestamp: at(n), source: "user", llm_message: { role: "user", content: [text(words)], thinking_blocks: [] }, activated_skills: [], extended_content: [], kind: "MessageEvent" }) as Event;
const stateUpdate = (n: number, key: string, value: unknown): Event => ({ id: randomUUID(), timestamp: at(n), source: "environment", key, value, kind: "ConversationStateUpdateEvent" }) as Event;
const pause = (n: number): Event => ({ id: randomUUID(), timestamp: at(n), source: "user", kind: "PauseEvent" }) as Event;

let t: TestServer;
beforeAll(async () => void (t = await startTestServer()));
afterAll(() => t.close());

async function create(events: Event[]): Promise<string> {
  const reply = await t.call("POST", "/api/conversations", { json: { replay_json: events.map((e) => JSON.stringify(e)).join("\n") } });
  expectConforms("createConversation", reply, 200);
  return reply.body.conversation_id;
}

async function search(id: string, query: Record<string, string | number>) {
  const reply = await t.call("GET", `/api/conversations/${id}/events/search`, { query });
  return reply;
}

/** Seven events one second apart: messages at 0, 2, 4, 6 and pauses at 1, 3, 5. */
const trajectory = () => Array.from({ length: 7 }, (_, n) => (n % 2 ? pause(n) : userMessageEvent(n, `message ${n}`)));

describe("search: kind", () => {
  let id: string;
  let events: Event[];
  beforeAll(async () => void (id = await create((events = trajectory()))));

  it.each([
    ["a short name", "MessageEvent"],
    ["the agent server's qualified path", "openhands.sdk.event.llm_convertible.message.MessageEvent"],
    ["any dotted module path", "my_sdk.events.MessageEvent"],
  ])("takes %s", async (_name, kind) => {
    const reply = await search(id, { kind });
    expectConforms("searchEvents", reply, 200);
    expect(reply.body.items.map((e: Event) => e.id)).toEqual(events.filter((e) => e.kind === "MessageEvent").map((e) => e.id));
    expect((await t.call("GET", `/api/conversations/${id}/events/count`, { query: { kind } })).body).toBe(4);
  });

  it.each(["HookExecutionEvent", "openhands.sdk.event.hook_execution.HookExecutionEvent", "ServerErrorEvent", "SomeKindOfARelease99"])(
    "answers a well-formed kind no event has (%s) with an empty page, as the agent server does",
    async (kind) => {
      const reply = await search(id, { kind });
      expectConforms("searchEvents", reply, 200);
      expect(reply.body).toEqual({ items: [], next_page_id: null });
      expect((await t.call("GET", `/api/conversations/${id}/events/count`, { query: { kind } })).body).toBe(0);
    },
  );

  it.each(["Message Event", "openhands..MessageEvent", ".MessageEvent", "MessageEvent.", "1Event", "Message-Event", ""])("refuses %j with a 422 at kind", async (kind) => {
    for (const operation of ["search", "count"] as const) {
      const reply = await t.call("GET", `/api/conversations/${id}/events/${operation}`, { query: { kind } });
      expectConforms(operation === "search" ? "searchEvents" : "countEvents", reply, 422);
      expect(reply.body.detail[0].loc).toEqual(["query", "kind"]);
    }
  });
});

describe("search: timestamp filters in every form the agent server accepts", () => {
  let id: string;
  let events: Event[];
  beforeAll(async () => void (id = await create((events = trajectory()))));
  const from = (n: number) => events.slice(n).map((e) => e.id);

  it.each<[string, number]>([
    [at(3), 3],
    [at(3, "Z"), 3],
    [at(3).replace("T", " "), 3],
    [at(3).replace("T", "t"), 3],
    [`${at(2).slice(0, 19)},5`, 3],
    [`${at(2).slice(0, 19)}.5000001`, 3],
    [new Date((BASE + 3) * 1000 + 2 * 3_600_000).toISOString().slice(0, 19) + "+02:00", 3],
    [new Date((BASE + 3) * 1000 + 2 * 3_600_000).toISOString().slice(0, 19) + "+0200", 3],
    [new Date((BASE + 3) * 1000 - 30 * 60_000).toISOString().slice(0, 19) + "-00:30", 3],
    [String(BASE + 3), 3],
    [String(BASE + 2.5), 3],
    [String((BASE + 3) * 1000), 3],
    ["2026-02-05T11:24", 0],
    ["2026-02-05T11:25", 7],
    ["2026-02-05", 0],
    ["2026-02-06", 7],
    ["0", 0],
  ])("timestamp__gte=%s", async (value, first) => {
    const reply = await search(id, { timestamp__gte: value });
    expectConforms("searchEvents", reply, 200);
    expect(reply.body.items.map((e: Event) => e.id)).toEqual(from(first));
    expect((await t.call("GET", `/api/conversations/${id}/events/count`, { query: { timestamp__gte: value } })).body).toBe(7 - first);
    // The same instant as an exclusive upper bound keeps the rest.
    const below = await search(id, { timestamp__lt: value });
    expect(below.body.items.map((e: Event) => e.id)).toEqual(events.slice(0, first).map((e) => e.id));
  });

  it.each([
    ["20260205", /^must be an unambiguous date-time: 20260205 reads as a compact date \(write 2026-02-05\) or as epoch seconds \(write 20260205\.0\)$/],
    ["2026-02-30", /^must be a date-time/],
    ["2026-02-05T24:00:00", /^must be a date-time/],
    ["2026-2-5", /^must be a date-time/],
    ["2e10", /^must be a date-time/],
    ["now", /^must be a date-time/],
    ["2026-02-05T11:24:47 02:00", /^must be a date-time/],
  ])("refuses %j with a 422 naming the parameter", async (value, msg) => {
    for (const name of ["timestamp__gte", "timestamp__lt"]) {
      const reply = await search(id, { [name]: value });
      expectConforms("searchEvents", reply, 422);
      expect(reply.body.detail).toEqual([expect.objectContaining({ loc: ["query", name], msg: expect.stringMatching(msg) })]);
    }
  });
});

describe("search: page_id as an event id (the agent server's meaning)", () => {
  let id: string;
  let events: Event[];
  beforeAll(async () => void (id = await create((events = trajectory()))));
  const ids = (list: Event[]) => list.map((e) => e.id);

  it("starts AT that event, inclusive, in either order, then pages on with cursors", async () => {
    const asc = await search(id, { page_id: events[3]!.id, limit: 2 });
    expectConforms("searchEvents", asc, 200);
    expect(asc.body.items.map((e: Event) => e.id)).toEqual(ids(events.slice(3, 5)));
    const next = await search(id, { page_id: asc.body.next_page_id, limit: 2 });
    expect(next.body.items.map((e: Event) => e.id)).toEqual(ids(events.slice(5, 7)));
    expect(next.body.next_page_id).toBeNull();
    const desc = await search(id, { page_id: events[3]!.id, sort_order: "TIMESTAMP_DESC" });
    expect(desc.body.items.map((e: Event) => e.id)).toEqual(ids(events.slice(0, 4)).reverse());
  });

  it("starts at the event's place even when the filters leave it out", async () => {
    const reply = await search(id, { page_id: events[3]!.id, kind: "MessageEvent" }); // event 3 is a pause
    expect(reply.body.items.map((e: Event) => e.id)).toEqual([events[4]!.id, events[6]!.id]);
    const desc = await search(id, { page_id: events[3]!.id, kind: "MessageEvent", sort_order: "TIMESTAMP_DESC" });
    expect(desc.body.items.map((e: Event) => e.id)).toEqual([events[2]!.id, events[0]!.id]);
  });

  it("refuses (422) an id that is no event of this conversation, where the agent server silently starts over", async () => {
    const other = await create(trajectory());
    const otherEvent = (await search(other, { limit: 1 })).body.items[0].id;
    for (const pageId of [randomUUID(), otherEvent, "not-a-cursor"]) {
      const reply = await search(id, { page_id: pageId });
      expectConforms("searchEvents", reply, 422);
      expect(reply.body.detail).toEqual([
        expect.objectContaining({ loc: ["query", "page_id"], msg: "page_id is neither a next_page_id of this server nor the id of an event of this conversation" }),
      ]);
    }
  });
});

describe("GET /api/conversations/{id}: the agent server's conversation state", () => {
  it("an empty conversation: id, execution_status idle, empty stats, the agent server's defaults", async () => {
    const created = await t.call("POST", "/api/conversations", { json: {} });
    const id = created.body.conversation_id;
    const reply = await t.call("GET", `/api/conversations/${id}`);
    expectConforms("getConversation", reply, 200);
    expect(reply.body).toMatchObject({
      conversation_id: id,
      status: "STOPPED",
      event_count: 0,
      id,
      execution_status: "idle",
      stats: { usage_to_metrics: {} },
      confirmation_policy: { kind: "NeverConfirm" },
      max_iterations: 500,
      stuck_detection: true,
      activated_knowledge_skills: [],
      title: null,
    });
    expect(reply.body).not.toHaveProperty("agent");
  });

  it("derives execution_status and stats (full form) from the last recorded updates, and follows what is recorded later", async () => {
    const snapshot = { model_name: "gpt-5", accumulated_cost: 0.25, max_budget_per_task: null, accumulated_token_usage: { model: "gpt-5", prompt_tokens: 10, completion_tokens: 2 } };
    const id = await create([
      userMessageEvent(0, "hi"),
      stateUpdate(1, "execution_status", "running"),
      stateUpdate(2, "stats", { usage_to_metrics: { agent: { model_name: "gpt-5", accumulated_cost: 0.1 } } }),
      stateUpdate(3, "stats", { usage_to_metrics: { agent: snapshot } }),
      stateUpdate(4, "execution_status", "finished"),
      stateUpdate(5, "execution_status", "sleeping"), // not an execution status: ignored
      stateUpdate(6, "confirmation_policy", { kind: "AlwaysConfirm" }),
    ]);
    const reply = await t.call("GET", `/api/conversations/${id}`);
    expectConforms("getConversation", reply, 200);
    expect(reply.body.execution_status).toBe("finished");
    expect(reply.body.stats).toEqual({ usage_to_metrics: { agent: { ...snapshot, costs: [], response_latencies: [], token_usages: [] } } });
    expect(reply.body.confirmation_policy).toEqual({ kind: "AlwaysConfirm" });

    await t.server.conversations.record(id, [stateUpdate(7, "execution_status", "paused")]);
    expect((await t.call("GET", `/api/conversations/${id}`)).body.execution_status).toBe("paused");
    await t.server.conversations.record(id, [stateUpdate(8, "full_state", { execution_status: "waiting_for_confirmation", max_iterations: 30, agent: { kind: "Agent" } })]);
    const after = (await t.call("GET", `/api/conversations/${id}`)).body;
    expect(after).toMatchObject({ execution_status: "waiting_for_confirmation", max_iterations: 30, agent: { kind: "Agent" }, confirmation_policy: { kind: "NeverConfirm" }, stats: { usage_to_metrics: {} } });
  });

  it("a replayed WebSocket capture: the last full_state, overlaid by the updates after it", async () => {
    const text = readFileSync(path.join(releases, "v1.23-websocket-frames.jsonl"), "utf8");
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: text } });
    expectConforms("createConversation", created, 200);
    const id = created.body.conversation_id;
    const frames = text.trim().split("\n").map((line) => JSON.parse(line));
    const lastFullState = frames.filter((f) => f.key === "full_state").at(-1);
    const updatesAfter = frames.slice(frames.indexOf(lastFullState) + 1).filter((f) => f.kind === "ConversationStateUpdateEvent" && f.key === "execution_status");
    const reply = await t.call("GET", `/api/conversations/${id}`);
    expectConforms("getConversation", reply, 200);
    expect(reply.body.id).toBe(id); // the capture's own conversation id is another server's
    expect(reply.body.agent).toEqual(lastFullState.value.agent);
    expect(reply.body.workspace).toEqual(lastFullState.value.workspace);
    expect(reply.body.execution_status).toBe(updatesAfter.at(-1)?.value ?? lastFullState.value.execution_status);
  });

  it("a conversation in ERROR that recorded no execution status is in error", async () => {
    const id = await create([userMessageEvent(0, "hi")]);
    await t.server.store.setStatus(id, "ERROR");
    expect((await t.call("GET", `/api/conversations/${id}`)).body).toMatchObject({ status: "ERROR", execution_status: "error" });
  });
});

describe("POST /api/conversations/{id}/events: run is a request flag", () => {
  it("never records run (nor unknown keys), and the response is the recorded event", async () => {
    const id = await create(trajectory());
    const sent = await t.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [text("go")], run: true, client_hint: 1 } });
    expectConforms("sendMessage", sent, 200);
    expect(sent.body.llm_message).toEqual({ role: "user", content: [text("go")] });
    const listed = (await search(id, { kind: "MessageEvent", sort_order: "TIMESTAMP_DESC", limit: 1 })).body.items[0];
    expect(listed).toEqual(sent.body);
    expect(JSON.stringify(listed)).not.toMatch(/"run"|client_hint/);
  });

  it("refuses a run that is not a boolean (422 at run)", async () => {
    const id = await create(trajectory());
    const reply = await t.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [], run: "yes" } });
    expectConforms("sendMessage", reply, 422);
    expect(reply.body.detail[0].loc).toEqual(["body", "run"]);
  });

  it("hands the flag to the runtime: over HTTP as sent (false by default), on the live channel always true", async () => {
    const calls: Array<{ text: string; run: boolean }> = [];
    const runtime: ConversationRuntime = {
      initialStatus: "STOPPED",
      start() {},
      onUserMessage(_conversation, message: MessageEvent, _context, { run }) {
        calls.push({ text: (message.llm_message.content![0] as { text: string }).text, run });
      },
    };
    const own = await startTestServer([], {}, undefined, { runtime });
    try {
      const id = (await own.call("POST", "/api/conversations", { json: {} })).body.conversation_id;
      for (const body of [{}, { run: false }, { run: true }]) {
        const reply = await own.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [text(JSON.stringify(body))], ...body } });
        expectConforms("sendMessage", reply, 200);
      }
      const socket = connectLive(own.url, livePath(id), { headers: { "X-Session-API-Key": KEY } });
      await socket.waitFor(1);
      socket.send({ role: "user", content: [text("over the socket")], run: false });
      await socket.waitFor(1, isEventFrame);
      socket.ws.terminate();
      expect(calls).toEqual([
        { text: "{}", run: false },
        { text: '{"run":false}', run: false },
        { text: '{"run":true}', run: true },
        { text: "over the socket", run: true },
      ]);
    } finally {
      await own.close();
    }
  });
});
