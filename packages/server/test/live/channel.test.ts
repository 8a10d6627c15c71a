/**
 * The live channel over real WebSocket connections to a real server: first frame, replay, resume,
 * the exact join of stored and live events, inbound messages, auth, close codes, slow consumers,
 * heartbeats and shutdown.
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { LIVE_ONLY_EVENT_KINDS } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { validateEvent } from "@acs-toolkit/validator";
import { asyncapiDocument } from "@acs-toolkit/schema/documents";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Socket } from "node:net";
import { CATCH_UP_PAGE_BYTES, LIVE_CLOSE } from "../../src/live/channel.js";
import { KEY, expectConforms, startTestServer, type TestServer } from "../support/harness.js";
import { connectLive, isErrorFrame, isEventFrame, livePath, type LivePeer } from "@acs-toolkit/test-kit/live";

let t: TestServer;
const peers: LivePeer[] = [];
const peer = (path: string, options: Parameters<typeof connectLive>[2] = { headers: { "X-Session-API-Key": KEY } }) => {
  const p = connectLive(t.url, path, options);
  peers.push(p);
  return p;
};
const withKey = { headers: { "X-Session-API-Key": KEY } };

beforeAll(async () => {
  t = await startTestServer([], {}, undefined, { live: { authTimeoutMs: 300, maxBufferedBytes: 256 * 1024, replayPageSize: 7 } });
});
afterEach(async () => {
  for (const p of peers.splice(0)) p.ws.terminate();
});
afterAll(async () => {
  await t?.close();
});

// What an agent server stores: no live-only kinds (a ServerErrorEvent frame is then always an answer).
const replay = exampleEvents().filter((event) => !(LIVE_ONLY_EVENT_KINDS as readonly string[]).includes(event.kind));

async function createConversation(events = replay): Promise<string> {
  const reply = await t.call("POST", "/api/conversations", { json: { replay_json: JSON.stringify(events) } });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.conversation_id;
}

const userMessage = (text: string) => ({ role: "user", content: [{ type: "text", text }] });

async function storedIds(id: string): Promise<string[]> {
  return (await t.server.store.readAfter(id, 0, 1_000_000)).map((e) => e.id);
}

/**
 * Appends a message to `id` every event-loop turn, connects the subscribers `connect` makes once
 * appending has begun, and stops once each has received an event appended after its socket
 * opened: each then went from its replay to live events while appends went on (a fixed window
 * may end before a slow subscriber gets there).
 */
async function appendWhileJoining(id: string, connect: () => LivePeer[]): Promise<{ appended: string[]; subscribers: LivePeer[] }> {
  const appended = new Map<string, number>();
  let stop = false;
  const producer = (async () => {
    while (!stop) {
      appended.set((await t.server.conversations.sendMessage(id, userMessage(`m${appended.size}`) as never, { run: false })).id, appended.size);
      await new Promise((r) => setImmediate(r));
    }
  })();
  let subscribers: LivePeer[] = [];
  try {
    subscribers = connect();
    const openedAt = subscribers.map(() => Infinity);
    subscribers.forEach((p, i) => void p.opened.then(() => (openedAt[i] = appended.size)));
    await vi.waitFor(
      () => {
        for (const [i, p] of subscribers.entries()) {
          if (!p.events().some((e) => (appended.get(e.id) ?? -1) >= openedAt[i]!)) throw new Error(`subscriber ${i} has no event appended after it opened`);
        }
      },
      { timeout: 20_000, interval: 10 },
    );
  } finally {
    stop = true;
    await producer;
  }
  return { appended: [...appended.keys()], subscribers };
}

// Payload schemas of the AsyncAPI document, to check what the server sends.
const ajv = new Ajv2020({ strict: false, allErrors: true, discriminator: true });
ajv.addFormat("uuid", /^[0-9a-f-]{36}$/i).addFormat("date-time", () => true);
const schemas = (asyncapiDocument as { components: { schemas: Record<string, { schema: object }> } }).components.schemas;
ajv.addSchema({ $id: "urn:acs:async", components: { schemas: Object.fromEntries(Object.entries(schemas).map(([k, v]) => [k, { schema: rebase(v.schema) }])) } });
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (typeof node !== "object" || node === null) return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === "$ref" && typeof v === "string" ? `urn:acs:async${v}` : k === "discriminator" ? { propertyName: (v as { propertyName: string }).propertyName } : rebase(v)]));
}
const fullStateSchema = ajv.compile({ $ref: "urn:acs:async#/components/schemas/LiveFullStateEvent/schema" });
const errorFrameSchema = ajv.compile({ $ref: "urn:acs:async#/components/schemas/ServerErrorEvent/schema" });

describe("the stream", () => {
  it("opens with one full_state update, then every stored event with resend_all, each as stored", async () => {
    const id = await createConversation();
    const p = peer(livePath(id, { resend_all: "true" }));
    const frames = await p.waitFor(1 + replay.length);
    const [first, ...rest] = frames;
    expect(first!.value).toMatchObject({ kind: "ConversationStateUpdateEvent", key: "full_state", source: "environment" });
    expect(validateEvent(first!.value).ok).toBe(true);
    expect(fullStateSchema(first!.value), JSON.stringify(fullStateSchema.errors)).toBe(true);
    expect(first!.value.value).toMatchObject({ conversation_id: id, conversation_status: "STOPPED", event_count: replay.length, last_event_id: replay.at(-1)!.id });
    // What the agent server's full_state carries and its clients read.
    expect(first!.value.value).toMatchObject({ id, execution_status: expect.any(String), stats: { usage_to_metrics: expect.any(Object) }, confirmation_policy: { kind: expect.any(String) } });
    expect(rest.map((f) => f.text)).toEqual(replay.map((e) => JSON.stringify(e)));
    // full_state is not stored
    expect((await storedIds(id)).length).toBe(replay.length);
  });

  it("sends only live events without resend_all, and the full_state of an empty conversation", async () => {
    const created = await t.call("POST", "/api/conversations", { json: {} });
    const id = created.body.conversation_id;
    const p = peer(livePath(id));
    const [state] = await p.waitFor(1);
    expect(state!.value.value).toMatchObject({ event_count: 0, last_event_id: null });
    const sent = await t.call("POST", `/api/conversations/${id}/events`, { json: userMessage("over HTTP") });
    expectConforms("sendMessage", sent, 200);
    const [event] = await p.waitFor(1, isEventFrame);
    expect(event!.value).toEqual(sent.body);
    expect(event!.value).toMatchObject({ kind: "MessageEvent", source: "user", llm_message: userMessage("over HTTP") });
  });

  it("resumes after_id with exactly the events appended after it", async () => {
    const id = await createConversation();
    const p = peer(livePath(id, { after_id: replay[40]!.id, resend_all: "true" }));
    const frames = await p.waitFor(replay.length - 41, isEventFrame);
    expect(frames.map((f) => f.value.id)).toEqual(replay.slice(41).map((e) => e.id));
    // and then live
    await t.server.conversations.sendMessage(id, userMessage("live") as never, { run: false });
    const after = await p.waitFor(replay.length - 40, isEventFrame);
    expect(after.at(-1)!.value.llm_message.content[0].text).toBe("live");
  });

  it("joins stored and live events exactly while events are being appended", async () => {
    const id = await createConversation();
    const { appended, subscribers } = await appendWhileJoining(id, () => Array.from({ length: 20 }, (_, i) => peer(livePath(id, i % 2 ? { resend_all: "true" } : { after_id: replay[i]!.id }))));
    const stored = await storedIds(id);
    for (const [i, p] of subscribers.entries()) {
      const from = i % 2 ? 0 : i + 1;
      const frames = await p.waitFor(stored.length - from, isEventFrame);
      expect(frames.map((f) => f.value.id)).toEqual(stored.slice(from));
    }
    expect(appended.length).toBeGreaterThan(10);
  });

  it("keeps a live event before a transient update sent in the same turn (held live frames go first)", async () => {
    const id = await createConversation();
    const p = peer(livePath(id));
    await p.waitFor(1);
    // The event's frame is held for the turn's flush (frame.ts); the update goes through ws.send.
    const sent = await t.server.conversations.sendMessage(id, userMessage("before the update") as never, { run: false });
    const update = { id: randomUUID(), timestamp: new Date().toISOString(), source: "environment", kind: "ConversationStateUpdateEvent", key: "execution_status", value: "idle" };
    t.server.bus.publishTransient(id, update as never);
    const frames = await p.waitFor(3);
    expect(frames.slice(1).map((f) => f.value.id)).toEqual([sent.id, update.id]);
  });

  it("delivers events recorded by a status change to every subscriber", async () => {
    const id = await createConversation();
    const a = peer(livePath(id));
    const b = peer(livePath(id));
    await Promise.all([a.waitFor(1), b.waitFor(1)]);
    await t.server.conversations.setStatus(id, "RUNNING");
    for (const p of [a, b]) {
      const [update] = await p.waitFor(1, isEventFrame);
      expect(update!.value).toMatchObject({ kind: "ConversationStateUpdateEvent", key: "conversation_status", value: "RUNNING" });
    }
  });
});

describe("resend_mode and after_timestamp (the OpenHands web client's replay)", () => {
  /** Microseconds of an event's timestamp (naive: UTC). */
  const micros = (timestamp: string) => Date.parse(`${timestamp}Z`) * 1000 + Number((timestamp.split(".")[1] ?? "").padEnd(6, "0").slice(3, 6));
  const at40 = () => replay[40]!.timestamp;

  it("resend_mode=all sends every stored event, then live ones", async () => {
    const id = await createConversation();
    const p = peer(livePath(id, { resend_mode: "all" }));
    const frames = await p.waitFor(replay.length, isEventFrame);
    expect(frames.map((f) => f.value.id)).toEqual(replay.map((e) => e.id));
    const live = await t.server.conversations.sendMessage(id, userMessage("live") as never, { run: false });
    const after = await p.waitFor(replay.length + 1, isEventFrame);
    expect(after.at(-1)!.value.id).toBe(live.id);
  });

  it.each([
    ["as stored (no offset: UTC)", () => at40()],
    ["with Z", () => `${at40()}Z`],
    ["with an offset", () => new Date(micros(at40()) / 1000 + 3_600_000).toISOString().replace("Z", "+01:00")],
    ["as epoch seconds", () => String(micros(at40()) / 1e6)],
  ])("resend_mode=since sends the events at or after after_timestamp (inclusive), given %s", async (_name, timestamp) => {
    const id = await createConversation();
    const p = peer(livePath(id, { resend_mode: "since", after_timestamp: timestamp() }));
    const expected = replay.filter((e) => micros(e.timestamp) >= micros(at40())).map((e) => e.id);
    expect(expected[0]).toBe(replay[40]!.id);
    const frames = await p.waitFor(expected.length, isEventFrame);
    expect(frames.map((f) => f.value.id)).toEqual(expected);
    const live = await t.server.conversations.sendMessage(id, userMessage("live") as never, { run: false });
    const after = await p.waitFor(expected.length + 1, isEventFrame);
    expect(after.at(-1)!.value.id).toBe(live.id);
  });

  it.each([
    ["resend_mode=since without after_timestamp", { resend_mode: "since" }],
    ["resend_mode=since over resend_all=true", { resend_mode: "since", resend_all: "true" }],
    ["after_timestamp without resend_mode", { after_timestamp: "2020-01-01T00:00:00Z" }],
  ])("%s replays nothing", async (_name, query) => {
    const id = await createConversation();
    const p = peer(livePath(id, query));
    await p.waitFor(1);
    const live = await t.server.conversations.sendMessage(id, userMessage("live") as never, { run: false });
    const [first] = await p.waitFor(1, isEventFrame);
    expect(first!.value.id).toBe(live.id);
  });

  it("after_id wins over resend_mode=all", async () => {
    const id = await createConversation();
    const p = peer(livePath(id, { after_id: replay[50]!.id, resend_mode: "all" }));
    const frames = await p.waitFor(replay.length - 51, isEventFrame);
    expect(frames.map((f) => f.value.id)).toEqual(replay.slice(51).map((e) => e.id));
  });

  it("joins the since replay and live events exactly while events are being appended", async () => {
    const id = await createConversation();
    const { subscribers } = await appendWhileJoining(id, () => Array.from({ length: 10 }, () => peer(livePath(id, { resend_mode: "since", after_timestamp: at40() }))));
    // Every event at or after the instant once, in search order (appended events are the newest).
    const expected: string[] = [];
    for (let pageId: string | undefined; ; ) {
      const page = await t.call("GET", `/api/conversations/${id}/events/search`, { query: { timestamp__gte: at40(), limit: 100, ...(pageId && { page_id: pageId }) } });
      expected.push(...page.body.items.map((e: { id: string }) => e.id));
      if (!(pageId = page.body.next_page_id)) break;
    }
    expect(expected.length).toBeGreaterThan(replay.length - 40 + 10);
    for (const p of subscribers) {
      const frames = await p.waitFor(expected.length, isEventFrame);
      expect(frames.map((f) => f.value.id)).toEqual(expected);
    }
  });

  it.each([
    [{ resend_mode: "everything" }, "resend_mode must be all or since"],
    [{ resend_mode: "since", after_timestamp: "yesterday" }, /^after_timestamp must be a date-time/],
    [{ resend_mode: "since", after_timestamp: "20260205" }, /^after_timestamp must be an unambiguous date-time/],
  ])("a bad parameter %j: 4400 naming it", async (query, reason) => {
    const id = await createConversation();
    const p = peer(livePath(id, query));
    expect(await p.closed).toEqual({ code: LIVE_CLOSE.badRequest, reason: typeof reason === "string" ? reason : expect.stringMatching(reason) });
  });
});

describe("connections per conversation", () => {
  it("past the bound a connection is closed with 1013, and a place that frees up is taken again", async () => {
    const own = await startTestServer([], {}, undefined, { live: { maxConnectionsPerConversation: 2 } });
    try {
      const create = async () => (await own.call("POST", "/api/conversations", { json: {} })).body.conversation_id as string;
      const [id, other] = [await create(), await create()];
      const open = [connectLive(own.url, livePath(id), withKey), connectLive(own.url, livePath(id), withKey)];
      await Promise.all(open.map((p) => p.waitFor(1)));
      const third = connectLive(own.url, livePath(id), withKey);
      expect(await third.closed).toEqual({ code: LIVE_CLOSE.tryAgainLater, reason: "Too many connections for this conversation" });
      expect(third.frames).toEqual([]);
      const elsewhere = connectLive(own.url, livePath(other), withKey);
      await elsewhere.waitFor(1);
      open[0]!.ws.close();
      await open[0]!.closed;
      await vi.waitFor(async () => {
        const again = connectLive(own.url, livePath(id), withKey);
        await again.waitFor(1, () => true, 2_000);
        again.ws.terminate();
      });
      for (const p of [open[1]!, elsewhere]) p.ws.terminate();
    } finally {
      await own.close();
    }
  });
});

describe("inbound messages", () => {
  it("records a message frame as a user MessageEvent and pushes it to every subscriber, the sender too", async () => {
    const id = await createConversation();
    const sender = peer(livePath(id));
    const other = peer(livePath(id));
    await Promise.all([sender.waitFor(1), other.waitFor(1)]);
    sender.send(userMessage("hello over the socket"));
    const [mine] = await sender.waitFor(1, isEventFrame);
    const [theirs] = await other.waitFor(1, isEventFrame);
    expect(mine!.text).toBe(theirs!.text);
    expect(mine!.value).toMatchObject({ kind: "MessageEvent", source: "user", llm_message: userMessage("hello over the socket") });
    expect((await storedIds(id)).at(-1)).toBe(mine!.value.id);
  });

  it.each([
    ["not JSON", "{oops", "JSONDecodeError", "message.1: "],
    ["a wrong role", { role: "assistant", content: [] }, "ValidationError", "message.role: "],
    ["a wrong content type", { role: "user", content: [{ type: "video", text: "x" }] }, "ValidationError", "message.content.0.type: "],
    ["not an object", [1, 2], "ValidationError", "message: "],
  ])("answers %s with a ServerErrorEvent to that socket only, not stored, and stays open", async (_name, frame, code, where) => {
    const id = await createConversation();
    const p = peer(livePath(id));
    const other = peer(livePath(id));
    await Promise.all([p.waitFor(1), other.waitFor(1)]);
    p.send(frame);
    const [error] = await p.waitFor(1, isErrorFrame);
    expect(errorFrameSchema(error!.value), JSON.stringify(errorFrameSchema.errors)).toBe(true);
    expect(validateEvent(error!.value).ok).toBe(true);
    expect(error!.value).toMatchObject({ source: "environment", code, kind: "ServerErrorEvent" });
    expect(error!.value.detail).toContain(where);
    expect(error!.value).not.toHaveProperty("parent_id");
    // still open, and a good message still works; the other socket saw only that message
    p.send(userMessage("after the error"));
    const [event] = await p.waitFor(1, isEventFrame);
    expect(event!.value.llm_message.content[0].text).toBe("after the error");
    const [theirs] = await other.waitFor(1, isEventFrame);
    expect(theirs!.value.id).toBe(event!.value.id);
    expect(other.frames.filter(isErrorFrame)).toEqual([]);
    expect((await storedIds(id)).length).toBe(replay.length + 1);
  });

  it("answers a binary frame with a ServerErrorEvent", async () => {
    const id = await createConversation();
    const p = peer(livePath(id));
    await p.waitFor(1);
    p.ws.send(Buffer.from([0, 1, 2]), { binary: true });
    const [error] = await p.waitFor(1, isErrorFrame);
    expect(error!.value).toMatchObject({ code: "JSONDecodeError", detail: "message: binary frames are not accepted: send JSON text" });
  });
});

describe("authentication", () => {
  it("accepts the key in a first auth frame (what browsers can send)", async () => {
    const id = await createConversation();
    const p = peer(livePath(id, { resend_all: "true" }), {});
    await p.opened;
    p.send({ type: "auth", session_api_key: KEY });
    const frames = await p.waitFor(1 + replay.length);
    expect(frames[0]!.value.key).toBe("full_state");
  });

  it.each([
    ["no key and no auth frame in time", {}, undefined],
    ["a wrong header key", { headers: { "X-Session-API-Key": "wrong" } }, undefined],
    ["a wrong key in the auth frame", {}, { type: "auth", session_api_key: "wrong" }],
    ["a message instead of the auth frame", {}, userMessage("hi")],
  ])("closes with 4001 after accepting on %s", async (_name, options, first) => {
    const id = await createConversation();
    const p = peer(livePath(id), options);
    await p.opened; // accepted, so that browsers see the code
    if (first) p.send(first);
    expect(await p.closed).toEqual({ code: LIVE_CLOSE.unauthorized, reason: expect.stringMatching(/^Unauthorized/) });
    expect(p.frames).toEqual([]);
  });

  it("still accepts the deprecated query parameter, logs the deprecation and never the key", async () => {
    const id = await createConversation();
    const p = peer(livePath(id, { session_api_key: KEY }), {});
    await p.waitFor(1);
    expect(t.logs.some((line) => line.includes("deprecated"))).toBe(true);
    expect(t.logs.some((line) => line.includes(KEY))).toBe(false);
  });

  it("checks the key before telling whether a conversation exists", async () => {
    const p = peer(livePath(randomUUID()), { headers: { "X-Session-API-Key": "wrong" } });
    expect((await p.closed).code).toBe(LIVE_CLOSE.unauthorized);
  });
});

describe("close codes", () => {
  it.each([
    ["an unknown conversation", () => livePath(randomUUID()), LIVE_CLOSE.notFound, /^Conversation not found: /],
    ["a conversation id that is not a UUID", () => livePath("not-a-uuid"), LIVE_CLOSE.notFound, /^Conversation not found: not-a-uuid/],
  ])("%s: 4004", async (_name, path, code, reason) => {
    const p = peer(path());
    expect(await p.closed).toEqual({ code, reason: expect.stringMatching(reason) });
  });

  it("an after_id from elsewhere: 4400 naming the parameter", async () => {
    const id = await createConversation();
    const p = peer(livePath(id, { after_id: randomUUID() }));
    expect(await p.closed).toEqual({ code: LIVE_CLOSE.badRequest, reason: expect.stringMatching(/^after_id .* is not an event of this conversation/) });
  });

  it("a bad resend_all: 4400", async () => {
    const id = await createConversation();
    const p = peer(livePath(id, { resend_all: "maybe" }));
    expect(await p.closed).toEqual({ code: LIVE_CLOSE.badRequest, reason: "resend_all must be true or false" });
  });

  it("accepts a 32-hex-digit conversation id", async () => {
    const id = await createConversation();
    const p = peer(livePath(id.replace(/-/g, "").toUpperCase(), { resend_all: "true" }));
    const [state] = await p.waitFor(1);
    expect(state!.value.value.conversation_id).toBe(id);
  });

  it("answers an upgrade on another path with 404", async () => {
    const p = peer("/sockets/nothing-here");
    expect((await p.closed).code).toBe(1006);
  });
});

describe("slow consumers", () => {
  it("closes a client that stops reading with 4429, and it resumes with after_id without loss", async () => {
    const id = await createConversation();
    const p = peer(livePath(id));
    await p.waitFor(1);
    // Stop reading: the server's buffer for this client grows past its bound (256 KiB here).
    (p.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const big = "x".repeat(16 * 1024);
    // A burst: all 400 are recorded before the socket can drain.
    await Promise.all(Array.from({ length: 400 }, (_, i) => t.server.conversations.sendMessage(id, userMessage(`${i} ${big}`) as never, { run: false })));
    (p.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await p.closed;
    expect(closed.code).toBe(LIVE_CLOSE.slowConsumer);
    expect(closed.reason).toMatch(/^slow consumer: reconnect with after_id=/);
    const received = p.events();
    const stored = await storedIds(id);
    expect(received.map((e) => e.id)).toEqual(stored.slice(replay.length, replay.length + received.length));
    const resumed = peer(livePath(id, received.length ? { after_id: received.at(-1).id } : { resend_all: "true" }));
    const rest = stored.slice(received.length ? replay.length + received.length : 0);
    const frames = await resumed.waitFor(rest.length, isEventFrame);
    expect([...received.map((e) => e.id), ...frames.map((f) => f.value.id)].slice(-400)).toEqual(stored.slice(replay.length));
  });
});

describe("catch-up pages (one page is one short step)", () => {
  /** The writes made to the server's side of the next WebSocket connection: bytes of each. */
  function recordServerWrites(): number[] {
    const writes: number[] = [];
    t.server.http.once("upgrade", (_request, socket: Socket) => {
      const writev = socket._writev!.bind(socket);
      const write = socket._write.bind(socket);
      socket._writev = (chunks, callback) => {
        writes.push(chunks.reduce((n, c) => n + (c.chunk as Buffer).length, 0));
        writev(chunks, callback);
      };
      socket._write = (chunk: Buffer, encoding, callback) => {
        writes.push(chunk.length);
        write(chunk, encoding, callback);
      };
    });
    return writes;
  }

  it("writes each page of a catch-up to the socket in one write", async () => {
    const id = await createConversation();
    for (let i = 0; i < 50; i++) await t.server.conversations.sendMessage(id, userMessage(`small ${i}`) as never, { run: false });
    const events = replay.length + 50;
    const writes = recordServerWrites();
    const p = peer(livePath(id, { resend_all: "true" }));
    await p.waitFor(1 + events);
    // Pages of 7 (replayPageSize here) and the full_state frame: a write per event before.
    expect(writes.length).toBeLessThanOrEqual(Math.ceil(events / 7) + 3);
  });

  it("asks for fewer events after a page of large ones, so a page stays near CATCH_UP_PAGE_BYTES", async () => {
    const id = await createConversation();
    const big = "x".repeat(200 * 1024);
    for (let i = 0; i < 21; i++) await t.server.conversations.sendMessage(id, userMessage(`${i} ${big}`) as never, { run: false });
    const writes = recordServerWrites();
    const p = peer(livePath(id, { resend_all: "true" }));
    const frames = await p.waitFor(1 + replay.length + 21);
    expect(frames.at(-1)!.value.llm_message.content[0].text).toBe(`20 ${big}`);
    // Three pages of seven 200 KiB events without the bound; with it, the first page that meets
    // them is the only write far past the aim.
    expect(writes.filter((bytes) => bytes > 2 * CATCH_UP_PAGE_BYTES).length).toBeLessThanOrEqual(1);
  });
});

describe("floods of invalid frames", () => {
  it("a client that sends invalid frames and never reads is closed with 4429 once its error frames pass the bound", async () => {
    const id = await createConversation();
    const p = peer(livePath(id));
    await p.waitFor(1);
    (p.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const garbage = `{"role": ${"x".repeat(200)}`;
    // About 12 MB of error frames: more than the kernel's socket buffers and the 256 KiB bound.
    for (let i = 0; i < 60_000; i++) p.ws.send(garbage);
    // Still not reading while the server answers them all (until it says it gave up, or 20 s).
    await vi
      .waitFor(() => expect(t.logs.some((line) => line.includes("does not read its error frames"))).toBe(true), { timeout: 20_000, interval: 50 })
      .catch(() => {});
    (p.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await Promise.race([p.closed, new Promise<{ code: number }>((resolve) => setTimeout(() => resolve({ code: 0 }), 10_000))]);
    expect(closed.code).toBe(LIVE_CLOSE.slowConsumer);
    const errors = p.frames.filter(isErrorFrame);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.length).toBeLessThan(60_000);
    expect(errorFrameSchema(errors[0]!.value), JSON.stringify(errorFrameSchema.errors)).toBe(true);
    expect((await t.call("GET", "/health")).status).toBe(200);
  });

  it("an invalid frame's error names the position, echoes nothing, and a deep one is refused", async () => {
    const id = await createConversation();
    const p = peer(livePath(id));
    await p.waitFor(1);
    p.send('{"role":"user","content":sk-ant-SECRETSECRET}');
    p.send(`{"role":"user","content":[{"type":"text","text":"x"}],"x":${"[".repeat(5_000)}${"]".repeat(5_000)}}`);
    const [syntax, deep] = await p.waitFor(2, isErrorFrame);
    expect(syntax!.value).toMatchObject({ code: "JSONDecodeError", detail: expect.stringMatching(/^message\.25: /) });
    expect(syntax!.text).not.toContain("SECRET");
    expect(deep!.value).toMatchObject({ code: "JSONDecodeError", detail: expect.stringMatching(/^message\.x\.0\.0\.0\.0\.0\.0\.0: /) });
    expect(t.logs.filter((line) => line.includes("recording a message failed"))).toEqual([]);
  });
});

describe("heartbeat and shutdown", () => {
  it("ends a peer that does not answer pings, and closes the others with 1001 on shutdown", async () => {
    const own = await startTestServer([], {}, undefined, { live: { heartbeatMs: 100 } });
    try {
      const created = await own.call("POST", "/api/conversations", { json: {} });
      const id = created.body.conversation_id;
      const silent = connectLive(own.url, livePath(id), { ...withKey, autoPong: false });
      const healthy = connectLive(own.url, livePath(id), withKey);
      await Promise.all([silent.waitFor(1), healthy.waitFor(1)]);
      expect((await silent.closed).code).toBe(1006); // terminated, no close frame
      expect(healthy.ws.readyState).toBe(healthy.ws.OPEN);
      await expect.poll(() => own.server.live.connections).toBe(1);
      const closing = own.close();
      expect(await healthy.closed).toEqual({ code: 1001, reason: "server shutting down" });
      await closing;
    } finally {
      await own.close();
    }
  });
});

describe("--public-read", () => {
  it("streams without a key but refuses messages until the client authenticates", async () => {
    const pub = await startTestServer(["--public-read"]);
    try {
      const created = await pub.call("POST", "/api/conversations", { json: { replay_json: JSON.stringify(replay) } });
      const id = created.body.conversation_id;
      const p = connectLive(pub.url, livePath(id, { resend_all: "true" }), {});
      await p.waitFor(1 + replay.length);
      p.send(userMessage("let me in"));
      const [error] = await p.waitFor(1, isErrorFrame);
      expect(error!.value).toMatchObject({ code: "Unauthorized", detail: "message: send an auth frame with a session API key before sending messages" });
      p.send({ type: "auth", session_api_key: KEY });
      p.send(userMessage("now with a key"));
      const [event] = await p.waitFor(replay.length + 1, isEventFrame).then((f) => f.slice(-1));
      expect(event!.value.llm_message.content[0].text).toBe("now with a key");
      p.ws.terminate();
    } finally {
      await pub.close();
    }
  });
});

describe("POST /api/conversations/{id}/events", () => {
  it("401 without a key, 404 for an unknown conversation, 422 with the culprit's loc", async () => {
    const id = await createConversation();
    expectConforms("sendMessage", await t.call("POST", `/api/conversations/${id}/events`, { key: null, json: userMessage("x") }), 401);
    expectConforms("sendMessage", await t.call("POST", `/api/conversations/${randomUUID()}/events`, { json: userMessage("x") }), 404);
    const bad = await t.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [{ type: "text" }] } });
    expectConforms("sendMessage", bad, 422);
    expect(bad.body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(["body", "content", 0, "text"]);
    const notUuid = await t.call("POST", `/api/conversations/nope/events`, { json: userMessage("x") });
    expectConforms("sendMessage", notUuid, 422);
    expect(notUuid.body.detail[0].loc).toEqual(["path", "conversation_id"]);
  });
});
