/**
 * The SQLite EventStore on real database files (a fresh temporary directory per test): creation,
 * appends, transactionality, persistence across reopen, documents and lifecycle.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Event, MessageEvent } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { messageSearchText, prepareEvent } from "../../src/store/prepare.js";
import { encodeRows, transferableChunks } from "../../src/store/row-batch.js";
import { idHash, openSqliteStore, type SqliteEventStore } from "../../src/store/sqlite/index.js";
import { DuplicateEventIdError, type EventToStore, type SearchFilters } from "../../src/store/types.js";
import { collidingIdPairs } from "./colliding-ids.js";
import { CRASH_BATCH, CRASH_CONVERSATIONS, crashBatch } from "./crash-writer.js";
import { describeStreamBatch } from "./stream-batch.js";

const CONV = "4c0d5e8a-1f2b-4c3d-8e9f-0a1b2c3d4e5f";
const OTHER = "9e8d7c6b-5a49-4837-a261-5f4e3d2c1b0a";

let dir: string;
let opened: SqliteEventStore[];

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "acs-store-"));
  opened = [];
});
afterEach(async () => {
  for (const store of opened) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(file = path.join(dir, "events.db")): SqliteEventStore {
  const store = openSqliteStore({ file });
  opened.push(store);
  return store;
}

/** Each example event with its own id and a timestamp 1 ms apart from `start`. */
function events(count: number, { seed = 1, start = Date.UTC(2026, 1, 5, 11, 0, 0) } = {}): EventToStore[] {
  const templates = exampleEvents({ seed });
  return Array.from({ length: count }, (_, i) => {
    const base = templates[i % templates.length]!;
    const event = { ...base, id: `${seed}-${i}`, timestamp: new Date(start + i).toISOString().replace("Z", "") } as Event;
    return { event, json: JSON.stringify(event) };
  });
}

function rawCounts(file: string): Record<string, number> {
  const db = new Database(file, { readonly: true });
  try {
    const one = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return {
      conversations: one("SELECT count(*) AS n FROM conversations"),
      events: one("SELECT count(*) AS n FROM events"),
      messageTexts: one("SELECT count(*) AS n FROM message_texts"),
      fts: one("SELECT count(*) AS n FROM message_fts WHERE message_fts MATCH '\"the\"'"),
    };
  } finally {
    db.close();
  }
}

const all = async (store: SqliteEventStore, id = CONV) => {
  const out: string[] = [];
  let after;
  for (;;) {
    const page = await store.search(id, { order: "asc", limit: 100, after });
    out.push(...page.items.map((e) => e.id));
    if (!page.hasMore) return out;
    after = page.items[page.items.length - 1];
  }
};

describe("transactions leave no rows behind (the contract checks what readers see)", () => {
  it("createConversation with a duplicate event id leaves nothing behind", async () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    const batch = events(10);
    batch[7] = { ...batch[7]!, event: { ...batch[7]!.event, id: batch[2]!.event.id } };
    const error = await (async () => {
      try {
        await store.createConversation({ id: CONV, status: "RUNNING" }, batch);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(DuplicateEventIdError);
    expect(error).toMatchObject({ eventId: batch[2]!.event.id, index: 7 });
    expect(await store.getConversation(CONV)).toBeUndefined();
    expect(rawCounts(file)).toEqual({ conversations: 0, events: 0, messageTexts: 0, fts: 0 });
    // The id is free again.
    expect((await store.createConversation({ id: CONV, status: "RUNNING" }, events(10))).eventCount).toBe(10);
  });

  it("appendEvents with an id already stored, or twice in the batch, leaves nothing behind", async () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    await store.createConversation({ id: CONV, status: "RUNNING" }, events(5));
    const stored = rawCounts(file);
    const record = await store.getConversation(CONV);

    const again = events(6, { seed: 3 });
    again[4] = events(5)[1]!; // already stored
    await expect(store.appendEvents(CONV, again)).rejects.toThrow(expect.objectContaining({ index: 4, eventId: "1-1" }));

    const twice = events(6, { seed: 4 });
    twice[5] = { ...twice[5]!, event: { ...twice[5]!.event, id: twice[1]!.event.id } };
    await expect(store.appendEvents(CONV, twice)).rejects.toThrow(expect.objectContaining({ index: 5, eventId: "4-1" }));

    expect(rawCounts(file)).toEqual(stored);
    expect(await store.getConversation(CONV)).toEqual(record);
    // Seq continues where it was: nothing was consumed by the failed batches.
    expect((await store.appendEvents(CONV, events(1, { seed: 5 })))[0]!.seq).toBe(6);
  });

  it("a failing insert in the middle of a batch rolls the whole batch back", async () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    await store.createConversation({ id: CONV, status: "RUNNING" }, events(5));
    const stored = rawCounts(file);
    // A real SQLite failure on the 4th row of the batch, after three rows and a message text went in.
    const side = new Database(file);
    side.exec(`CREATE TRIGGER boom BEFORE INSERT ON events WHEN new.event_id = 'boom'
               BEGIN SELECT RAISE(ABORT, 'boom'); END`);
    side.close();
    const batch = events(6, { seed: 7 });
    batch[3] = { ...batch[3]!, event: { ...batch[3]!.event, id: "boom" } };
    await expect(store.appendEvents(CONV, batch)).rejects.toThrow(/boom/);
    expect(rawCounts(file)).toEqual(stored);
    expect((await store.getConversation(CONV))!.eventCount).toBe(5);

    // An event that cannot be stored (no timestamp) fails the batch the same way.
    const bad = events(4, { seed: 8 });
    bad[2] = { ...bad[2]!, event: { ...bad[2]!.event, timestamp: "yesterday" } };
    await expect(store.appendEvents(CONV, bad)).rejects.toThrow(/events\[2\].*timestamp/);
    const noSource = events(2, { seed: 9 });
    noSource[1] = { ...noSource[1]!, event: { ...exampleEvents().find((e) => e.kind === "MessageEvent")!, id: "m", source: undefined } as unknown as Event };
    await expect(store.appendEvents(CONV, noSource)).rejects.toThrow(/events\[1\].*source/);
    expect(rawCounts(file)).toEqual(stored);

    // A failed createConversation leaves no conversation either.
    await expect(store.createConversation({ id: OTHER, status: "RUNNING" }, batch)).rejects.toThrow(/boom/);
    expect(await store.getConversation(OTHER)).toBeUndefined();
    expect(rawCounts(file)).toEqual(stored);
  });

  it("a rolled-back write forgets the kind and source codes it assigned (two connections)", async () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    const other = open(file);
    await store.createConversation({ id: CONV, status: "RUNNING" }, []);
    const pause = (id: string): EventToStore => {
      const event = { kind: "PauseEvent", id, timestamp: "2026-02-05T11:00:00", source: "user" } as Event;
      return { event, json: JSON.stringify(event) };
    };
    // The first PauseEvent and the first "user" event come in a batch that fails...
    await expect(store.appendEvents(CONV, [pause("p1"), pause("p1")])).rejects.toThrow(DuplicateEventIdError);
    // ... so the codes they took are free again, and the other connection's first names take them.
    const agentEvent = exampleEvents().find((e) => e.kind !== "PauseEvent" && e.source === "agent")!;
    await other.appendEvents(CONV, [{ event: { ...agentEvent, id: "a1" }, json: JSON.stringify({ ...agentEvent, id: "a1" }) }]);
    await store.appendEvents(CONV, [pause("p2")]);
    for (const s of [store, other]) {
      expect((await s.search(CONV, { order: "asc", limit: 10, kind: "PauseEvent" })).items.map((e) => e.id)).toEqual(["p2"]);
      expect((await s.search(CONV, { order: "asc", limit: 10, source: "user" })).items.map((e) => e.id)).toEqual(["p2"]);
      expect((await s.search(CONV, { order: "asc", limit: 10, kind: agentEvent.kind })).items.map((e) => e.id)).toEqual(["a1"]);
      expect(await s.count(CONV, { source: "agent" })).toBe(1);
    }
  });

});

describe("event ids whose hashes collide (see migrations.ts, version 2)", () => {
  const [[x, y], [u, v]] = collidingIdPairs(2) as [[string, string], [string, string]];
  /** events(count) with some ids replaced. */
  const withIds = (ids: Record<number, string>, count: number, seed = 1) =>
    events(count, { seed }).map((e, i) => (ids[i] === undefined ? e : { ...e, event: { ...e.event, id: ids[i] } }));
  const seqsOf = async (store: SqliteEventStore, ids: string[]) => {
    const seqs: Array<number | undefined> = [];
    for (const id of ids) seqs.push((await store.positionOf(CONV, id))?.seq);
    return seqs;
  };
  const collisions = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT event_id AS id, seq FROM event_id_collisions ORDER BY seq").all();
    } finally {
      db.close();
    }
  };

  it("are both stored, found and searchable, in one batch or across batches", async () => {
    expect(idHash(x)).toBe(idHash(y));
    expect(x).not.toBe(y);
    const file = path.join(dir, "events.db");
    const store = open(file);
    await store.createConversation({ id: CONV, status: "RUNNING" }, withIds({ 2: x, 5: y }, 8));
    await store.appendEvents(CONV, withIds({ 0: v }, 3, 2)); // u comes later: v holds the hash
    await store.appendEvents(CONV, withIds({ 1: u }, 3, 3));
    expect(collisions(file)).toEqual([
      { id: y, seq: 6 },
      { id: u, seq: 13 },
    ]);
    expect(await seqsOf(store, [x, y, v, u])).toEqual([3, 6, 9, 13]);
    expect(await all(store)).toContain(y);
    expect(await store.count(CONV, {})).toBe(14);
    // Another conversation has its own ids: no collision there.
    await store.createConversation({ id: OTHER, status: "RUNNING" }, withIds({ 0: y }, 1));
    expect((await store.positionOf(OTHER, y))?.seq).toBe(1);
    expect(await store.positionOf(OTHER, x)).toBeUndefined();
    expect(collisions(file)).toHaveLength(2);
    // And after reopening.
    await store.close();
    const again = open(file);
    expect(await seqsOf(again, [x, y, v, u])).toEqual([3, 6, 9, 13]);
  });

  it("a duplicate is found whichever of the two ids holds the hash, and nothing is left behind", async () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    await store.createConversation({ id: CONV, status: "RUNNING" }, withIds({ 1: x, 3: y }, 5));
    for (const id of [x, y]) {
      await expect(store.appendEvents(CONV, withIds({ 2: id }, 4, 2))).rejects.toThrow(expect.objectContaining({ eventId: id, index: 2 }));
    }
    // In the same batch: u holds the hash, v collides with it, then v again.
    await expect(store.appendEvents(CONV, withIds({ 0: u, 1: v, 3: v }, 4, 3))).rejects.toThrow(expect.objectContaining({ eventId: v, index: 3 }));
    // A collision recorded by a batch that then fails is rolled back with it.
    await expect(store.appendEvents(CONV, withIds({ 0: u, 1: v, 2: "1-0" }, 3, 4))).rejects.toThrow(expect.objectContaining({ eventId: "1-0", index: 2 }));
    expect(collisions(file)).toEqual([{ id: y, seq: 4 }]);
    expect((await store.getConversation(CONV))!.eventCount).toBe(5);
    expect(await store.positionOf(CONV, v)).toBeUndefined();
    expect((await store.appendEvents(CONV, withIds({ 0: v, 1: u }, 2, 5))).map((e) => e.seq)).toEqual([6, 7]);
    expect(collisions(file)).toEqual([
      { id: y, seq: 4 },
      { id: u, seq: 7 },
    ]);
  });
});

describe("crash safety (a process killed inside a write transaction)", () => {
  const writer = fileURLToPath(new URL("./crash-writer.ts", import.meta.url));
  const packageDir = fileURLToPath(new URL("../..", import.meta.url));
  const messagesPerBatch = crashBatch(0).filter((e) => e.event.kind === "MessageEvent").length;

  for (const mode of ["replay", "append"] as const) {
    it(`SIGKILL inside ${mode === "replay" ? "createConversation: the conversation is absent" : "appendEvents: the conversation keeps its committed events"}, the rest is whole`, async () => {
      const file = path.join(dir, "events.db");
      const child = spawn(process.execPath, ["--import", "tsx", writer, file, mode], { cwd: packageDir, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
      expect({ code, signal, out, err }).toEqual({ code: null, signal: "SIGKILL", out: "committed\ndying\n", err: "" });

      const [first, second, third] = CRASH_CONVERSATIONS;
      const store = open(file);
      expect((await store.getConversation(first))!.eventCount).toBe(2 * CRASH_BATCH);
      expect((await store.getConversation(second))!.eventCount).toBe(CRASH_BATCH);
      expect(await store.getConversation(third)).toBeUndefined();
      // Rows, id hashes, message texts and the full-text index hold the committed batches only.
      expect(await store.count(first, {})).toBe(2 * CRASH_BATCH);
      expect(await store.count(second, {})).toBe(CRASH_BATCH);
      expect((await store.readAfter(second, 0, 2 * CRASH_BATCH)).map((e) => e.id)).toEqual(crashBatch(3).map((e) => e.event.id));
      expect(await store.count(first, { body: "crashword" })).toBe(2 * messagesPerBatch);
      expect(await store.count(second, { body: "crashword" })).toBe(messagesPerBatch);
      expect(await store.count(second, { body: "crashword 4" })).toBe(0);
      const raw = new Database(file);
      const one = (sql: string) => (raw.prepare(sql).get() as { n: number }).n;
      expect({
        events: one("SELECT count(*) AS n FROM events"),
        ids: one("SELECT count(*) AS n FROM event_ids"),
        texts: one("SELECT count(*) AS n FROM message_texts"),
        fts: one(`SELECT count(*) AS n FROM message_fts WHERE message_fts MATCH '"crashword"'`),
      }).toEqual({ events: 3 * CRASH_BATCH, ids: 3 * CRASH_BATCH, texts: 3 * messagesPerBatch, fts: 3 * messagesPerBatch });
      expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(raw.pragma("foreign_key_check")).toEqual([]);
      raw.exec("INSERT INTO message_fts (message_fts) VALUES ('integrity-check')");
      raw.close();

      // The store carries on: the batch that was being written goes in now.
      if (mode === "replay") expect((await store.createConversation({ id: third, status: "RUNNING" }, crashBatch(4))).eventCount).toBe(CRASH_BATCH);
      else expect((await store.appendEvents(second, crashBatch(4)))[0]!.seq).toBe(CRASH_BATCH + 1);
      expect(await store.count(mode === "replay" ? third : second, { body: "crashword 4" })).toBe(messagesPerBatch);
    });
  }
});

describe("staged creation (large replays, in several transactions)", () => {
  const rows = (batch: EventToStore[]) => batch.map((entry, index) => prepareEvent(entry, index, true));

  it("is invisible until finished, then appears whole; its rows are exactly those of a one-shot creation", async () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    const all = events(3_000);
    const handle = await store.beginImport({ id: CONV, status: "STOPPED" });
    for (let from = 0; from < 2_500; from += 700) {
      await store.importRows(handle, rows(all.slice(from, Math.min(from + 700, 2_500))));
      expect(await store.getConversation(CONV)).toBeUndefined();
      expect(await store.search(CONV, { order: "asc", limit: 10 })).toEqual({ items: [], hasMore: false });
      expect(await store.count(CONV, { body: "the" })).toBe(0);
    }
    const record = await store.finishImport(handle, all.slice(2_500));
    expect(record).toMatchObject({ id: CONV, eventCount: 3_000 });
    const oneShot = open(path.join(dir, "one-shot.db"));
    await oneShot.createConversation({ id: CONV, status: "STOPPED" }, all);
    expect(await store.readAfter(CONV, 0, 5_000)).toEqual(await oneShot.readAfter(CONV, 0, 5_000));
    expect(await store.count(CONV, { body: "the" })).toBe(await oneShot.count(CONV, { body: "the" }));
    expect(rawCounts(file)).toEqual(rawCounts(path.join(dir, "one-shot.db")));
  });

  it("discarded step by step, or left by a crash and removed at the next open, leaves nothing", async () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    await store.createConversation({ id: OTHER, status: "STOPPED" }, events(50, { seed: 9 }));
    const before = rawCounts(file);
    const handle = await store.beginImport({ id: CONV, status: "STOPPED" });
    await store.importRows(handle, rows(events(2_000)));
    let steps = 1;
    while (!await store.discardImport(handle, 300)) steps++;
    expect(steps).toBeGreaterThan(5);
    expect(rawCounts(file)).toEqual(before);

    const left = await store.beginImport({ id: CONV, status: "STOPPED" });
    await store.importRows(left, rows(events(1_000)));
    await store.close();
    const reopened = open(file);
    expect(rawCounts(file)).toEqual(before);
    expect((await reopened.getConversation(OTHER))?.eventCount).toBe(50);
  });

  it("moves an event batch's encoded rows to the import writer, never copies them on the request thread", async () => {
    // Structured-cloning a batch of 10,000 rows (~6 MB) held the request thread 35–90 ms a batch.
    const store = openSqliteStore({ file: path.join(dir, "events.db"), importThread: true });
    opened.push(store);
    await store.createConversation({ id: CONV, status: "STOPPED" }, []);
    const batch = events(1_000);
    const chunks = [encodeRows(rows(batch.slice(0, 500))), encodeRows(rows(batch.slice(500)))];
    expect(chunks.every((chunk) => chunk.byteLength > 0)).toBe(true);
    expect(await store.appendBatch(CONV, { count: 1_000, chunks })).toEqual({ firstSeq: 1, count: 1_000, eventCount: 1_000 });
    expect(chunks.map((chunk) => chunk.byteLength)).toEqual([0, 0]); // detached: moved, not copied
    expect((await store.readAfter(CONV, 0, 2_000)).map((e) => e.id)).toEqual(batch.map((e) => e.event.id));
    // A chunk that shares its memory with others (a view into a larger buffer) is copied, never moved.
    const whole = encodeRows(rows(events(10, { seed: 9 })));
    const shared = new Uint8Array(whole.length + 8);
    shared.set(whole, 4);
    const view = shared.subarray(4, 4 + whole.length);
    expect(transferableChunks({ count: 10, chunks: [view, whole] })).toEqual([whole.buffer]);
  });

  it("on the import writer thread, never makes the store's own writes wait on SQLite's lock", async () => {
    // busy_timeout 0: a write of this connection that met the import writer's transaction would
    // fail with SQLITE_BUSY at once (with the default, it would sleep on the calling thread). The
    // chunks stay small enough that the WAL never reaches the checkpointer's RESTART size (16 MB),
    // whose brief write lock this connection would meet too.
    const file = path.join(dir, "events.db");
    const store = openSqliteStore({ file, busyTimeoutMs: 0, importThread: true });
    opened.push(store);
    await store.createConversation({ id: OTHER, status: "STOPPED" }, []);
    const handle = await store.beginImport({ id: CONV, status: "STOPPED" });
    // While each chunk is in flight, SQLite's write lock is held, as by a long commit of the import
    // writer: here by a connection of the test's, so that it is held for sure when the store's
    // writes are made (the import writer meets it too and waits in its busy handler). A write that
    // did not wait its turn would meet the lock and fail with SQLITE_BUSY.
    const holder = new Database(file);
    holder.pragma("busy_timeout = 5000"); // the background checkpointer may hold it a moment
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    try {
      const all = events(20 * 500);
      for (let round = 0; round < 20; round++) {
        holder.exec("BEGIN IMMEDIATE");
        const settled: string[] = [];
        const chunk = store.importRows(handle, rows(all.slice(round * 500, (round + 1) * 500))).then(() => settled.push("chunk"));
        const writes = [store.appendEvents(OTHER, events(1, { seed: 100 + round })), store.putDocument("round", String(round)), store.setStatus(OTHER, "RUNNING")].map((write, i) =>
          write.then(() => settled.push(`write ${i}`)),
        );
        await turn();
        expect(settled).toEqual([]); // the chunk waits for the lock, the writes wait for the chunk
        holder.exec("COMMIT");
        await Promise.all([chunk, ...writes]);
        expect(settled).toEqual(["chunk", "write 0", "write 1", "write 2"]); // in their turn, in the order made
      }
    } finally {
      holder.close();
    }
    expect((await store.finishImport(handle, [])).eventCount).toBe(10_000);
    expect((await store.getConversation(OTHER))?.eventCount).toBe(20);
  });
});

describeStreamBatch("SQLite, on the import writer", {
  open: () => {
    const store = openSqliteStore({ file: path.join(dir, "events.db"), importThread: true });
    opened.push(store);
    return store;
  },
  rawCounts: () => rawCounts(path.join(dir, "events.db")),
});

describe("message_fts's FTS5 settings for bulk ingest (open.ts, FTS_SETTINGS)", () => {
  const settings = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return Object.fromEntries((db.prepare("SELECT k, v FROM message_fts_config WHERE k = 'automerge'").all() as { k: string; v: number }[]).map((r) => [r.k, r.v]));
    } finally {
      db.close();
    }
  };

  it("are set at open, on a new file and on one written before them, and body search finds the same", async () => {
    const file = path.join(dir, "events.db");
    const store = openSqliteStore({ file });
    await store.close();
    expect(settings(file)).toEqual({ automerge: 8 });
    // A file from before, or set otherwise: FTS5's defaults.
    const raw = new Database(file);
    raw.exec("INSERT INTO message_fts (message_fts, rank) VALUES ('automerge', 4)");
    raw.close();
    expect(settings(file)).toEqual({ automerge: 4 });
    const reopened = open(file);
    expect(settings(file)).toEqual({ automerge: 8 });
    // Enough commits for merges under the new settings; every message is found.
    await reopened.createConversation({ id: CONV, status: "STOPPED" }, []);
    const written = events(3_000, { seed: 21 });
    for (let from = 0; from < written.length; from += 100) await reopened.appendEvents(CONV, written.slice(from, from + 100));
    const messages = written.filter((e) => e.event.kind === "MessageEvent") as Array<EventToStore & { event: MessageEvent }>;
    const needle = messageSearchText(messages[0]!.event).toLowerCase().slice(0, 12);
    const expected = messages.filter((e) => messageSearchText(e.event).toLowerCase().includes(needle)).length;
    expect(expected).toBeGreaterThan(0);
    expect(await reopened.count(CONV, { body: needle })).toBe(expected);
  });
});

describe("event counters (migrations.ts, version 3)", () => {
  const rows = (batch: EventToStore[]) => batch.map((entry, index) => prepareEvent(entry, index, true));

  /** The counters' rows, and what counting the events themselves gives: equal when the counters are right. */
  function counters(file: string) {
    const db = new Database(file, { readonly: true });
    try {
      return {
        kept: db.prepare("SELECT conversation, kind, source, n FROM event_counts ORDER BY conversation, kind, source").all(),
        counted: db.prepare("SELECT conversation, kind, source, count(*) AS n FROM events GROUP BY conversation, kind, source ORDER BY conversation, kind, source").all(),
      };
    } finally {
      db.close();
    }
  }

  /** count for each of kind, source and kind+source that the batch has, against counting `stored` by hand. */
  async function expectCounts(store: SqliteEventStore, id: string, stored: readonly EventToStore[]) {
    const kinds = [...new Set(stored.map((e) => e.event.kind)), "NoSuchEvent"];
    const sources = [...new Set(stored.map((e) => e.event.source)), "environment"];
    for (const kind of [undefined, ...kinds]) {
      for (const source of [undefined, ...sources]) {
        const want = stored.filter((e) => (kind === undefined || e.event.kind === kind) && (source === undefined || e.event.source === source)).length;
        expect(await store.count(id, { kind, source } as SearchFilters), JSON.stringify({ kind, source })).toBe(want);
      }
    }
  }

  it("stay right after a batch rolled back on a duplicate id", async () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    const first = events(40);
    await store.createConversation({ id: CONV, status: "RUNNING" }, first);
    const again = events(30, { seed: 3 });
    again[25] = first[4]!; // already stored: the whole batch rolls back, its counters with it
    await expect(store.appendEvents(CONV, again)).rejects.toThrow(DuplicateEventIdError);
    await expectCounts(store, CONV, first);
    const more = events(17, { seed: 4 });
    await store.appendEvents(CONV, more);
    await expectCounts(store, CONV, [...first, ...more]);
    const { kept, counted } = counters(file);
    expect(kept).toEqual(counted);
  });

  it("are 0 while a staged import runs, whole once it finishes, and gone when it is discarded", async () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    const all = events(1_200);
    const handle = await store.beginImport({ id: CONV, status: "STOPPED" });
    await store.importRows(handle, rows(all.slice(0, 1_000)));
    await expectCounts(store, CONV, []);
    await store.finishImport(handle, all.slice(1_000));
    await expectCounts(store, CONV, all);

    const discarded = await store.beginImport({ id: OTHER, status: "STOPPED" });
    await store.importRows(discarded, rows(events(900, { seed: 7 })));
    while (!await store.discardImport(discarded, 250));
    const { kept, counted } = counters(file);
    expect(kept).toEqual(counted);
    // The discarded conversation's pk is free again (the highest one): a new conversation may get
    // it, and must count only its own events.
    const own = events(30, { seed: 8 });
    await store.createConversation({ id: OTHER, status: "RUNNING" }, own);
    const db = new Database(file, { readonly: true });
    expect(db.prepare("SELECT pk FROM conversations WHERE id = ?").get(OTHER)).toEqual({ pk: 2 });
    db.close();
    await expectCounts(store, OTHER, own);
    await expectCounts(store, CONV, all);
  });
});

describe("persistence", () => {
  it("a reopened file has everything", async () => {
    const file = path.join(dir, "events.db");
    const first = openSqliteStore({ file });
    const batch = events(120);
    const message = exampleEvents().find((e): e is MessageEvent => e.kind === "MessageEvent")!;
    const hello = { ...message, id: "hello", timestamp: "2026-02-05T12:00:00", llm_message: { ...message.llm_message, content: [{ type: "text" as const, text: "Persistent Quokka" }] } };
    const record = await first.createConversation({ id: CONV, status: "RUNNING", gitProvider: "gitlab" }, batch);
    await first.appendEvents(CONV, [{ event: hello, json: JSON.stringify(hello) }]);
    await first.setStatus(CONV, "STOPPED");
    await first.putDocument("settings", '{"language":"en"}');
    const before = { record: await first.getConversation(CONV), ids: await all(first), position: await first.positionOf(CONV, "hello") };
    await first.close();
    await first.close(); // idempotent
    expect(await first.ping()).toBe(false);

    const second = open(file);
    expect(await second.getConversation(CONV)).toEqual(before.record);
    expect((await second.getConversation(CONV))!.createdAt).toBe(record.createdAt);
    expect(await all(second)).toEqual(before.ids);
    expect(await second.positionOf(CONV, "hello")).toEqual(before.position);
    expect((await second.search(CONV, { order: "asc", limit: 5, body: "quokka" })).items.map((e) => e.id)).toEqual(["hello"]);
    expect(await second.getDocument("settings")).toBe('{"language":"en"}');
    // Appends continue the sequence.
    expect((await second.appendEvents(CONV, events(1, { seed: 9 })))[0]!.seq).toBe(122);
  });

  it("uses WAL, and two connections on one file see each other's commits", async () => {
    const file = path.join(dir, "events.db");
    const a = open(file);
    const b = open(file);
    await a.createConversation({ id: CONV, status: "RUNNING" }, events(3));
    expect((await b.getConversation(CONV))!.eventCount).toBe(3);
    await b.appendEvents(CONV, events(2, { seed: 2 }));
    expect(await a.count(CONV, {})).toBe(5);
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
  });

  it("works in memory", async () => {
    const store = openSqliteStore({ file: ":memory:" });
    opened.push(store);
    await store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
    expect(await all(store)).toHaveLength(3);
  });
});
