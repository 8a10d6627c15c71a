/**
 * Several server processes on one PostgreSQL database (`--store`): a WebSocket subscriber on
 * instance A receives every event appended through A and B by 20 concurrent writers exactly once,
 * in the database's append order; pages read through either instance are identical; with three
 * instances, the same holds for writers spread over A, B and C, and every page (several filters,
 * both orders, cursors followed to the end) is the same through each of them; and a
 * subscriber that reconnects to the other instance with `after_id` resumes exactly; and a third
 * instance SIGKILLed mid-write loses nothing it acknowledged and leaves no partial conversation.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { seededRandom } from "@acs-toolkit/schema/examples";
import { httpCaller } from "@acs-toolkit/test-kit/http";
import { randomTrajectory } from "@acs-toolkit/test-kit/trajectory";
import { connectLive, isEventFrame, livePath, type LivePeer } from "@acs-toolkit/test-kit/live";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY } from "../support/harness.js";
import { adminQuery, createScratchDatabase, type ScratchDatabase } from "../support/postgres.js";
import { exited, spawnServer, type ServerProcess } from "../support/process.js";

let db: ScratchDatabase;
const dirs: string[] = [];
const servers: ServerProcess[] = [];
const peers: LivePeer[] = [];
const withKey = { headers: { "X-Session-API-Key": KEY } };
/** Events per replay in the SIGKILL test: enough for several staged chunks, so the kill lands mid-import. */
const REPLAY = 2_000;

beforeAll(async () => {
  db = await createScratchDatabase();
  // One secret key for all: page cursors made by one instance are read by the other.
  const env = { SESSION_API_KEY: KEY, ACS_SECRET_KEY: randomBytes(32).toString("hex") };
  for (let i = 0; i < 3; i++) {
    const dir = await mkdtemp(path.join(tmpdir(), "acs-pg-instance-"));
    dirs.push(dir);
    servers.push(await spawnServer(dir, { env, flags: ["--store", db.url] }));
  }
});
afterAll(async () => {
  for (const p of peers) p.ws.terminate();
  for (const s of servers) {
    s.process.kill("SIGTERM");
    await exited(s.process);
  }
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

const message = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const peer = (url: string, p: string) => {
  const live = connectLive(url, p, withKey);
  peers.push(live);
  return live;
};
/** The conversation's event ids in append order, as the database has them. */
const appendOrder = async (id: string) => (await adminQuery<{ id: string }>("select e.id from acs.events e join acs.conversations c on c.pk = e.conv where c.id = $1 order by e.seq", [id], db.url)).map((r) => r.id);
/**
 * Appends a marker message through `call` and waits until every one of `lives` has received it.
 * Each subscriber is sent a conversation's events in append order, so whatever it was going to be
 * sent before the marker (a duplicate of an earlier event among them) has arrived by then: what it
 * holds afterwards is all it got. Resolves with the marker's id.
 */
async function sentinel(call: ReturnType<typeof httpCaller>, id: string, ...lives: LivePeer[]): Promise<string> {
  const reply = await call("POST", `/api/conversations/${id}/events`, { json: message("sentinel") });
  expect(reply.status, reply.text).toBe(200);
  const marker = reply.body.id as string;
  await Promise.all(lives.map((live) => live.waitFor(1, (f) => isEventFrame(f) && f.value.id === marker, 20_000)));
  return marker;
}

/** Every page of `query` through `call`, following next_page_id to the end. */
async function allPages(call: ReturnType<typeof httpCaller>, id: string, query: Record<string, string | number>) {
  const pages: unknown[] = [];
  let pageId: string | null = null;
  do {
    const reply = await call("GET", `/api/conversations/${id}/events/search`, { query: { ...query, ...(pageId ? { page_id: pageId } : {}) } });
    expect(reply.status, reply.text).toBe(200);
    pages.push(reply.body);
    pageId = reply.body.next_page_id as string | null;
  } while (pageId && pages.length < 50);
  return pages;
}

describe("three server processes on one PostgreSQL database", () => {
  it("deliver every event appended through A, B and C by 20 writers to a subscriber on A exactly once, in append order; pages through A, B and C are identical", async () => {
    const calls = servers.slice(0, 3).map((s) => httpCaller(s.url, KEY));
    expect(calls.length).toBe(3);
    const created = await calls[2]!("POST", "/api/conversations", { json: {} });
    expect(created.status, created.text).toBe(200);
    const id = created.body.conversation_id as string;
    const onA = peer(servers[0]!.url, livePath(id));
    await onA.waitFor(1); // full_state: following from now on
    // 20 writers spread over the three instances, 6 messages each; one in two also appends an agent event.
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        const call = calls[w % 3]!;
        for (let i = 0; i < 6; i++) {
          const reply = await call("POST", `/api/conversations/${id}/events`, { json: message(`writer ${w} message ${i} ${w % 4 === 0 ? "kestrel" : "plain"}`) });
          expect(reply.status, reply.text).toBe(200);
        }
      }),
    );
    const written = await appendOrder(id);
    expect(written.length).toBeGreaterThanOrEqual(120);
    // Nothing more arrives (no duplicate): everything up to the marker, and the marker, once.
    const marker = await sentinel(calls[1]!, id, onA);
    const order = await appendOrder(id);
    expect(order).toEqual([...written, marker]);
    expect(onA.events().map((e) => e.id)).toEqual(order);
    const queries: Array<Record<string, string | number>> = [
      { limit: 17 },
      { limit: 17, sort_order: "TIMESTAMP_DESC" },
      { limit: 9, source: "user" },
      { limit: 9, kind: "MessageEvent", sort_order: "TIMESTAMP_DESC" },
      { limit: 5, body: "kestrel" },
      { limit: 5, body: "KESTREL", sort_order: "TIMESTAMP_DESC" },
    ];
    for (const query of queries) {
      const [onFirst, onSecond, onThird] = await Promise.all(calls.map((call) => allPages(call, id, query)));
      expect(onFirst!.length, JSON.stringify(query)).toBeGreaterThan(1);
      expect(onSecond, JSON.stringify(query)).toEqual(onFirst);
      expect(onThird, JSON.stringify(query)).toEqual(onFirst);
    }
    // Search lists them in the order the subscriber saw: the append order (an instance stamps a
    // message before the database orders its append; the store moves an overtaken stamp forward).
    const listed = (await allPages(calls[0]!, id, { limit: 100 })).flatMap((page) => (page as { items: Array<{ id: string }> }).items.map((e) => e.id));
    expect(listed).toEqual(order);
    // A cursor issued by one instance continues identically on the others.
    const route = `/api/conversations/${id}/events/search`;
    const first = await calls[1]!("GET", route, { query: { limit: 25, sort_order: "TIMESTAMP_DESC" } });
    const nexts = await Promise.all(calls.map((call) => call("GET", route, { query: { limit: 25, sort_order: "TIMESTAMP_DESC", page_id: first.body.next_page_id } })));
    for (const next of nexts) {
      expect(next.status, next.text).toBe(200);
      expect(next.body).toEqual(nexts[0]!.body);
    }
    expect((nexts[0]!.body.items as Array<{ id: string }>).map((e) => e.id)).toEqual(order.slice().reverse().slice(25, 50));
  });
});

describe("two server processes on one PostgreSQL database", () => {
  it("deliver every event appended through either instance to a subscriber on A exactly once, in append order", async () => {
    const [a, b] = servers.map((s) => httpCaller(s.url, KEY));
    const created = await b!("POST", "/api/conversations", { json: {} });
    expect(created.status, created.text).toBe(200);
    const id = created.body.conversation_id as string;
    const onA = peer(servers[0]!.url, livePath(id));
    const onB = peer(servers[1]!.url, livePath(id));
    await Promise.all([onA.waitFor(1), onB.waitFor(1)]); // full_state: following from now on
    const before = (await appendOrder(id)).length;
    // 20 writers, half through each instance, 5 messages each.
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        const call = w % 2 ? a! : b!;
        for (let i = 0; i < 5; i++) {
          const reply = await call("POST", `/api/conversations/${id}/events`, { json: message(`writer ${w} message ${i}`) });
          expect(reply.status, reply.text).toBe(200);
        }
      }),
    );
    const written = await appendOrder(id);
    const expected = written.slice(before);
    expect(expected.length).toBeGreaterThanOrEqual(100);
    // Nothing more arrives (no duplicate): everything up to the marker, and the marker, once.
    const marker = await sentinel(b!, id, onA, onB);
    const order = await appendOrder(id);
    expect(order).toEqual([...written, marker]);
    for (const live of [onA, onB]) expect(live.events().map((e) => e.id)).toEqual(order);
    // Pages through A and B: the same, cursors of one read by the other.
    const route = `/api/conversations/${id}/events/search`;
    const first = await a!("GET", route, { query: { limit: 30 } });
    const second = await b!("GET", route, { query: { limit: 30 } });
    expect(second.body).toEqual(first.body);
    const nextOnB = await b!("GET", route, { query: { limit: 30, page_id: first.body.next_page_id } });
    const nextOnA = await a!("GET", route, { query: { limit: 30, page_id: first.body.next_page_id } });
    expect(nextOnB.status, nextOnB.text).toBe(200);
    expect(nextOnB.body).toEqual(nextOnA.body);
  });

  it("resumes a subscriber that reconnects to the other instance with after_id, exactly", async () => {
    const [a, b] = servers.map((s) => httpCaller(s.url, KEY));
    const id = (await a!("POST", "/api/conversations", { json: {} })).body.conversation_id as string;
    const first = peer(servers[0]!.url, livePath(id));
    await first.waitFor(1);
    for (let i = 0; i < 10; i++) await (i % 2 ? a! : b!)("POST", `/api/conversations/${id}/events`, { json: message(`before ${i}`) });
    const seen = await first.waitFor(10, isEventFrame);
    const lastSeen = seen[6]!.value.id as string; // it dropped after the seventh
    first.ws.terminate();
    const writes = Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a! : b!)("POST", `/api/conversations/${id}/events`, { json: message(`after ${i}`) })));
    const resumed = peer(servers[1]!.url, livePath(id, { after_id: lastSeen }));
    await writes;
    const written = await appendOrder(id);
    const marker = await sentinel(a!, id, resumed);
    const order = await appendOrder(id);
    expect(order).toEqual([...written, marker]);
    const rest = order.slice(order.indexOf(lastSeen) + 1);
    expect(resumed.events().map((e) => e.id)).toEqual(rest);
  });

  it("loses nothing acknowledged and leaves no partial conversation when an instance is SIGKILLed mid-write", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "acs-pg-instance-"));
    dirs.push(dir);
    const c = await spawnServer(dir, { env: { SESSION_API_KEY: KEY }, flags: ["--store", db.url] });
    const onC = httpCaller(c.url, KEY);
    const a = httpCaller(servers[0]!.url, KEY);
    const shared = (await a("POST", "/api/conversations", { json: {} })).body.conversation_id as string;
    const live = peer(servers[0]!.url, livePath(shared));
    await live.waitFor(1);
    const acknowledged: string[] = [];
    const replays = randomTrajectory(seededRandom(17), REPLAY).map((e) => JSON.stringify(e)).join("\n");
    let stop = false;
    let created = 0;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        try {
          const reply = w % 2 ? await onC("POST", "/api/conversations", { json: { replay_json: replays } }) : await onC("POST", `/api/conversations/${shared}/events`, { json: message(`c ${w} ${i}`) });
          if (reply.status === 200 && w % 2 === 0) acknowledged.push(reply.body.id as string);
          if (reply.status === 200 && w % 2 === 1) created++;
        } catch {
          return; // the instance is gone
        }
      }
    });
    // Killed once replays have completed, while the next ones are being written: rows of a staged
    // import (a conversation without its id yet) are in the database. Waited on generously: on two
    // busy cores (the whole suite at once) eight writers' replays take their time.
    await expect.poll(() => created, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    await expect
      .poll(async () => (await adminQuery<{ n: number }>("select count(*)::int as n from acs.events e join acs.conversations c on c.pk = e.conv where c.id is null", [], db.url))[0]!.n, { timeout: 30_000 })
      .toBeGreaterThan(0);
    c.process.kill("SIGKILL");
    await exited(c.process);
    stop = true;
    await Promise.all(writers);
    expect(acknowledged.length).toBeGreaterThan(0);
    // Every acknowledged append is stored, once; the subscriber on A got exactly the stored order.
    const written = await appendOrder(shared);
    expect(new Set(written).size).toBe(written.length);
    for (const id of acknowledged) expect(written).toContain(id);
    const marker = await sentinel(a, shared, live);
    const order = await appendOrder(shared);
    expect(order).toEqual([...written, marker]);
    expect(live.events().map((e) => e.id)).toEqual(order);
    // Every visible conversation created through C holds its whole replay.
    const counts = await adminQuery<{ id: string; event_count: number; stored: number }>(
      "select c.id, c.event_count::int as event_count, (select count(*)::int from acs.events e where e.conv = c.pk) as stored from acs.conversations c where c.id is not null and c.id <> $1 and c.pk > (select pk from acs.conversations where id = $1)",
      [shared],
      db.url,
    );
    expect(counts.length).toBeGreaterThan(0);
    for (const row of counts) expect(row).toMatchObject({ event_count: REPLAY, stored: REPLAY });
  });
});
