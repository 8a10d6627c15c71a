/** Versioned schema migrations on real database files. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_EVENT_SOURCE, type Event, type MessageEvent } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import {
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  SchemaTooNewError,
  applyStep,
  migrate,
  schemaVersion,
  type Migration,
} from "../../src/store/migrations.js";
import { messageSearchText, openSqliteStore, type SqliteEventStore } from "../../src/store/sqlite/index.js";
import { eventTimeMicros } from "../../src/store/time.js";
import { DuplicateEventIdError, type EventToStore, type SearchFilters, type SearchQuery } from "../../src/store/types.js";
import { collidingIdPairs } from "./colliding-ids.js";

let dir: string;
let file: string;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "acs-migrations-"));
  file = path.join(dir, "events.db");
});
afterEach(async () => {
  rmSync(dir, { recursive: true, force: true });
});

function applied(db: Database.Database) {
  return db.prepare("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").all() as {
    version: number;
    name: string;
    applied_at: string;
  }[];
}

const tables = (db: Database.Database) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index', 'trigger') ORDER BY name").all() as { name: string }[]).map(
    (r) => r.name,
  );

/** Every schema object with its SQL, for "nothing changed" comparisons. */
const schema = (db: Database.Database) => db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").all();

describe("migrations", () => {
  it("numbers the migrations 1, 2, 3, ... and knows the latest", async () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(LATEST_SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  it("brings a fresh database to the latest version", async () => {
    await openSqliteStore({ file }).close();
    const db = new Database(file, { readonly: true });
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    expect(applied(db).map((m) => [m.version, m.name])).toEqual(MIGRATIONS.map((m) => [m.version, m.name]));
    expect(tables(db)).toEqual(
      expect.arrayContaining([
        "conversations",
        "documents",
        "event_ids",
        "events",
        "events_by_kind",
        "events_by_kind_source",
        "events_by_source",
        "events_by_time",
        "message_fts",
        "message_texts",
        "names",
        "schema_migrations",
      ]),
    );
    // Version 2 replaced these (see migrations.ts).
    expect(tables(db)).not.toContain("events_by_event_id");
    expect(tables(db)).not.toContain("message_texts_to_fts");
    db.close();
  });

  it("reopening a current database changes nothing", async () => {
    await openSqliteStore({ file }).close();
    const db1 = new Database(file);
    const before = { applied: applied(db1), schema: tables(db1) };
    expect(migrate(db1)).toEqual({ from: LATEST_SCHEMA_VERSION, to: LATEST_SCHEMA_VERSION });
    db1.close();
    await openSqliteStore({ file }).close();
    const db2 = new Database(file, { readonly: true });
    expect({ applied: applied(db2), schema: tables(db2) }).toEqual(before);
    db2.close();
  });

  it("refuses a database written by a newer schema, before writing anything", async () => {
    await openSqliteStore({ file }).close();
    const db = new Database(file);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', '2099-01-01T00:00:00Z')").run(
      LATEST_SCHEMA_VERSION + 1,
    );
    db.pragma("journal_mode = DELETE");
    db.close();
    const bytes = readFileSync(file);

    expect(() => openSqliteStore({ file })).toThrow(SchemaTooNewError);
    expect(() => openSqliteStore({ file })).toThrow(
      new RegExp(`schema version ${LATEST_SCHEMA_VERSION + 1} is newer than this server supports \\(${LATEST_SCHEMA_VERSION}\\)`),
    );
    expect(readFileSync(file).equals(bytes)).toBe(true);

    const again = new Database(file);
    expect(() => migrate(again)).toThrow(SchemaTooNewError);
    expect(schemaVersion(again)).toBe(LATEST_SCHEMA_VERSION + 1);
    again.close();
  });

  it("applies pending steps in order, each in its own transaction, and only once", async () => {
    const db = new Database(file);
    const steps: Migration[] = [
      { version: 1, name: "a", up: "CREATE TABLE IF NOT EXISTS a (x INTEGER)" },
      { version: 2, name: "b", up: "CREATE TABLE IF NOT EXISTS b (y INTEGER); INSERT INTO a VALUES (2)" },
    ];
    expect(migrate(db, steps.slice(0, 1))).toEqual({ from: 0, to: 1 });
    expect(migrate(db, steps)).toEqual({ from: 1, to: 2 });
    expect(migrate(db, steps)).toEqual({ from: 2, to: 2 });
    expect(db.prepare("SELECT count(*) AS n FROM a").get()).toEqual({ n: 1 });
    expect(applied(db).map((m) => m.name)).toEqual(["a", "b"]);

    // A failing step rolls back entirely and is not recorded; the steps before it stay applied.
    const failing: Migration[] = [
      ...steps,
      { version: 3, name: "c", up: "CREATE TABLE c (z INTEGER); INSERT INTO nowhere VALUES (1)" },
    ];
    expect(() => migrate(db, failing)).toThrow(/nowhere/);
    expect(schemaVersion(db)).toBe(2);
    expect(tables(db)).not.toContain("c");
    db.close();
  });

  it("re-applying a step over a database it already brought up is harmless (idempotent steps)", async () => {
    for (const step of MIGRATIONS) {
      const db = new Database(path.join(dir, `step-${step.version}.db`));
      migrate(db, MIGRATIONS.slice(0, step.version));
      db.prepare("INSERT INTO conversations (id, status, created_at, updated_at) VALUES ('c', 'RUNNING', 'now', 'now')").run();
      const before = { schema: schema(db), conversations: db.prepare("SELECT * FROM conversations").all() };
      db.transaction(() => applyStep(db, step))();
      expect({ schema: schema(db), conversations: db.prepare("SELECT * FROM conversations").all() }, step.name).toEqual(before);
      expect(schemaVersion(db)).toBe(step.version);
      db.close();
    }
  });

  it("does not enforce foreign keys while steps run, and fails a step that leaves a dangling reference", async () => {
    const db = new Database(file);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    const steps: Migration[] = [
      { version: 1, name: "parent and child", up: "CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE k (p INTEGER REFERENCES p (id))" },
      // A rebuild: the parent is dropped while the child has rows, then recreated with the row.
      {
        version: 2,
        name: "rebuild",
        up: (d) => d.exec("INSERT INTO p VALUES (1); INSERT INTO k VALUES (1); DROP TABLE p; CREATE TABLE p (id INTEGER PRIMARY KEY); INSERT INTO p VALUES (1)"),
      },
      { version: 3, name: "dangling", up: "INSERT INTO k VALUES (7)" },
    ];
    expect(migrate(db, steps.slice(0, 2))).toEqual({ from: 0, to: 2 });
    expect(() => migrate(db, steps)).toThrow(/dangling leaves 1 row\(s\) of k without their p/);
    expect(schemaVersion(db)).toBe(2);
    expect(db.prepare("SELECT p FROM k").all()).toEqual([{ p: 1 }]);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1); // enforced again afterwards
    db.close();
  });

  it("rejects a migration list with gaps", async () => {
    const db = new Database(":memory:");
    expect(() => migrate(db, [{ version: 2, name: "x", up: "" }])).toThrow(/expected 1/);
    db.close();
  });
});

// ---------------------------------------------------------------------------------------------
// Version 1 -> 2 on a database with data, written the way the version-1 store wrote it.
// ---------------------------------------------------------------------------------------------

const CONV = "4c0d5e8a-1f2b-4c3d-8e9f-0a1b2c3d4e5f";
const OTHER = "9e8d7c6b-5a49-4837-a261-5f4e3d2c1b0a";

/** Version 1's 48-bit id hash (sqlite.ts at version 1): its high 32 bits are version 2's hash. */
function v1IdHash(id: string): number {
  let a = 0x811c9dc5;
  let b = 0x5bd1e995;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  a ^= a >>> 16;
  return (a >>> 0) * 0x10000 + (b >>> 16);
}

/** What version 1's createConversation wrote: the rows, with the trigger feeding message_fts. */
function writeV1(db: Database.Database, pk: number, id: string, events: readonly EventToStore[]): void {
  db.prepare("INSERT INTO conversations (pk, id, status, created_at, updated_at, event_count, next_seq) VALUES (?, ?, 'RUNNING', 'then', 'then', ?, ?)").run(
    pk,
    id,
    events.length,
    events.length + 1,
  );
  const insertEvent = db.prepare(`INSERT INTO events (key, conversation, seq, ts, event_id, id_hash, kind, source, json)
    VALUES ((:conv << 32) | :seq, :conv, :seq, :ts, :id, :idHash, :kind, :source, :json)`);
  const insertText = db.prepare(`INSERT INTO message_texts (key, seq, ts, source, text)
    VALUES ((:conv << 32) | :seq, :seq, :ts, :source, :text)`);
  events.forEach(({ event, json }, i) => {
    const row = {
      conv: pk,
      seq: i + 1,
      ts: eventTimeMicros(event.timestamp)!,
      id: event.id,
      idHash: v1IdHash(event.id),
      kind: event.kind,
      source: event.source ?? DEFAULT_EVENT_SOURCE[event.kind]!,
      json,
    };
    insertEvent.run(row);
    if (event.kind === "MessageEvent") insertText.run({ ...row, text: messageSearchText(event).toLowerCase() });
  });
}

/** A conversation's events with fresh ids and timestamps (a few out of order), messages with distinct words. */
function conversationEvents(seed: number, count: number): EventToStore[] {
  const templates = exampleEvents({ seed });
  return Array.from({ length: count }, (_, i) => {
    const base = templates[i % templates.length]!;
    let event = { ...base, id: `${seed}-${i}`, timestamp: new Date(Date.UTC(2026, 1, 5, 11) + ((i * 7) % count) * 1000).toISOString().replace("Z", "") } as Event;
    if (event.kind === "MessageEvent") {
      const m = event as MessageEvent;
      event = { ...m, llm_message: { ...m.llm_message, content: [{ type: "text", text: `Word${i % 5} Quokka${seed} number ${i}` }] } } as Event;
    }
    return { event, json: JSON.stringify(event) };
  });
}

/** Everything a store answers about a conversation, paging through each query. */
async function answers(store: SqliteEventStore, id: string, events: readonly EventToStore[]) {
  const queries: Omit<SearchQuery, "limit">[] = [
    { order: "asc" },
    { order: "desc" },
    { order: "asc", kind: "ActionEvent" },
    { order: "desc", source: "user" },
    { order: "asc", kind: "MessageEvent", source: "agent" },
    { order: "asc", body: "quokka" },
    { order: "desc", body: "word3" },
    { order: "asc", body: "r 1" },
    { order: "asc", kind: "PauseEvent", body: "quokka" },
  ];
  const pages: string[][] = [];
  for (const q of queries) {
    const ids: string[] = [];
    let after;
    for (;;) {
      const page = await store.search(id, { ...q, limit: 7, after });
      ids.push(...page.items.map((e) => `${e.seq}:${e.id}:${e.json.length}`));
      if (!page.hasMore) break;
      after = page.items[page.items.length - 1];
    }
    pages.push(ids);
  }
  const counts: number[] = [];
  for (const { order: _, ...filters } of queries) counts.push(await store.count(id, filters));
  const positions = [];
  for (const e of events) positions.push(await store.positionOf(id, e.event.id));
  return {
    record: await store.getConversation(id),
    pages,
    counts,
    positions,
    appendOrder: await store.readAfter(id, 0, 1000),
  };
}

describe("version 1 -> 2 (compact events)", () => {
  it("keeps every answer of a version-1 database, which then takes appends like a new one", async () => {
    // Two of the ids collide in version 2's hash: the second becomes a recorded collision.
    const [[x, y]] = collidingIdPairs(1) as [[string, string]];
    const a = conversationEvents(1, 130).map((e, i) => (i === 3 || i === 50 ? { ...e, event: { ...e.event, id: i === 3 ? x : y } } : e));
    const b = conversationEvents(2, 60);
    // The same conversations written by the current store (the reference answers)...
    const fresh = openSqliteStore({ file: path.join(dir, "fresh.db") });
    await fresh.createConversation({ id: CONV, status: "RUNNING" }, a);
    await fresh.createConversation({ id: OTHER, status: "RUNNING" }, b);
    // ... and as version 1 wrote them.
    const v1 = new Database(file);
    migrate(v1, MIGRATIONS.slice(0, 1));
    writeV1(v1, 1, CONV, a);
    writeV1(v1, 2, OTHER, b);
    v1.close();

    const upgraded = openSqliteStore({ file });
    try {
      for (const [id, events] of [[CONV, a], [OTHER, b]] as const) {
        const got = await answers(upgraded, id, events);
        const want = await answers(fresh, id, events);
        expect({ ...got, record: undefined }).toEqual({ ...want, record: undefined });
        expect(got.record).toMatchObject({ id, eventCount: events.length });
        expect(got.pages[5]!.length).toBeGreaterThan(0); // the body search found messages through FTS
      }
      // Duplicates are still found, appends continue the sequence, new kinds and sources get codes.
      await expect(upgraded.appendEvents(CONV, [a[17]!])).rejects.toThrow(DuplicateEventIdError);
      await expect(upgraded.appendEvents(CONV, [a[50]!])).rejects.toThrow(expect.objectContaining({ eventId: y }));
      const more = conversationEvents(3, 56);
      expect((await upgraded.appendEvents(CONV, more))[0]!.seq).toBe(131);
      expect((await upgraded.search(CONV, { order: "asc", limit: 100, body: "quokka3" })).items).toHaveLength(
        more.filter((e) => e.event.kind === "MessageEvent").length,
      );
    } finally {
      await upgraded.close();
      await fresh.close();
    }

    const db = new Database(file, { readonly: true });
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(db.pragma("foreign_key_check")).toEqual([]);
    expect(db.prepare("SELECT conversation, event_id, seq FROM event_id_collisions").all()).toEqual([{ conversation: 1, event_id: y, seq: 51 }]);
    // The same schema as a database created at version 2.
    const created = new Database(path.join(dir, "fresh.db"), { readonly: true });
    expect(schema(db)).toEqual(schema(created));
    created.close();
    db.close();
    // FTS5's own check: the index matches the message texts it was built from.
    const rw = new Database(file);
    expect(() => rw.exec("INSERT INTO message_fts (message_fts) VALUES ('integrity-check')")).not.toThrow();
    rw.close();
  });
});

// ---------------------------------------------------------------------------------------------
// Version 2 -> 3: the event counters, counted from the events a version-2 database holds.
// ---------------------------------------------------------------------------------------------

describe("version 2 -> 3 (event counters)", () => {
  it("counts an existing database's events into the counters, which appends then keep", async () => {
    const a = conversationEvents(1, 130);
    const b = conversationEvents(2, 60);
    // Version 2 wrote the events, names and ids as the current store does; a version-2 file is the
    // current one without version 3's table and record.
    const writer = openSqliteStore({ file });
    await writer.createConversation({ id: CONV, status: "RUNNING" }, a);
    await writer.createConversation({ id: OTHER, status: "RUNNING" }, b);
    await writer.close();
    const v2 = new Database(file);
    v2.exec("DROP TABLE event_counts; DELETE FROM schema_migrations WHERE version >= 3");
    expect(schemaVersion(v2)).toBe(2);
    v2.close();

    const upgraded = openSqliteStore({ file });
    const byHand = (events: readonly EventToStore[], kind?: string, source?: string) =>
      events.filter((e) => (kind === undefined || e.event.kind === kind) && (source === undefined || e.event.source === source)).length;
    expect(byHand(a, "MessageEvent", "user") * byHand(a, "ActionEvent", "agent")).toBeGreaterThan(0);
    try {
      for (const [id, events] of [[CONV, a], [OTHER, b]] as const) {
        for (const kind of [undefined, "ActionEvent", "MessageEvent", "NoSuchEvent"]) {
          for (const source of [undefined, "user", "agent"]) {
            expect(await upgraded.count(id, { kind, source } as SearchFilters), JSON.stringify({ id, kind, source })).toBe(byHand(events, kind, source));
          }
        }
      }
      const more = conversationEvents(3, 56);
      await upgraded.appendEvents(CONV, more);
      expect(await upgraded.count(CONV, { kind: "MessageEvent" })).toBe(byHand([...a, ...more], "MessageEvent"));
      expect(await upgraded.count(CONV, { source: "agent" })).toBe(byHand([...a, ...more], undefined, "agent"));
    } finally {
      await upgraded.close();
    }
    const db = new Database(file, { readonly: true });
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    expect(db.pragma("foreign_key_check")).toEqual([]);
    db.close();
  });
});

describe("version 3 -> 4 (ordered body search)", () => {
  it("marks the conversations in time order, and indexes texts so that 1–2 characters are found, at a text's end too", async () => {
    const unordered = conversationEvents(1, 130);
    const inOrder = conversationEvents(2, 60).map(({ event }, i) => {
      const e = { ...event, timestamp: new Date(Date.UTC(2026, 1, 5, 11) + i * 1000).toISOString().replace("Z", "") } as Event;
      return { event: e, json: JSON.stringify(e) };
    });
    const writer = openSqliteStore({ file });
    await writer.createConversation({ id: CONV, status: "RUNNING" }, unordered);
    await writer.createConversation({ id: OTHER, status: "RUNNING" }, inOrder);
    await writer.close();
    // A version-3 file: FTS with the texts as its external content, no vocabulary, no order columns.
    const v3 = new Database(file);
    v3.exec(`
      DROP TABLE message_fts_terms;
      DROP TABLE message_fts;
      CREATE VIRTUAL TABLE message_fts USING fts5 (text, content = 'message_texts', content_rowid = 'key', tokenize = 'trigram');
      INSERT INTO message_fts (message_fts) VALUES ('rebuild');
      ALTER TABLE conversations DROP COLUMN ts_ordered;
      ALTER TABLE conversations DROP COLUMN last_ts;
      DELETE FROM schema_migrations WHERE version >= 4;
    `);
    expect(schemaVersion(v3)).toBe(3);
    v3.close();

    const upgraded = openSqliteStore({ file });
    const orderOf = () => {
      const db = new Database(file, { readonly: true });
      try {
        return Object.fromEntries((db.prepare("SELECT id, ts_ordered AS o FROM conversations").all() as { id: string; o: number }[]).map((r) => [r.id, r.o]));
      } finally {
        db.close();
      }
    };
    const texts = (events: readonly EventToStore[]) => events.filter((e) => e.event.kind === "MessageEvent").map((e) => ({ id: e.event.id, text: messageSearchText(e.event as MessageEvent).toLowerCase() }));
    try {
      expect(orderOf()).toEqual({ [CONV]: 0, [OTHER]: 1 });
      // Texts end with their number ("… number 13"): a body of its last digits is at a text's end.
      for (const [id, events] of [[CONV, unordered], [OTHER, inOrder]] as const) {
        const last = texts(events).at(-1)!.text;
        for (const body of [last.slice(-2), last.slice(-1), "r "]) {
          const expected = texts(events).filter((t) => t.text.includes(body)).map((t) => t.id);
          expect(expected.length, body).toBeGreaterThan(0);
          const page = await upgraded.search(id, { order: "asc", limit: 100, body });
          expect(new Set(page.items.map((e) => e.id)), `${id} ${body}`).toEqual(new Set(expected));
          expect(await upgraded.count(id, { body })).toBe(expected.length);
        }
      }
      // Appends keep the mark: later times keep it, an earlier one clears it for good.
      const later = conversationEvents(3, 1).map(({ event }) => ({ ...event, timestamp: "2026-02-06T00:00:00" }) as Event);
      await upgraded.appendEvents(OTHER, later.map((event) => ({ event, json: JSON.stringify(event) })));
      expect(orderOf()[OTHER]).toBe(1);
      const earlier = conversationEvents(4, 1).map(({ event }) => ({ ...event, timestamp: "2026-02-05T00:00:00" }) as Event);
      await upgraded.appendEvents(OTHER, earlier.map((event) => ({ event, json: JSON.stringify(event) })));
      expect(orderOf()[OTHER]).toBe(0);
    } finally {
      await upgraded.close();
    }
  });
});

describe("version 4 -> 5 (conversation listing)", () => {
  it("adds the title and tags (null) and the listing's indexes to a database with conversations", async () => {
    const writer = openSqliteStore({ file });
    await writer.createConversation({ id: CONV, status: "RUNNING" }, conversationEvents(1, 5));
    await writer.createConversation({ id: OTHER, status: "STOPPED" }, []);
    await writer.close();
    const v4 = new Database(file);
    v4.exec(`
      DROP INDEX conversations_by_created;
      DROP INDEX conversations_by_updated;
      ALTER TABLE conversations DROP COLUMN title;
      ALTER TABLE conversations DROP COLUMN tags;
      DELETE FROM schema_migrations WHERE version >= 5;
    `);
    expect(schemaVersion(v4)).toBe(4);
    v4.close();

    const upgraded = openSqliteStore({ file });
    try {
      const listed = await upgraded.listConversations({ by: "createdAt", order: "asc", limit: 10 });
      expect(listed.map((r) => [r.id, r.eventCount, r.title, r.tags])).toEqual([
        [CONV, 5, null, null],
        [OTHER, 0, null, null],
      ]);
      expect(await upgraded.updateConversation(OTHER, { title: "kept", tags: { a1: "b" } })).toMatchObject({ title: "kept", tags: { a1: "b" } });
    } finally {
      await upgraded.close();
    }
    const db = new Database(file, { readonly: true });
    try {
      expect(schemaVersion(db)).toBe(5);
      const plan = db.prepare("EXPLAIN QUERY PLAN SELECT id FROM conversations INDEXED BY conversations_by_updated WHERE (updated_at, id) <= ('9', '9') ORDER BY updated_at DESC, id DESC LIMIT 3").all() as { detail: string }[];
      expect(plan.map((p) => p.detail).join(" ")).toMatch(/conversations_by_updated/);
    } finally {
      db.close();
    }
  });
});
