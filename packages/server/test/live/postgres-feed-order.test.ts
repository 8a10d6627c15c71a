/**
 * Two in-process servers on one PostgreSQL database, writers appending through both at once: the
 * subscribers on A get the other instance's events and A's own in one order, through the feed, so
 * that none of them ever sees a gap it must read from the store (with 500 subscribers, a gap per
 * append was 500 reads per event). Every subscriber still gets every event once, in append order.
 * And the other instance's events are read once per notification for all of a conversation's
 * subscribers (one read, framed once, for 500 subscribers).
 */
import { connectLive, isEventFrame, livePath, type LivePeer } from "@acs-toolkit/test-kit/live";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY, startTestServer, type TestServer } from "../support/harness.js";
import { adminQuery, createScratchDatabase, type ScratchDatabase } from "../support/postgres.js";

const SUBSCRIBERS = 20;
let db: ScratchDatabase;
let a: TestServer;
let b: TestServer;
const peers: LivePeer[] = [];

beforeAll(async () => {
  db = await createScratchDatabase();
  a = await startTestServer(["--store", db.url]);
  b = await startTestServer(["--store", db.url]);
});
afterAll(async () => {
  for (const p of peers) p.ws.terminate();
  await a?.close();
  await b?.close();
  await db?.drop();
});

const message = (text: string) => ({ role: "user", content: [{ type: "text", text }] });

describe("the PostgreSQL live feed", () => {
  it("delivers an instance's own appends in order after the other instance's, so that no subscriber sees a gap", async () => {
    const id = (await a.call("POST", "/api/conversations", { json: {} })).body.conversation_id as string;
    for (let i = 0; i < SUBSCRIBERS; i++) peers.push(connectLive(a.url, livePath(id), { headers: { "X-Session-API-Key": KEY } }));
    await Promise.all(peers.map((p) => p.waitFor(1))); // full_state: following
    await Promise.all(
      Array.from({ length: 10 }, async (_, w) => {
        for (let i = 0; i < 6; i++) {
          const reply = await (i % 2 ? a : b).call("POST", `/api/conversations/${id}/events`, { json: message(`writer ${w} message ${i}`) });
          expect(reply.status, reply.text).toBe(200);
        }
      }),
    );
    const order = (await adminQuery<{ id: string }>("select e.id from acs.events e join acs.conversations c on c.pk = e.conv where c.id = $1 order by e.seq", [id], db.url)).map((r) => r.id);
    for (const p of peers) await p.waitFor(order.length, isEventFrame);
    await new Promise((r) => setTimeout(r, 300)); // nothing more arrives (no duplicate)
    for (const p of peers) expect(p.events().map((e) => e.id)).toEqual(order);
    expect(a.logs.filter((line) => line.includes("a gap in published events"))).toEqual([]);
  });

  it("reads the other instance's events from the store once per notification for all of a conversation's subscribers, not once per subscriber", async () => {
    const id = (await a.call("POST", "/api/conversations", { json: {} })).body.conversation_id as string;
    const subscribers = Array.from({ length: SUBSCRIBERS }, () => connectLive(a.url, livePath(id), { headers: { "X-Session-API-Key": KEY } }));
    peers.push(...subscribers);
    await Promise.all(subscribers.map((p) => p.waitFor(1)));
    const store = a.server.store;
    const readAfter = store.readAfter.bind(store);
    let reads = 0;
    store.readAfter = (conversationId, ...rest) => {
      if (conversationId === id) reads++;
      return readAfter(conversationId, ...rest);
    };
    try {
      const appends = 10;
      for (let i = 0; i < appends; i++) {
        const reply = await b.call("POST", `/api/conversations/${id}/events`, { json: message(`through B ${i}`) });
        expect(reply.status, reply.text).toBe(200);
        await Promise.all(subscribers.map((p) => p.waitFor(i + 1, isEventFrame)));
      }
      // One read per notification (a short page ends it); per subscriber it would be 20 a notification.
      expect(reads).toBeGreaterThanOrEqual(1);
      expect(reads).toBeLessThanOrEqual(appends);
      for (const p of subscribers) expect(p.events().map((e) => e.llm_message.content[0].text)).toEqual(Array.from({ length: appends }, (_, i) => `through B ${i}`));
    } finally {
      store.readAfter = readAfter;
    }
  });
});
