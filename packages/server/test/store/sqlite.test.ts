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
import { prepareEvent } from "../../src/store/prepare.js";
import { idHash, openSqliteStore, type SqliteEventStore } from "../../src/store/sqlite.js";
import { ConversationNotFoundError } from "../../src/store/types.js";
import { ConversationExistsError, DuplicateEventIdError, type EventToStore } from "../../src/store/types.js";
import { collidingIdPairs } from "./colliding-ids.js";
import { CRASH_BATCH, CRASH_CONVERSATIONS, crashBatch } from "./crash-writer.js";

const CONV = "4c0d5e8a-1f2b-4c3d-8e9f-0a1b2c3d4e5f";
const OTHER = "9e8d7c6b-5a49-4837-a261-5f4e3d2c1b0a";

let dir: string;
let opened: SqliteEventStore[];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "acs-store-"));
  opened = [];
});
afterEach(() => {
  for (const store of opened) store.close();
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

const all = (store: SqliteEventStore, id = CONV) => {
  const out: string[] = [];
  let after;
  for (;;) {
    const page = store.search(id, { order: "asc", limit: 100, after });
    out.push(...page.items.map((e) => e.id));
    if (!page.hasMore) return out;
    after = page.items[page.items.length - 1];
  }
};

describe("conversations and events", () => {
  it("creates a conversation with its events and reads it back", () => {
    const store = open();
    expect(store.kind).toBe("sqlite");
    const batch = events(55);
    const before = Date.now();
    const record = store.createConversation(
      { id: CONV, status: "STARTING", repository: "octo/repo", selectedBranch: "main", gitProvider: "github" },
      batch,
    );
    expect(record).toMatchObject({
      id: CONV,
      status: "STARTING",
      eventCount: 55,
      repository: "octo/repo",
      selectedBranch: "main",
      gitProvider: "github",
    });
    expect(record.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(record.createdAt)).toBeGreaterThanOrEqual(before - 1);
    expect(record.updatedAt).toBe(record.createdAt);
    expect(store.getConversation(CONV)).toEqual(record);
    expect(store.getConversation(OTHER)).toBeUndefined();
    expect(all(store)).toEqual(batch.map((e) => e.event.id));
  });

  it("defaults the optional conversation fields to null and accepts no events", () => {
    const store = open();
    const record = store.createConversation({ id: CONV, status: "RUNNING" }, []);
    expect(record).toMatchObject({ eventCount: 0, repository: null, selectedBranch: null, gitProvider: null });
    expect(store.search(CONV, { order: "asc", limit: 10 })).toEqual({ items: [], hasMore: false });
    expect(store.appendEvents(CONV, [])).toEqual([]);
  });

  it("appends events with increasing seq and returns them as stored", () => {
    const store = open();
    store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
    const more = events(4, { seed: 2 });
    const stored = store.appendEvents(CONV, more);
    expect(stored.map((e) => e.seq)).toEqual([4, 5, 6, 7]);
    expect(stored.map((e) => e.id)).toEqual(more.map((e) => e.event.id));
    expect(stored[0]!.json).toBe(more[0]!.json);
    expect(stored[0]!.ts).toBe(Date.parse(`${more[0]!.event.timestamp}Z`) * 1000);
    expect(store.getConversation(CONV)!.eventCount).toBe(7);
    expect(store.positionOf(CONV, more[2]!.event.id)).toEqual({ ts: stored[2]!.ts, seq: 6 });
    expect(store.positionOf(CONV, "nope")).toBeUndefined();
    expect(store.positionOf(OTHER, more[2]!.event.id)).toBeUndefined();
  });

  it("returns each event's JSON text byte for byte", () => {
    const store = open();
    const [first] = events(1);
    const json = `{ "kind" : "PauseEvent",\n  "id":"${first!.event.id}", "timestamp": "2026-02-05T11:00:00", "source":"user" , "x\\u00e9": 1 }`;
    store.createConversation({ id: CONV, status: "RUNNING" }, [
      { event: { kind: "PauseEvent", id: first!.event.id, timestamp: "2026-02-05T11:00:00", source: "user" }, json },
    ]);
    expect(store.search(CONV, { order: "asc", limit: 1 }).items[0]!.json).toBe(json);
  });

  it("stores the kind's default source when an event has none", () => {
    const store = open();
    const pause = { kind: "PauseEvent", id: "p", timestamp: "2026-02-05T11:00:00" } as Event;
    const obs = { ...exampleEvents().find((e) => e.kind === "ObservationEvent")!, id: "o", source: undefined } as Event;
    store.createConversation({ id: CONV, status: "RUNNING" }, [pause, obs].map((event) => ({ event, json: JSON.stringify(event) })));
    expect(store.search(CONV, { order: "asc", limit: 10, source: "user" }).items.map((e) => e.id)).toEqual(["p"]);
    expect(store.search(CONV, { order: "asc", limit: 10, source: "environment" }).items.map((e) => e.id)).toEqual(["o"]);
  });

  it("keeps conversations apart", () => {
    const store = open();
    store.createConversation({ id: CONV, status: "RUNNING" }, events(5, { seed: 1 }));
    // The same event ids may appear in another conversation.
    store.createConversation({ id: OTHER, status: "RUNNING" }, events(7, { seed: 1 }));
    expect(all(store, CONV)).toHaveLength(5);
    expect(all(store, OTHER)).toHaveLength(7);
    expect(store.count(CONV, {})).toBe(5);
    expect(store.count(OTHER, {})).toBe(7);
  });

  it("sets the status and bumps updatedAt", async () => {
    const store = open();
    const created = store.createConversation({ id: CONV, status: "STARTING" }, []);
    await new Promise((r) => setTimeout(r, 5));
    const updated = store.setStatus(CONV, "STOPPED");
    expect(updated.status).toBe("STOPPED");
    expect(updated.createdAt).toBe(created.createdAt);
    expect(updated.updatedAt > created.updatedAt).toBe(true);
    expect(store.getConversation(CONV)).toEqual(updated);
  });

  it("refuses writes to an unknown conversation", () => {
    const store = open();
    expect(() => store.appendEvents(OTHER, events(1))).toThrow(ConversationNotFoundError);
    expect(() => store.setStatus(OTHER, "RUNNING")).toThrow(/Conversation not found/);
    expect(store.search(OTHER, { order: "asc", limit: 5 })).toEqual({ items: [], hasMore: false });
    expect(store.count(OTHER, {})).toBe(0);
  });

  it("validates the page size and order", () => {
    const store = open();
    store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
    for (const limit of [0, 101, 1.5, Number.NaN]) {
      expect(() => store.search(CONV, { order: "asc", limit })).toThrow(RangeError);
    }
    expect(() => store.search(CONV, { order: "up" as "asc", limit: 5 })).toThrow(RangeError);
  });
});

describe("transactions", () => {
  it("createConversation with a duplicate event id leaves nothing behind", () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    const batch = events(10);
    batch[7] = { ...batch[7]!, event: { ...batch[7]!.event, id: batch[2]!.event.id } };
    const error = (() => {
      try {
        store.createConversation({ id: CONV, status: "RUNNING" }, batch);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(DuplicateEventIdError);
    expect(error).toMatchObject({ eventId: batch[2]!.event.id, index: 7 });
    expect(store.getConversation(CONV)).toBeUndefined();
    expect(rawCounts(file)).toEqual({ conversations: 0, events: 0, messageTexts: 0, fts: 0 });
    // The id is free again.
    expect(store.createConversation({ id: CONV, status: "RUNNING" }, events(10)).eventCount).toBe(10);
  });

  it("appendEvents with an id already stored, or twice in the batch, leaves nothing behind", () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    store.createConversation({ id: CONV, status: "RUNNING" }, events(5));
    const stored = rawCounts(file);
    const record = store.getConversation(CONV);

    const again = events(6, { seed: 3 });
    again[4] = events(5)[1]!; // already stored
    expect(() => store.appendEvents(CONV, again)).toThrow(expect.objectContaining({ index: 4, eventId: "1-1" }));

    const twice = events(6, { seed: 4 });
    twice[5] = { ...twice[5]!, event: { ...twice[5]!.event, id: twice[1]!.event.id } };
    expect(() => store.appendEvents(CONV, twice)).toThrow(expect.objectContaining({ index: 5, eventId: "4-1" }));

    expect(rawCounts(file)).toEqual(stored);
    expect(store.getConversation(CONV)).toEqual(record);
    // Seq continues where it was: nothing was consumed by the failed batches.
    expect(store.appendEvents(CONV, events(1, { seed: 5 }))[0]!.seq).toBe(6);
  });

  it("reports the first offending event of a batch", () => {
    const store = open();
    store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
    const batch = events(6, { seed: 2 });
    batch[2] = { ...batch[2]!, event: { ...batch[2]!.event, id: batch[0]!.event.id } }; // repeats index 0
    batch[4] = events(3)[0]!; // stored
    expect(() => store.appendEvents(CONV, batch)).toThrow(expect.objectContaining({ index: 2 }));
  });

  it("a failing insert in the middle of a batch rolls the whole batch back", () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    store.createConversation({ id: CONV, status: "RUNNING" }, events(5));
    const stored = rawCounts(file);
    // A real SQLite failure on the 4th row of the batch, after three rows and a message text went in.
    const side = new Database(file);
    side.exec(`CREATE TRIGGER boom BEFORE INSERT ON events WHEN new.event_id = 'boom'
               BEGIN SELECT RAISE(ABORT, 'boom'); END`);
    side.close();
    const batch = events(6, { seed: 7 });
    batch[3] = { ...batch[3]!, event: { ...batch[3]!.event, id: "boom" } };
    expect(() => store.appendEvents(CONV, batch)).toThrow(/boom/);
    expect(rawCounts(file)).toEqual(stored);
    expect(store.getConversation(CONV)!.eventCount).toBe(5);

    // An event that cannot be stored (no timestamp) fails the batch the same way.
    const bad = events(4, { seed: 8 });
    bad[2] = { ...bad[2]!, event: { ...bad[2]!.event, timestamp: "yesterday" } };
    expect(() => store.appendEvents(CONV, bad)).toThrow(/events\[2\].*timestamp/);
    const noSource = events(2, { seed: 9 });
    noSource[1] = { ...noSource[1]!, event: { ...exampleEvents().find((e) => e.kind === "MessageEvent")!, id: "m", source: undefined } as unknown as Event };
    expect(() => store.appendEvents(CONV, noSource)).toThrow(/events\[1\].*source/);
    expect(rawCounts(file)).toEqual(stored);

    // A failed createConversation leaves no conversation either.
    expect(() => store.createConversation({ id: OTHER, status: "RUNNING" }, batch)).toThrow(/boom/);
    expect(store.getConversation(OTHER)).toBeUndefined();
    expect(rawCounts(file)).toEqual(stored);
  });

  it("a rolled-back write forgets the kind and source codes it assigned (two connections)", () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    const other = open(file);
    store.createConversation({ id: CONV, status: "RUNNING" }, []);
    const pause = (id: string): EventToStore => {
      const event = { kind: "PauseEvent", id, timestamp: "2026-02-05T11:00:00", source: "user" } as Event;
      return { event, json: JSON.stringify(event) };
    };
    // The first PauseEvent and the first "user" event come in a batch that fails...
    expect(() => store.appendEvents(CONV, [pause("p1"), pause("p1")])).toThrow(DuplicateEventIdError);
    // ... so the codes they took are free again, and the other connection's first names take them.
    const agentEvent = exampleEvents().find((e) => e.kind !== "PauseEvent" && e.source === "agent")!;
    other.appendEvents(CONV, [{ event: { ...agentEvent, id: "a1" }, json: JSON.stringify({ ...agentEvent, id: "a1" }) }]);
    store.appendEvents(CONV, [pause("p2")]);
    for (const s of [store, other]) {
      expect(s.search(CONV, { order: "asc", limit: 10, kind: "PauseEvent" }).items.map((e) => e.id)).toEqual(["p2"]);
      expect(s.search(CONV, { order: "asc", limit: 10, source: "user" }).items.map((e) => e.id)).toEqual(["p2"]);
      expect(s.search(CONV, { order: "asc", limit: 10, kind: agentEvent.kind }).items.map((e) => e.id)).toEqual(["a1"]);
      expect(s.count(CONV, { source: "agent" })).toBe(1);
    }
  });

  it("a kind or source never stored matches nothing", () => {
    const store = open();
    store.createConversation({ id: CONV, status: "RUNNING" }, events(3).filter((e) => e.event.kind !== "MessageEvent"));
    expect(store.search(CONV, { order: "asc", limit: 10, kind: "CondensationSummaryEvent" })).toEqual({ items: [], hasMore: false });
    expect(store.count(CONV, { kind: "CondensationSummaryEvent" })).toBe(0);
    expect(store.search(CONV, { order: "asc", limit: 10, body: "anything" })).toEqual({ items: [], hasMore: false });
    expect(store.count(CONV, { body: "x" })).toBe(0);
  });

  it("createConversation of an existing id throws ConversationExistsError and changes nothing", () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    const record = store.createConversation({ id: CONV, status: "RUNNING", repository: "a/b" }, events(4));
    const stored = rawCounts(file);
    expect(() => store.createConversation({ id: CONV, status: "STOPPED", repository: "c/d" }, events(3, { seed: 2 }))).toThrow(
      ConversationExistsError,
    );
    expect(store.getConversation(CONV)).toEqual(record);
    expect(rawCounts(file)).toEqual(stored);
  });
});

describe("event ids whose hashes collide (see migrations.ts, version 2)", () => {
  const [[x, y], [u, v]] = collidingIdPairs(2) as [[string, string], [string, string]];
  /** events(count) with some ids replaced. */
  const withIds = (ids: Record<number, string>, count: number, seed = 1) =>
    events(count, { seed }).map((e, i) => (ids[i] === undefined ? e : { ...e, event: { ...e.event, id: ids[i] } }));
  const collisions = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT event_id AS id, seq FROM event_id_collisions ORDER BY seq").all();
    } finally {
      db.close();
    }
  };

  it("are both stored, found and searchable, in one batch or across batches", () => {
    expect(idHash(x)).toBe(idHash(y));
    expect(x).not.toBe(y);
    const file = path.join(dir, "events.db");
    const store = open(file);
    store.createConversation({ id: CONV, status: "RUNNING" }, withIds({ 2: x, 5: y }, 8));
    store.appendEvents(CONV, withIds({ 0: v }, 3, 2)); // u comes later: v holds the hash
    store.appendEvents(CONV, withIds({ 1: u }, 3, 3));
    expect(collisions(file)).toEqual([
      { id: y, seq: 6 },
      { id: u, seq: 13 },
    ]);
    expect([x, y, v, u].map((id) => store.positionOf(CONV, id)?.seq)).toEqual([3, 6, 9, 13]);
    expect(all(store)).toContain(y);
    expect(store.count(CONV, {})).toBe(14);
    // Another conversation has its own ids: no collision there.
    store.createConversation({ id: OTHER, status: "RUNNING" }, withIds({ 0: y }, 1));
    expect(store.positionOf(OTHER, y)?.seq).toBe(1);
    expect(store.positionOf(OTHER, x)).toBeUndefined();
    expect(collisions(file)).toHaveLength(2);
    // And after reopening.
    store.close();
    const again = open(file);
    expect([x, y, v, u].map((id) => again.positionOf(CONV, id)?.seq)).toEqual([3, 6, 9, 13]);
  });

  it("a duplicate is found whichever of the two ids holds the hash, and nothing is left behind", () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    store.createConversation({ id: CONV, status: "RUNNING" }, withIds({ 1: x, 3: y }, 5));
    for (const id of [x, y]) {
      expect(() => store.appendEvents(CONV, withIds({ 2: id }, 4, 2))).toThrow(expect.objectContaining({ eventId: id, index: 2 }));
    }
    // In the same batch: u holds the hash, v collides with it, then v again.
    expect(() => store.appendEvents(CONV, withIds({ 0: u, 1: v, 3: v }, 4, 3))).toThrow(expect.objectContaining({ eventId: v, index: 3 }));
    // A collision recorded by a batch that then fails is rolled back with it.
    expect(() => store.appendEvents(CONV, withIds({ 0: u, 1: v, 2: "1-0" }, 3, 4))).toThrow(expect.objectContaining({ eventId: "1-0", index: 2 }));
    expect(collisions(file)).toEqual([{ id: y, seq: 4 }]);
    expect(store.getConversation(CONV)!.eventCount).toBe(5);
    expect(store.positionOf(CONV, v)).toBeUndefined();
    expect(store.appendEvents(CONV, withIds({ 0: v, 1: u }, 2, 5)).map((e) => e.seq)).toEqual([6, 7]);
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
      expect(store.getConversation(first)!.eventCount).toBe(2 * CRASH_BATCH);
      expect(store.getConversation(second)!.eventCount).toBe(CRASH_BATCH);
      expect(store.getConversation(third)).toBeUndefined();
      // Rows, id hashes, message texts and the full-text index hold the committed batches only.
      expect(store.count(first, {})).toBe(2 * CRASH_BATCH);
      expect(store.count(second, {})).toBe(CRASH_BATCH);
      expect(store.readAfter(second, 0, 2 * CRASH_BATCH).map((e) => e.id)).toEqual(crashBatch(3).map((e) => e.event.id));
      expect(store.count(first, { body: "crashword" })).toBe(2 * messagesPerBatch);
      expect(store.count(second, { body: "crashword" })).toBe(messagesPerBatch);
      expect(store.count(second, { body: "crashword 4" })).toBe(0);
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
      if (mode === "replay") expect(store.createConversation({ id: third, status: "RUNNING" }, crashBatch(4)).eventCount).toBe(CRASH_BATCH);
      else expect(store.appendEvents(second, crashBatch(4))[0]!.seq).toBe(CRASH_BATCH + 1);
      expect(store.count(mode === "replay" ? third : second, { body: "crashword 4" })).toBe(messagesPerBatch);
    });
  }
});

describe("staged creation (large replays, in several transactions)", () => {
  const rows = (batch: EventToStore[]) => batch.map((entry, index) => prepareEvent(entry, index, true));

  it("is invisible until finished, then appears whole; its rows are exactly those of a one-shot creation", () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    const all = events(3_000);
    const handle = store.beginImport({ id: CONV, status: "STOPPED" });
    for (let from = 0; from < 2_500; from += 700) {
      store.importRows(handle, rows(all.slice(from, Math.min(from + 700, 2_500))));
      expect(store.getConversation(CONV)).toBeUndefined();
      expect(store.search(CONV, { order: "asc", limit: 10 })).toEqual({ items: [], hasMore: false });
      expect(store.count(CONV, { body: "the" })).toBe(0);
    }
    const record = store.finishImport(handle, all.slice(2_500));
    expect(record).toMatchObject({ id: CONV, eventCount: 3_000 });
    const oneShot = open(path.join(dir, "one-shot.db"));
    oneShot.createConversation({ id: CONV, status: "STOPPED" }, all);
    expect(store.readAfter(CONV, 0, 5_000)).toEqual(oneShot.readAfter(CONV, 0, 5_000));
    expect(store.count(CONV, { body: "the" })).toBe(oneShot.count(CONV, { body: "the" }));
    expect(rawCounts(file)).toEqual(rawCounts(path.join(dir, "one-shot.db")));
  });

  it("discarded step by step, or left by a crash and removed at the next open, leaves nothing", () => {
    const file = path.join(dir, "events.db");
    const store = open(file);
    store.createConversation({ id: OTHER, status: "STOPPED" }, events(50, { seed: 9 }));
    const before = rawCounts(file);
    const handle = store.beginImport({ id: CONV, status: "STOPPED" });
    store.importRows(handle, rows(events(2_000)));
    let steps = 1;
    while (!store.discardImport(handle, 300)) steps++;
    expect(steps).toBeGreaterThan(5);
    expect(rawCounts(file)).toEqual(before);

    const left = store.beginImport({ id: CONV, status: "STOPPED" });
    store.importRows(left, rows(events(1_000)));
    store.close();
    const reopened = open(file);
    expect(rawCounts(file)).toEqual(before);
    expect(reopened.getConversation(OTHER)?.eventCount).toBe(50);
  });

  it("refuses an id taken before it begins or before it finishes, and an id repeated across chunks", () => {
    const store = open();
    store.createConversation({ id: OTHER, status: "STOPPED" }, []);
    expect(() => store.beginImport({ id: OTHER, status: "STOPPED" })).toThrow(ConversationExistsError);
    const handle = store.beginImport({ id: CONV, status: "STOPPED" });
    store.importRows(handle, rows(events(10)));
    expect(() => store.importRows(handle, rows(events(10)).slice(3, 4))).toThrow(DuplicateEventIdError);
    store.createConversation({ id: CONV, status: "STOPPED" }, []);
    expect(() => store.finishImport(handle, [])).toThrow(ConversationExistsError);
    expect(store.getConversation(CONV)?.eventCount).toBe(0);
  });
});

describe("persistence", () => {
  it("a reopened file has everything", () => {
    const file = path.join(dir, "events.db");
    const first = openSqliteStore({ file });
    const batch = events(120);
    const message = exampleEvents().find((e): e is MessageEvent => e.kind === "MessageEvent")!;
    const hello = { ...message, id: "hello", timestamp: "2026-02-05T12:00:00", llm_message: { ...message.llm_message, content: [{ type: "text" as const, text: "Persistent Quokka" }] } };
    const record = first.createConversation({ id: CONV, status: "RUNNING", gitProvider: "gitlab" }, batch);
    first.appendEvents(CONV, [{ event: hello, json: JSON.stringify(hello) }]);
    first.setStatus(CONV, "STOPPED");
    first.putDocument("settings", '{"language":"en"}');
    const before = { record: first.getConversation(CONV), ids: all(first), position: first.positionOf(CONV, "hello") };
    first.close();
    first.close(); // idempotent
    expect(first.ping()).toBe(false);

    const second = open(file);
    expect(second.getConversation(CONV)).toEqual(before.record);
    expect(second.getConversation(CONV)!.createdAt).toBe(record.createdAt);
    expect(all(second)).toEqual(before.ids);
    expect(second.positionOf(CONV, "hello")).toEqual(before.position);
    expect(second.search(CONV, { order: "asc", limit: 5, body: "quokka" }).items.map((e) => e.id)).toEqual(["hello"]);
    expect(second.getDocument("settings")).toBe('{"language":"en"}');
    // Appends continue the sequence.
    expect(second.appendEvents(CONV, events(1, { seed: 9 }))[0]!.seq).toBe(122);
  });

  it("uses WAL, and two connections on one file see each other's commits", () => {
    const file = path.join(dir, "events.db");
    const a = open(file);
    const b = open(file);
    a.createConversation({ id: CONV, status: "RUNNING" }, events(3));
    expect(b.getConversation(CONV)!.eventCount).toBe(3);
    b.appendEvents(CONV, events(2, { seed: 2 }));
    expect(a.count(CONV, {})).toBe(5);
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
  });

  it("works in memory", () => {
    const store = openSqliteStore({ file: ":memory:" });
    opened.push(store);
    store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
    expect(all(store)).toHaveLength(3);
  });
});

describe("documents and lifecycle", () => {
  it("gets and upserts documents", () => {
    const store = open();
    expect(store.getDocument("settings")).toBeUndefined();
    store.putDocument("settings", "{}");
    store.putDocument("tokens", '{"github":"x"}');
    store.putDocument("settings", '{"language":"fr"}');
    expect(store.getDocument("settings")).toBe('{"language":"fr"}');
    expect(store.getDocument("tokens")).toBe('{"github":"x"}');
    store.putDocument("empty", "");
    expect(store.getDocument("empty")).toBe("");
  });

  it("pings until closed; close is idempotent", () => {
    const store = open();
    expect(store.ping()).toBe(true);
    store.close();
    store.close();
    expect(store.ping()).toBe(false);
  });
});
