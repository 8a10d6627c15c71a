/**
 * `POST /api/conversations/{id}/events/batch` (bulk ingest) on a real server, a real
 * SQLite file: JSONL in, every line validated, the request stored in one transaction or not at all
 * (a bad line, a duplicate id, a batch over its limits: nothing of it is visible), order, ids and
 * timestamps kept, live subscribers served each event once, and the server's memory flat while
 * 200k events stream in (a server process of its own, its RSS read from /proc).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { gzipSync } from "node:zlib";
import path from "node:path";
import type { Event } from "@acs-toolkit/schema";
import { seededRandom } from "@acs-toolkit/schema/examples";
import { expectedSearchIds, randomTrajectory } from "@acs-toolkit/test-kit/trajectory";
import { connectLive, livePath, type Frame, type LivePeer } from "@acs-toolkit/test-kit/live";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WorkerPool } from "../../src/threads/pool.js";
import { expect422, expectConforms, KEY, startTestServer, type TestServer } from "../support/harness.js";
import { createScratchDatabase, type ScratchDatabase } from "../support/postgres.js";
import { spawnServer, type ServerProcess } from "../support/process.js";

const JSON_LIMIT = 16 * 1024 * 1024;
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer(["--json-limit-bytes", String(JSON_LIMIT)]);
});
afterAll(async () => {
  await t?.close();
});

/** `n` events of every kind (timestamps full of ties), ids unique to `tag` (8 hex digits). */
function batchEvents(n: number, tag: string, seed = 7): Event[] {
  return randomTrajectory(seededRandom(seed), n).map((event, i) => ({ ...event, id: `${tag}-0000-4000-8000-${i.toString(16).padStart(12, "0")}` }) as Event);
}
const jsonl = (events: readonly unknown[]) => events.map((e) => (typeof e === "string" ? e : JSON.stringify(e))).join("\n") + "\n";
const route = (id: string) => `/api/conversations/${id}/events/batch`;
const NDJSON = { "Content-Type": "application/x-ndjson" };
/** A stored event's frame (not the full_state; the recordings hold ServerErrorEvents too, so not isEventFrame). */
const isStored = (f: Frame) => f.value.key !== "full_state";

async function newConversation(): Promise<string> {
  const created = await t.call("POST", "/api/conversations", { json: {} });
  expect(created.status, created.text).toBe(200);
  return created.body.conversation_id as string;
}

/** Every stored event's JSON text, in append order (the live channel's order), straight from the store. */
async function storedJson(id: string): Promise<string[]> {
  return (await t.server.store.readAfter(id, 0, 1_000_000)).map((e) => e.json);
}

/**
 * Appends a one-event batch to `id` through `server` and waits until each of `peers` has its frame:
 * a conversation's events reach a subscriber in append order, so whatever it was going to get before
 * this marker (a duplicate, an event of a rolled-back batch) has arrived by then. Returns its JSON.
 */
async function sentinel(server: TestServer, id: string, tag: string, ...peers: LivePeer[]): Promise<string> {
  const marker = batchEvents(1, tag, 13)[0]!;
  expect((await server.call("POST", route(id), { body: jsonl([marker]), headers: NDJSON })).status).toBe(200);
  await Promise.all(peers.map((p) => p.waitFor(1, (f) => isStored(f) && f.value.id === marker.id)));
  return JSON.stringify(marker);
}

/**
 * Counts the chunks of rows the import thread hands to the request thread for event batches (each
 * `{ chunk }` message of a job, as ConversationService.appendBatch gets it), until restored.
 */
function countBatchChunks(): { chunks: () => number; restore: () => void } {
  const run = WorkerPool.prototype.run;
  let chunks = 0;
  const spy = vi.spyOn(WorkerPool.prototype, "run").mockImplementation(function (this: WorkerPool, payload, onMessage, transfer) {
    return run.call(this, payload, (message) => {
      if (payload.op === "batch" && message.chunk) chunks++;
      onMessage(message);
    }, transfer);
  });
  return { chunks: () => chunks, restore: () => spy.mockRestore() };
}

async function searchedIds(id: string): Promise<string[]> {
  const ids: string[] = [];
  let pageId: string | undefined;
  do {
    const page = await t.call("GET", `/api/conversations/${id}/events/search`, { query: { limit: 100, ...(pageId && { page_id: pageId }) } });
    expect(page.status, page.text).toBe(200);
    ids.push(...page.body.items.map((e: Event) => e.id));
    pageId = page.body.next_page_id ?? undefined;
  } while (pageId);
  return ids;
}

describe("an event batch", () => {
  it("appends every line, in order, each as recorded, and answers the counts", async () => {
    const id = await newConversation();
    const first = batchEvents(700, "000000a1");
    const lines = first.map((e) => JSON.stringify(e));
    lines.splice(350, 0, "   "); // a blank line is skipped
    const reply = await t.call("POST", route(id), { body: lines.join("\n") + "\n", headers: NDJSON });
    expectConforms("appendEventBatch", reply, 200);
    expect(reply.body).toEqual({ appended: 700, event_count: 700 });
    const second = batchEvents(300, "000000a2", 8);
    const again = await t.call("POST", route(id), { body: jsonl(second), headers: { "Content-Type": "application/jsonl; charset=utf-8" } });
    expect(again.body).toEqual({ appended: 300, event_count: 1000 });
    // Append order is the lines' order, each event's JSON as recorded (ids, timestamps kept).
    const all = [...first, ...second];
    expect(await storedJson(id)).toEqual(all.map((e) => JSON.stringify(e)));
    // Search (timestamp, then append order) and counts see exactly them.
    expect(await searchedIds(id)).toEqual(expectedSearchIds(all, {}, false));
    expect((await t.call("GET", `/api/conversations/${id}/events/count`)).body).toBe(1000);
    expect((await t.call("GET", `/api/conversations/${id}`)).body.event_count).toBe(1000);
    // A line's JSON text is stored as sent (spaces inside kept, CRLF and surrounding blanks not), non-ASCII included.
    const spaced = batchEvents(3, "000000a3", 9).map((e, i) => JSON.stringify({ ...e, ...(i === 1 && { kind: "MessageEvent", source: "user", llm_message: { role: "user", content: [{ type: "text", text: "résumé ✓ 🚀" }] } }) }).replace(/,"/g, ', "'));
    const third = await t.call("POST", route(id), { body: spaced.map((l) => ` ${l}\t\r\n`).join(""), headers: NDJSON });
    expect(third.body).toEqual({ appended: 3, event_count: 1003 });
    expect((await storedJson(id)).slice(1000)).toEqual(spaced);
  });

  it("reads a compressed body (Content-Encoding: gzip) as it streams, and refuses one that is not what it says", async () => {
    const id = await newConversation();
    const events = batchEvents(2_000, "000000a4");
    const reply = await t.call("POST", route(id), { body: gzipSync(jsonl(events)), headers: { ...NDJSON, "Content-Encoding": "gzip" } });
    expect(reply.body).toEqual({ appended: 2_000, event_count: 2_000 });
    expect(await storedJson(id)).toEqual(events.map((e) => JSON.stringify(e)));
    const broken = await t.call("POST", route(id), { body: jsonl(events.slice(0, 1)), headers: { ...NDJSON, "Content-Encoding": "gzip" } });
    expect(broken.status, broken.text).toBe(422);
    expect((await t.call("GET", `/api/conversations/${id}`)).body.event_count).toBe(2_000);
  });

  it("refuses a bad line with its line number and field path, and stores nothing of the batch", async () => {
    const id = await newConversation();
    const events = batchEvents(40, "000000b1");
    const broken = structuredClone(events) as Array<Record<string, any>>;
    broken[2] = { ...broken[2], kind: "MessageEvent", source: "user", llm_message: { role: "robot", content: [] } };
    const reply = await t.call("POST", route(id), { body: jsonl(broken), headers: NDJSON });
    expect(reply.status, reply.text).toBe(422);
    expect(specOk(reply)).toBe(true);
    expect(reply.body.detail.map((d: { loc: unknown[] }) => d.loc)).toContainEqual(["body", 3, "llm_message", "role"]);
    expect(reply.body.detail.every((d: { loc: unknown[] }) => d.loc[1] === 3)).toBe(true);
    expect(await storedJson(id)).toEqual([]);
    // Not JSON: the line, and a later line's problem too; still nothing stored.
    const notJson = [JSON.stringify(events[0]), "{\"id\": ", JSON.stringify(events[2]), JSON.stringify({ ...events[3], timestamp: 12 })];
    const twice = await t.call("POST", route(id), { body: jsonl(notJson), headers: NDJSON });
    expect(twice.status, twice.text).toBe(422);
    expect(twice.body.detail[0]).toMatchObject({ loc: ["body", 2], type: "json_invalid" });
    expect(twice.body.detail.map((d: { loc: unknown[] }) => d.loc)).toContainEqual(["body", 4, "timestamp"]);
    expect(await storedJson(id)).toEqual([]);
    // Bytes that are not UTF-8, on line 2 of 3.
    const latin1 = Buffer.concat([Buffer.from(JSON.stringify(events[0]) + "\n"), Buffer.from([0x7b, 0xe9, 0x7d, 0x0a]), Buffer.from(JSON.stringify(events[1]) + "\n")]);
    const bytes = await t.call("POST", route(id), { body: latin1, headers: NDJSON });
    expect(bytes.status, bytes.text).toBe(422);
    expect(bytes.body.detail).toEqual([{ loc: ["body", 2], msg: "line 2 is not valid UTF-8", type: "json_invalid" }]);
    expect((await t.call("GET", `/api/conversations/${id}`)).body.event_count).toBe(0);
  });

  it("refuses a duplicate id (in the batch, or already stored) at its line, storing nothing of the batch", async () => {
    const id = await newConversation();
    const events = batchEvents(20, "000000c1");
    const inBatch = [...events.slice(0, 10), events[4]!];
    const reply = await t.call("POST", route(id), { body: jsonl(inBatch), headers: NDJSON });
    expect422("appendEventBatch", reply, ["body", 11, "id"]);
    expect(await storedJson(id)).toEqual([]);
    expect((await t.call("POST", route(id), { body: jsonl(events.slice(0, 10)), headers: NDJSON })).status).toBe(200);
    // Lines 1–5 new, line 6 stored before: the store refuses it, lines 1–5 are not stored either.
    const overlapping = [...events.slice(10, 15), events[7]!, ...events.slice(15)];
    const stored = await t.call("POST", route(id), { body: jsonl(overlapping), headers: NDJSON });
    expect422("appendEventBatch", stored, ["body", 6, "id"]);
    expect(stored.body.detail[0].msg).toMatch(/already in this conversation/);
    expect(await storedJson(id)).toEqual(events.slice(0, 10).map((e) => JSON.stringify(e)));
  });

  it("past its first thousand lines (written while the rest is parsed), still refuses a bad line or a stored id at its line, storing nothing", async () => {
    const id = await newConversation();
    const stored = batchEvents(10, "000000c2");
    expect((await t.call("POST", route(id), { body: jsonl(stored), headers: NDJSON })).status).toBe(200);
    // Line 4,321 of 5,000 repeats an id stored before: the store finds it in the batch's fifth chunk of rows.
    const events = batchEvents(5_000, "000000c3");
    const duplicate = [...events.slice(0, 4_320), stored[3]!, ...events.slice(4_321)];
    const reply = await t.call("POST", route(id), { body: jsonl(duplicate), headers: NDJSON });
    expect422("appendEventBatch", reply, ["body", 4_321, "id"]);
    expect(reply.body.detail[0].msg).toMatch(/already in this conversation \(line 4321\)/);
    // Line 4,999 is not an Event.
    const broken = [...events.slice(0, 4_998).map((e) => JSON.stringify(e)), JSON.stringify({ ...events[4_998], kind: "Nope" }), JSON.stringify(events[4_999])];
    const bad = await t.call("POST", route(id), { body: jsonl(broken), headers: NDJSON });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.body.detail[0].loc.slice(0, 2)).toEqual(["body", 4_999]);
    expect(await storedJson(id)).toEqual(stored.map((e) => JSON.stringify(e)));
    expect((await t.call("GET", `/api/conversations/${id}/events/count`)).body).toBe(10);
    // Then the whole batch goes in.
    const whole = await t.call("POST", route(id), { body: jsonl(events), headers: NDJSON });
    expect(whole.body).toEqual({ appended: 5_000, event_count: 5_010 });
    expect(await storedJson(id)).toEqual([...stored, ...events].map((e) => JSON.stringify(e)));
  });

  it("holds no write while its body is still arriving: a client that stalls mid-body does not stop other writes", async () => {
    const id = await newConversation();
    const events = batchEvents(3_000, "000000c4");
    // The import thread is up (it starts on first use), so that the lines sent are parsed during the pause.
    expect((await t.call("POST", route(id), { body: jsonl(events.slice(0, 10)), headers: NDJSON })).status).toBe(200);
    const { request } = await import("node:http");
    const stalled = request(`${t.url}${route(id)}`, { method: "POST", headers: { ...NDJSON, "X-Session-API-Key": KEY } });
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      stalled.on("response", (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, text }));
      });
      stalled.on("error", reject);
    });
    const handed = countBatchChunks();
    try {
      stalled.write(jsonl(events.slice(10, 2_500))); // more than two chunks of rows: parsed while the rest has not come
      // The import thread has parsed them: it handed the request thread two chunks of 1,000 rows.
      await expect.poll(handed.chunks, { timeout: 20_000 }).toBe(2);
    } finally {
      handed.restore();
    }
    // Writes to another conversation go in while that body is unfinished (a batch would not: the
    // one import thread is busy parsing the unfinished one).
    const replay = batchEvents(3, "000000c6");
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: jsonl(replay) } });
    expect(created.status, created.text).toBe(200);
    expect((await t.call("GET", `/api/conversations/${created.body.conversation_id}`)).body.event_count).toBe(3);
    stalled.end(jsonl(events.slice(2_500)));
    const reply = await answered;
    expect(reply.status, reply.text).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ appended: 2_990, event_count: 3_000 });
    expect(await storedJson(id)).toEqual(events.map((e) => JSON.stringify(e)));
  });

  it("goes in while a large replay is being created (one import thread for both): neither waits on the other for ever", async () => {
    const id = await newConversation();
    const replay = batchEvents(15_000, "000000c7"); // ~11 MB, under the 16 MiB limit
    const writes = vi.spyOn(t.server.store, "importRows");
    const created = t.call("POST", "/api/conversations", { json: { replay_json: jsonl(replay) } });
    try {
      await expect.poll(() => writes.mock.calls.length, { timeout: 20_000 }).toBeGreaterThan(0); // the replay's rows are being written
    } finally {
      writes.mockRestore();
    }
    const events = batchEvents(4_000, "000000c8");
    const reply = await t.call("POST", route(id), { body: jsonl(events), headers: NDJSON });
    expect(reply.body).toEqual({ appended: 4_000, event_count: 4_000 });
    const done = await created;
    expect(done.status, done.text).toBe(200);
    expect((await t.call("GET", `/api/conversations/${done.body.conversation_id}`)).body.event_count).toBe(15_000);
  });

  it("answers 413 past 10,000 events or past the JSON limit, storing nothing", async () => {
    const id = await newConversation();
    const many = batchEvents(10_001, "000000d1");
    const tooMany = await t.call("POST", route(id), { body: jsonl(many), headers: NDJSON });
    expectConforms("appendEventBatch", tooMany, 413);
    expect(tooMany.body.detail).toMatch(/at most 10000 events/);
    expect(await storedJson(id)).toEqual([]);
    // Exactly 10,000 is one batch.
    const limit = await t.call("POST", route(id), { body: jsonl(many.slice(0, 10_000)), headers: NDJSON });
    expect(limit.body).toEqual({ appended: 10_000, event_count: 10_000 });
    // One huge line (a message of 17 MiB) past the 16 MiB body limit.
    const huge = { ...batchEvents(1, "000000d2")[0]!, kind: "MessageEvent", source: "user", llm_message: { role: "user", content: [{ type: "text", text: "x".repeat(17 * 1024 * 1024) }] } };
    const big = await t.call("POST", route(id), { body: jsonl([batchEvents(1, "000000d3")[0]!, huge]), headers: NDJSON });
    expectConforms("appendEventBatch", big, 413);
    expect((await t.call("GET", `/api/conversations/${id}`)).body.event_count).toBe(10_000);
  });

  it("answers 415 for another media type, 404 for an unknown conversation, 401 without the key", async () => {
    const id = await newConversation();
    const body = jsonl(batchEvents(3, "000000e1"));
    for (const type of ["application/json", "text/plain"]) {
      const reply = await t.call("POST", route(id), { body, headers: { "Content-Type": type } });
      expectConforms("appendEventBatch", reply, 415);
    }
    expectConforms("appendEventBatch", await t.call("POST", route("0b0b0b0b-0000-4000-8000-000000000000"), { body, headers: NDJSON }), 404);
    expectConforms("appendEventBatch", await t.call("POST", route(id), { body, headers: NDJSON, key: null }), 401);
    expect(await storedJson(id)).toEqual([]);
  });

  it("delivers the batch's events to a live subscriber exactly once, in order", async () => {
    const id = await newConversation();
    const peers: LivePeer[] = [connectLive(t.url, livePath(id), { headers: { "X-Session-API-Key": KEY } }), connectLive(t.url, livePath(id, { resend_all: "true" }), { headers: { "X-Session-API-Key": KEY } })];
    try {
      await Promise.all(peers.map((p) => p.waitFor(1)));
      const first = batchEvents(1_234, "000000f1");
      const second = batchEvents(10, "000000f2", 9);
      expect((await t.call("POST", route(id), { body: jsonl(first), headers: NDJSON })).status).toBe(200);
      expect((await t.call("POST", route(id), { body: jsonl(second), headers: NDJSON })).status).toBe(200);
      const expected = [...first, ...second].map((e) => JSON.stringify(e));
      // Nothing more comes: up to the marker, each peer got these events once, then the marker.
      const marker = await sentinel(t, id, "000000f3", ...peers);
      for (const p of peers) expect(p.frames.filter(isStored).map((f) => f.text)).toEqual([...expected, marker]);
    } finally {
      for (const p of peers) p.ws.close();
    }
  });
});

function specOk(reply: { status: number; body: unknown }): boolean {
  expectConforms("appendEventBatch", reply as never, reply.status);
  return true;
}

/** A process's resident memory, bytes: all of it, and its anonymous part (heaps, SQLite's page caches; not the database file's memory map). */
async function rssOf(pid: number): Promise<{ rss: number; anon: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]) * 1024;
  return { rss: kb("VmRSS"), anon: kb("RssAnon") };
}

describe("memory (the built server in a process of its own)", () => {
  let dataDir: string;
  let server: ServerProcess;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "acs-batch-rss-"));
    server = await spawnServer(dataDir);
  });
  afterAll(async () => {
    server?.process.kill();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("stays flat while 200k events stream in as 20 batches", async () => {
    const headers = { "X-Session-API-Key": KEY };
    const created = await (await fetch(`${server.url}/api/conversations`, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: "{}" })).json();
    const id = created.conversation_id as string;
    const pool = randomTrajectory(seededRandom(11), 500).map((e) => JSON.stringify(e).slice(JSON.stringify(e).indexOf(',"timestamp"')));
    const rss: Array<{ rss: number; anon: number }> = [await rssOf(server.process.pid!)];
    for (let batch = 0; batch < 20; batch++) {
      // Streamed: the body is produced as it is sent, a thousand lines a chunk.
      const body = new ReadableStream<Uint8Array>({
        start() {},
        pull: (() => {
          let from = 0;
          return (controller: ReadableStreamDefaultController<Uint8Array>) => {
            if (from >= 10_000) return controller.close();
            let text = "";
            for (let i = from; i < from + 1_000; i++) text += `{"id":"${batch.toString(16).padStart(8, "0")}-0000-4000-8000-${i.toString(16).padStart(12, "0")}"${pool[i % pool.length]}\n`;
            controller.enqueue(new TextEncoder().encode(text));
            from += 1_000;
          };
        })(),
      });
      const reply = await fetch(`${server.url}${route(id)}`, { method: "POST", headers: { ...headers, ...NDJSON }, body, duplex: "half" } as RequestInit);
      expect(reply.status, await reply.clone().text()).toBe(200);
      expect(await reply.json()).toEqual({ appended: 10_000, event_count: (batch + 1) * 10_000 });
      rss.push(await rssOf(server.process.pid!));
    }
    const mib = (n: number) => (n / 2 ** 20).toFixed(0);
    console.log(`server RSS before and after each batch of 10k events, MiB: ${rss.map((r) => mib(r.rss)).join(" ")}; anonymous: ${rss.map((r) => mib(r.anon)).join(" ")}`);
    // The SQLite page caches (64 MiB per writing connection) fill while the file grows past them;
    // after that, 100k more events (~65 MB of JSON) must not grow the anonymous memory with them.
    // Medians of five samples ten batches apart: a single sample swings by ±40 MiB with the
    // collector (a max against a max, bound 32 MiB, failed one run in four), and the caches still
    // grow a little (medians 2–41 MiB apart in five runs); batches kept grow it ~20 MiB each (218).
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const half = median(rss.slice(6, 11).map((r) => r.anon));
    const end = median(rss.slice(16, 21).map((r) => r.anon));
    expect(end - half).toBeLessThan(80 * 2 ** 20);
    expect(Math.max(...rss.map((r) => r.rss))).toBeLessThan(768 * 2 ** 20);
  });
});

describe("on a PostgreSQL store", () => {
  let db: ScratchDatabase;
  let pgServer: TestServer;
  beforeAll(async () => {
    db = await createScratchDatabase();
    pgServer = await startTestServer(["--store", db.url]);
  });
  afterAll(async () => {
    await pgServer?.close();
    await db?.drop();
  });

  it("appends a batch whole, in order, to subscribers once; a bad line stores nothing", async () => {
    const created = await pgServer.call("POST", "/api/conversations", { json: {} });
    const id = created.body.conversation_id as string;
    const peer = connectLive(pgServer.url, livePath(id), { headers: { "X-Session-API-Key": KEY } });
    try {
      await peer.waitFor(1);
      const batch = batchEvents(2_500, "0000aa01");
      const reply = await pgServer.call("POST", route(id), { body: jsonl(batch), headers: NDJSON });
      expectConforms("appendEventBatch", reply, 200);
      expect(reply.body).toEqual({ appended: 2_500, event_count: 2_500 });
      const expected = batch.map((e) => JSON.stringify(e));
      expect((await pgServer.server.store.readAfter(id, 0, 10_000)).map((e) => e.json)).toEqual(expected);
      expect((await peer.waitFor(expected.length, isStored)).map((f) => f.text)).toEqual(expected);
      const more = batchEvents(30, "0000aa02");
      const bad = await pgServer.call("POST", route(id), { body: jsonl([...more.slice(0, 20), batch[9]!, ...more.slice(20)]), headers: NDJSON });
      expect422("appendEventBatch", bad, ["body", 21, "id"]);
      const broken = await pgServer.call("POST", route(id), { body: jsonl([...more.slice(0, 29), { ...more[29], kind: "Nope" }]), headers: NDJSON });
      expect(broken.status).toBe(422);
      expect(broken.body.detail[0].loc.slice(0, 2)).toEqual(["body", 30]);
      expect((await pgServer.call("GET", `/api/conversations/${id}`)).body.event_count).toBe(2_500);
      // Nothing of the rejected batches reached the subscriber: up to the marker, the first batch only.
      const marker = await sentinel(pgServer, id, "0000aa03", peer);
      expect(peer.frames.filter(isStored).map((f) => f.text)).toEqual([...expected, marker]);
    } finally {
      peer.ws.close();
    }
  });

  it("rolls back a large batch whose COPY had begun when a late line is bad or its id is taken, and writes the next on the same connections", async () => {
    const created = await pgServer.call("POST", "/api/conversations", { json: {} });
    const id = created.body.conversation_id as string;
    const first = batchEvents(3_000, "0000ab01");
    expect((await pgServer.call("POST", route(id), { body: jsonl(first), headers: NDJSON })).body).toEqual({ appended: 3_000, event_count: 3_000 });
    // The import thread hands over rows 1,000 at a time and the COPY takes them as they come: line
    // 9,500 fails after thousands of rows went into the open transaction.
    const big = batchEvents(9_600, "0000ab02");
    const broken = await pgServer.call("POST", route(id), { body: jsonl([...big.slice(0, 9_499), { ...big[9_499], kind: "Nope" }, ...big.slice(9_500)]), headers: NDJSON });
    expect(broken.status).toBe(422);
    expect(broken.body.detail[0].loc.slice(0, 2)).toEqual(["body", 9_500]);
    const taken = await pgServer.call("POST", route(id), { body: jsonl([...big.slice(0, 9_000), first[17]!, ...big.slice(9_001)]), headers: NDJSON });
    expect422("appendEventBatch", taken, ["body", 9_001, "id"]);
    expect((await pgServer.call("GET", `/api/conversations/${id}`)).body.event_count).toBe(3_000);
    expect(await pgServer.server.store.count(id, {})).toBe(3_000);
    const reply = await pgServer.call("POST", route(id), { body: jsonl(big), headers: NDJSON });
    expect(reply.body).toEqual({ appended: 9_600, event_count: 12_600 });
    expect((await pgServer.server.store.readAfter(id, 0, 20_000)).map((e) => e.id)).toEqual([...first, ...big].map((e) => e.id));
  });
});
