/**
 * What the PostgreSQL store guarantees beyond the shared contract when it writes: concurrent opens
 * migrate once, two instances appending to one conversation at once get one total order from the
 * database, ids are checked under the conversation's lock, a replay goes by COPY, and an outage (a
 * statement past its timeout, connections terminated) is a StoreUnavailableError that passes.
 * Searches and counts: postgres-search.test.ts.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { migratePostgres, openPostgresStore, PG_MIGRATIONS, type PostgresEventStore } from "../../src/store/postgres/index.js";
import { sameEvent } from "../../src/store/postgres/store.js";
import { prepareEvent } from "../../src/store/prepare.js";
import { ConversationNotFoundError, DuplicateEventIdError, StoreUnavailableError, type EventToStore } from "../../src/store/types.js";
import { adminQuery, schemaName } from "../support/postgres.js";
import { CONV, OTHER, events, message, toStore, iso, T0 } from "./contract/fixtures.js";
import { describeStreamBatch } from "./stream-batch.js";
import { lockConversation, holdConversation, waitingOnLock, spyQueries, planOf, useScratchStores } from "./postgres-support.js";

const scratch = useScratchStores();

describe("PostgresEventStore", () => {
  it("migrates once when several instances open one schema at once", async () => {
    const schema = schemaName();
    const stores = await Promise.all(Array.from({ length: 4 }, () => scratch.open(schema)));
    const { rows } = await stores[0]!.pool.query<{ version: number }>("select version from schema_migrations");
    expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
  });

  it("applies a migration that runs longer than the pool's statement timeout (an index built over a large table), and another instance waits for it", async () => {
    const schema = schemaName();
    const pools = [0, 1].map(() => new pg.Pool({ connectionString: scratch.db.url, max: 1, statement_timeout: 200, options: `-c search_path=${schema},public` }));
    try {
      const slow = { version: 99, description: "slow", sql: "select pg_sleep(0.6)" };
      const applied = await Promise.all(pools.map((pool) => migratePostgres(pool, schema, [...PG_MIGRATIONS, slow])));
      expect(applied.map((versions) => versions.length).sort()).toEqual([0, PG_MIGRATIONS.length + 1]);
      // The connection goes back to the pool with the timeout: the store's statements keep it.
      await expect(pools[0]!.query("select pg_sleep(0.6)")).rejects.toThrow(/statement timeout/);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it("migration 3 finds which stored conversations' timestamps never go back, and their latest; migration 4 puts id, kind and source in the C collation; migration 5 bounds the trigram index's pending list; 6-11 apply over stored rows (10 moves the texts to message_texts)", async () => {
    const schema = schemaName();
    const pool = new pg.Pool({ connectionString: scratch.db.url, max: 1, options: `-c search_path=${schema},public` });
    try {
      await migratePostgres(pool, schema, PG_MIGRATIONS.slice(0, 2));
      await pool.query(`insert into conversations (id, status, created_at, updated_at, next_seq) values ('ordered', 'IDLE', '', '', 4), ('back', 'IDLE', '', '', 4), ('empty', 'IDLE', '', '', 1)`);
      const rows = [["ordered", 1, 10], ["ordered", 2, 10], ["ordered", 3, 30], ["back", 1, 10], ["back", 2, 30], ["back", 3, 20]] as const;
      for (const [id, seq, ts] of rows) {
        await pool.query(`insert into events (conv, seq, ts, id, kind, source, body, json) select pk, $2::bigint, $3::bigint, $4, 'MessageEvent', 'user', 'text ' || $1 || ' ' || $4, '{}' from conversations where id = $1`, [id, seq, ts, String(seq)]);
      }
      expect(await migratePostgres(pool, schema, PG_MIGRATIONS.slice(0, 5))).toEqual([3, 4, 5]);
      // Migration 4: id, kind and source compare bytes (the C collation); the rows and their indexes stay.
      const { rows: collations } = await pool.query("select column_name, collation_name from information_schema.columns where table_schema = $1 and table_name = 'events' and collation_name is not null order by column_name", [schema]);
      expect(collations).toEqual([
        { column_name: "id", collation_name: "C" },
        { column_name: "kind", collation_name: "C" },
        { column_name: "source", collation_name: "C" },
      ]);
      expect((await pool.query("select seq::int from events e join conversations c on c.pk = e.conv where c.id = 'back' and e.id = '2'")).rows).toEqual([{ seq: 2 }]);
      await expect(pool.query("insert into events (conv, seq, ts, id, kind, source, json) select pk, 9, 0, '2', 'MessageEvent', 'user', '{}' from conversations where id = 'back'")).rejects.toThrow(/events_conv_id_key/);
      // Migration 5: a body search reads at most 128 kB of the trigram index's pending list.
      const { rows: options } = await pool.query("select reloptions from pg_class where relname = 'events_body' and relnamespace = $1::regnamespace", [schema]);
      expect(options).toEqual([{ reloptions: ["gin_pending_list_limit=128"] }]);
      const { rows: after } = await pool.query("select id, ts_ordered, last_ts::int from conversations order by id");
      expect(after).toEqual([
        { id: "back", ts_ordered: false, last_ts: 30 },
        { id: "empty", ts_ordered: true, last_ts: null },
        { id: "ordered", ts_ordered: true, last_ts: 30 },
      ]);
      // Migration 6: the unique (conv, id) btree gives way to a hash index on the id's hash seeded by
      // the conversation; the stored rows are found by id through it (the store checks uniqueness).
      expect(await migratePostgres(pool, schema, PG_MIGRATIONS.slice(0, 6))).toEqual([6]);
      const { rows: indexes } = await pool.query("select indexname, indexdef from pg_indexes where schemaname = $1 and tablename = 'events' and indexname like 'events_conv_id%'", [schema]);
      expect(indexes).toEqual([{ indexname: "events_conv_id_hash", indexdef: expect.stringMatching(/USING hash \(hashtextextended\(id, conv\)\)/) }]);
      const byId = `select e.seq::int from conversations c cross join lateral (select seq from events e where ${sameEvent("c.pk", "$2::text")} limit 1) e where c.id = $1`;
      expect((await pool.query(byId, ["back", "2"])).rows).toEqual([{ seq: 2 }]);
      expect((await pool.query(byId, ["ordered", "3"])).rows).toEqual([{ seq: 3 }]);
      expect((await pool.query(byId, ["ordered", "4"])).rows).toEqual([]);
      // Its plan probes the index (a table of 6 rows is scanned whole unless that is ruled out).
      await pool.query("set enable_seqscan = off");
      const plan = await planOf(pool, byId, ["back", "2"]);
      await pool.query("reset enable_seqscan");
      expect(plan).toMatch(/Index Scan using events_conv_id_hash on events e\n.*Index Cond: \(hashtextextended\(id, conv\) = /);
      // Migrations 7-10 over the same rows; 9: one index on the hash of (kind, source) instead of one
      // on each; 10: the texts move to message_texts, with the trigram and time indexes.
      await pool.query("insert into events (conv, seq, ts, id, kind, source, json) select pk, 4, 40, '4', 'ActionEvent', 'agent', '{}' from conversations where id = 'ordered'");
      expect(await migratePostgres(pool, schema, PG_MIGRATIONS.slice(0, 10))).toEqual([7, 8, 9, 10]);
      const indexesOf = async (table: string) =>
        (await pool.query<{ indexname: string }>("select indexname from pg_indexes where schemaname = $1 and tablename = $2 order by indexname", [schema, table])).rows.map((r) => r.indexname);
      expect(await indexesOf("events")).toEqual(["events_conv_id_hash", "events_kind_source_time", "events_pkey", "events_time"]);
      expect(await indexesOf("message_texts")).toEqual(["message_texts_body", "message_texts_time"]);
      const { rows: columns } = await pool.query("select column_name from information_schema.columns where table_schema = $1 and table_name = 'events' order by ordinal_position", [schema]);
      expect(columns.map((r: { column_name: string }) => r.column_name)).toEqual(["conv", "seq", "ts", "id", "kind", "source", "json"]);
      const { rows: texts } = await pool.query("select c.id as conv, m.seq::int, m.ts::int, m.source, m.body from message_texts m join conversations c on c.pk = m.conv order by c.id, m.seq");
      expect(texts).toEqual(rows.map(([id, seq, ts]) => ({ conv: id, seq, ts, source: "user", body: `text ${id} ${seq}` })).sort((x, y) => x.conv.localeCompare(y.conv) || x.seq - y.seq));
      expect((await pool.query("select seq::int from message_texts where body like '%back 3%'")).rows).toEqual([{ seq: 3 }]);
      const byPair = "select e.id from events e join conversations c on c.pk = e.conv where c.id = 'back' and hashtext(e.kind || ' ' || e.source) = hashtext('MessageEvent user') order by e.ts, e.seq";
      expect((await pool.query(byPair)).rows.map((r: { id: string }) => r.id)).toEqual(["1", "3", "2"]);
      // Migration 11: title and tags (null for the stored conversations) and the listing's indexes.
      expect(await migratePostgres(pool, schema, PG_MIGRATIONS.slice(0, 11))).toEqual([11]);
      expect((await pool.query("select id, title, tags from conversations order by id")).rows).toEqual(["back", "empty", "ordered"].map((id) => ({ id, title: null, tags: null })));
      expect(await indexesOf("conversations")).toEqual(["conversations_created", "conversations_id_key", "conversations_pkey", "conversations_staged", "conversations_updated"]);
    } finally {
      await pool.end();
    }
  });

  it("gives one total order when two instances append to one conversation at once", async () => {
    const schema = schemaName();
    const [a, b] = await Promise.all([scratch.open(schema), scratch.open(schema)]);
    await a.createConversation({ id: CONV, status: "RUNNING" }, []);
    // Same timestamps from both writers: only the database's seq orders them.
    const batches = (seed: number) => Array.from({ length: 25 }, (_, i) => events(1 + (i % 3), { seed: seed + i, start: Date.UTC(2026, 1, 5) }));
    const fromA = batches(100);
    const fromB = batches(200);
    const results = await Promise.all([...fromA.map((batch) => a.appendEvents(CONV, batch)), ...fromB.map((batch) => b.appendEvents(CONV, batch))]);
    const seqs = results.flat().map((e) => e.seq).sort((x, y) => x - y);
    const total = [...fromA, ...fromB].flat().length;
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1)); // no gap, none twice
    for (const stored of results) expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => stored[0]!.seq + i)); // each batch contiguous
    const bySeq = (await a.readAfter(CONV, 0, 1000)).map((e) => e.id);
    expect((await b.readAfter(CONV, 0, 1000)).map((e) => e.id)).toEqual(bySeq);
    // Every instance pages the same order: (ts, seq).
    const pageA = (await a.search(CONV, { order: "asc", limit: 100 })).items.map((e) => e.id);
    expect((await b.search(CONV, { order: "asc", limit: 100 })).items.map((e) => e.id)).toEqual(pageA);
    expect(await b.count(CONV, {})).toBe(total);
  });

  it("moves an event stamped at recording that another instance's append overtook to the latest timestamp, so that search order is append order", async () => {
    const schema = schemaName();
    const [a, b] = await Promise.all([scratch.open(schema), scratch.open(schema)]);
    await a.createConversation({ id: CONV, status: "RUNNING" }, []);
    // A stamped its message at T0 + 1 ms, B at T0 + 2 ms, but B's append reached the database first.
    await b.appendEvents(CONV, [{ ...toStore(message("from-b", iso(T0 + 2_000), "later stamp")), stampedAtRecording: true }]);
    const [fromA] = await a.appendEvents(CONV, [{ ...toStore(message("from-a", iso(T0 + 1_000), "earlier stamp")), stampedAtRecording: true }]);
    expect(fromA!.ts).toBe(T0 + 2_000);
    expect(JSON.parse(fromA!.json).timestamp).toBe(iso(T0 + 2_000));
    const page = await b.search(CONV, { order: "asc", limit: 10 });
    expect(page.items.map((e) => e.id)).toEqual(["from-b", "from-a"]);
    expect(page.items[1]!.json).toBe(fromA!.json);
    // An event with its own time (a recording) keeps it: search orders it by it.
    await a.appendEvents(CONV, [toStore(message("recorded", iso(T0 + 500), "its own time"))]);
    expect((await a.search(CONV, { order: "asc", limit: 10 })).items.map((e) => e.id)).toEqual(["recorded", "from-b", "from-a"]);
    // Stamped or not, an id already stored is named, and a missing conversation is one.
    const again = [{ ...toStore(message("fresh", iso(T0), "x")), stampedAtRecording: true }, { ...toStore(message("from-a", iso(T0), "x")), stampedAtRecording: true }];
    await expect(a.appendEvents(CONV, again)).rejects.toThrow(expect.objectContaining({ index: 1, eventId: "from-a" }));
    await expect(a.appendEvents("missing", again.slice(0, 1))).rejects.toThrow(ConversationNotFoundError);
    expect(await a.count(CONV, {})).toBe(3);
  });

  it("appends events stamped at recording in one statement, holding the conversation's row for no client round trip, and moves them as the transaction did", async () => {
    const schema = schemaName();
    const [a, b] = await Promise.all([scratch.open(schema), scratch.open(schema)]);
    await a.createConversation({ id: CONV, status: "RUNNING" }, []);
    await b.appendEvents(CONV, [{ ...toStore(message("late", iso(T0 + 5_000), "stamped later")), stampedAtRecording: true }]);
    // A transaction (begin … commit) holds the row lock across its round trips: none may run.
    const statements: string[] = [];
    spyQueries(a, (text) => statements.push(text));
    const stamped = (id: string, micros: number, text: string) => ({ ...toStore(message(id, iso(micros), text)), stampedAtRecording: true });
    const stored = await a.appendEvents(CONV, [
      stamped("s1", T0 + 1_000, 'é "quoted" 😀'), // moved to T0 + 5 ms
      toStore(message("own", iso(T0 + 2_000), "its own time")), // kept: goes back in time
      stamped("s2", T0 + 7_000, "after"), // kept: later than all
      stamped("s3", T0 + 6_000, "moved to s2's"), // moved to T0 + 7 ms
    ]);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain("for update");
    expect(stored.map((e) => e.ts)).toEqual([T0 + 5_000, T0 + 2_000, T0 + 7_000, T0 + 7_000]);
    expect(stored.map((e) => JSON.parse(e.json).timestamp)).toEqual([iso(T0 + 5_000), iso(T0 + 2_000), iso(T0 + 7_000), iso(T0 + 7_000)]);
    expect(JSON.parse(stored[0]!.json)).toEqual({ ...message("s1", iso(T0 + 5_000), 'é "quoted" 😀') });
    const page = await b.search(CONV, { order: "asc", limit: 10 });
    expect(page.items.map((e) => e.id)).toEqual(["own", "late", "s1", "s2", "s3"]);
    expect(page.items.map((e) => e.json)).toEqual([stored[1]!.json, expect.any(String), stored[0]!.json, stored[2]!.json, stored[3]!.json]);
    // The conversation's timestamps went back ("own"): time-range counts count rows, still exactly.
    expect(await b.count(CONV, { timestampGte: T0 + 2_000, timestampLt: T0 + 7_000 })).toBe(3);
    expect(await b.count(CONV, { timestampGte: T0 + 7_000 })).toBe(2);
    // The messages' texts (message_texts) carry the moved timestamps too: body pages (walked and
    // indexed) order by them, and a body count in a time range counts by them.
    expect((await b.search(CONV, { order: "asc", limit: 10, body: "e" })).items.map((e) => e.id)).toEqual(["own", "late", "s1", "s2", "s3"]);
    expect((await b.search(CONV, { order: "desc", limit: 10, body: "" })).items.map((e) => e.id)).toEqual(["s3", "s2", "s1", "late", "own"]);
    expect((await b.search(CONV, { order: "asc", limit: 10, body: "MOVED", timestampGte: T0 + 7_000 })).items).toEqual([{ id: "s3", json: stored[3]!.json, ts: T0 + 7_000, seq: 5 }]);
    expect(await b.count(CONV, { body: "s", timestampGte: T0 + 7_000 })).toBe(1);
  });

  it("discards a staged import's events and their messages' texts (message_texts), leaving the other conversations' rows", async () => {
    const store = await scratch.open(schemaName());
    await store.createConversation({ id: OTHER, status: "STOPPED" }, events(50, { seed: 9 }));
    const raw = async () => (await store.pool.query<{ events: number; texts: number }>("select (select count(*)::int from events) as events, (select count(*)::int from message_texts) as texts")).rows[0]!;
    const before = await raw();
    expect(before.texts).toBeGreaterThan(0);
    const handle = await store.beginImport({ id: CONV, status: "STOPPED" });
    await store.importRows(handle, events(2_000).map((entry, index) => prepareEvent(entry, index, true)));
    expect((await raw()).texts).toBeGreaterThan(before.texts);
    while (!(await store.discardImport(handle, 300)));
    expect(await raw()).toEqual(before);
  });

  it("sends a batch's texts as one binary parameter, not escaped text[] literals, and stores their exact bytes", async () => {
    const store = await scratch.open(schemaName());
    const sent: unknown[][] = [];
    spyQueries(store, (text, values) => {
      if (text.includes("insert into events")) sent.push(values);
    });
    // Quotes, backslashes, braces, commas, NULL-like words, tabs, newlines, 2-, 3- and 4-byte UTF-8.
    const texts = ['say "hi" {a,b}', "back\\slash \\\" NULL", "tab\tnew\nline é € 😀", "NULL", ""];
    const batch = texts.map((t, i) => toStore(message(`m${i}`, iso(T0 + i), t)));
    batch[4] = { event: batch[4]!.event, json: JSON.stringify(batch[4]!.event, null, "\t") }; // stored as sent, whitespace too
    await store.createConversation({ id: CONV, status: "RUNNING" }, batch.slice(0, 3)); // transaction path
    await store.appendEvents(CONV, batch.slice(3)); // one-statement path
    expect(sent).toHaveLength(2);
    for (const values of sent) {
      expect(values.some((v) => Buffer.isBuffer(v))).toBe(true);
      // No parameter holds the JSON texts as an array of strings.
      expect(values.some((v) => Array.isArray(v) && v.some((x) => typeof x === "string" && x.startsWith("{")))).toBe(false);
    }
    const page = await store.search(CONV, { order: "asc", limit: 10 });
    expect(page.items.map((e) => e.json)).toEqual(batch.map((e) => e.json));
    for (const [i, t] of texts.entries()) if (t.length >= 3) expect((await store.search(CONV, { order: "asc", limit: 10, body: t.toUpperCase() })).items.map((e) => e.id)).toContain(`m${i}`);
  });

  it("fails a statement past its timeout with StoreUnavailableError, then serves again", async () => {
    const store = await scratch.open(schemaName(), { statementTimeoutMs: 200 });
    await store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
    // Another session holds the conversation's row: the append waits on it past the timeout.
    const { released } = await holdConversation(scratch.db, store, 1000);
    let lockReleased = false;
    void released.then(() => (lockReleased = true));
    const error = await store.appendEvents(CONV, events(1, { seed: 5 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).detail).toMatch(/statement timeout/);
    // Failed by the timeout while the lock was still held, not after it was released.
    expect(lockReleased).toBe(false);
    await released;
    expect((await store.appendEvents(CONV, events(1, { seed: 6 })))[0]!.seq).toBe(4);
  });

  it("fails an in-flight write with StoreUnavailableError when its connection is terminated (a restart), then recovers", async () => {
    const store = await scratch.open(schemaName());
    await store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
    // The append waits on a row lock held elsewhere (until released), so it is in flight when its backend goes.
    const lock = await lockConversation(scratch.db, store);
    const append = store.appendEvents(CONV, events(1, { seed: 5 })).catch((e: unknown) => e);
    await expect.poll(() => waitingOnLock(scratch.db), { timeout: 10_000, interval: 10 }).toBe(1);
    const killed = await adminQuery("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'acs-server' and datname = $1", [scratch.db.name]);
    expect(killed.length).toBeGreaterThan(0);
    const error = await append;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).detail).toMatch(/unavailable/);
    await lock.release();
    // Nothing of the failed append was stored; the pool reconnects on the next call.
    expect((await store.getConversation(CONV))?.eventCount).toBe(3);
    expect((await store.appendEvents(CONV, events(1, { seed: 6 })))[0]!.seq).toBe(4);
    expect(await store.ping()).toBe(true);
  });

  it("close lets the writes called before it finish, then ends the pool", async () => {
    const schema = schemaName();
    const store = await openPostgresStore({ url: scratch.db.url, schema, maxConnections: 2 });
    await store.createConversation({ id: CONV, status: "RUNNING" }, []);
    const writes = Array.from({ length: 20 }, (_, i) => store.appendEvents(CONV, events(2, { seed: 300 + i })));
    const closed = store.close();
    await expect(store.appendEvents(CONV, events(1, { seed: 999 }))).rejects.toThrow(/closed/);
    const results = await Promise.allSettled(writes);
    await closed;
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    const again = await scratch.open(schema);
    expect(await again.count(CONV, {})).toBe(40);
  });

  it("appends a replay-sized batch (6,000 events) with one binary COPY, its ids looked up under the conversation's lock in one statement on the id-check connection", async () => {
    const store = await scratch.open(schemaName());
    await store.createConversation({ id: CONV, status: "RUNNING" }, []);
    const statements: string[] = [];
    spyQueries(store, (text) => statements.push(text));
    spyQueries(store, (text) => statements.push(`id check: ${text}`), store.idCheckPool);
    const all = events(7_001);
    const stored = await store.appendEvents(CONV, all.slice(0, 6_000));
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 6_000 }, (_, i) => i + 1));
    expect(statements.filter((s) => s.includes("insert into events"))).toHaveLength(0);
    expect(statements.filter((s) => /^copy events .* from stdin with \(format binary\)$/.test(s))).toHaveLength(1);
    // Lock, then one statement that probes the batch's ids (the hash index, one probe an id), on the
    // id-check connection while the COPY runs on the transaction's.
    const lock = statements.findIndex((s) => s.includes("for update"));
    const lookUp = statements.findIndex((s) => s.includes("hashtextextended"));
    expect(statements.filter((s) => s.includes("hashtextextended"))).toHaveLength(1);
    expect(statements[lookUp]).toMatch(/^id check: /);
    expect(lock).toBeGreaterThanOrEqual(0);
    expect(lock < lookUp).toBe(true);
    const page = await store.search(CONV, { order: "asc", limit: 100, after: { ts: stored[2_999]!.ts, seq: stored[2_999]!.seq } });
    expect(page.items.map((e) => e.json)).toEqual(all.slice(3_000, 3_100).map((e) => e.json));
    // A taken id still fails the whole batch, named: a COPY batch's and a small one's.
    await expect(store.appendEvents(CONV, [...all.slice(6_000, 7_000), all[5]!])).rejects.toThrow(expect.objectContaining({ index: 1_000, eventId: all[5]!.event.id }));
    await expect(store.appendEvents(CONV, [all[6_000]!, all[5]!])).rejects.toBeInstanceOf(DuplicateEventIdError);
    expect(await store.count(CONV, {})).toBe(6_000);
    expect((await store.appendEvents(CONV, all.slice(6_000, 7_001))).map((e) => e.seq)).toEqual(Array.from({ length: 1_001 }, (_, i) => 6_001 + i));
  });

  it("refuses an event id stored in the conversation or twice in one batch on every append path, naming the first, and allows it in another conversation (migration 6: no unique index)", async () => {
    const store = await scratch.open(schemaName());
    const all = events(3_200);
    const stored = await store.createConversation({ id: CONV, status: "RUNNING" }, all.slice(0, 10));
    expect(stored.eventCount).toBe(10);
    const stamped = (e: EventToStore) => ({ ...e, stampedAtRecording: true });
    const taken = all[3]!;
    const refused = (index: number, eventId: string) => expect.objectContaining({ constructor: DuplicateEventIdError, index, eventId });
    // Against a stored event: a live append (one statement), a stamped one, a replay's batch (COPY).
    await expect(store.appendEvents(CONV, [all[10]!, all[11]!, taken])).rejects.toThrow(refused(2, taken.event.id));
    await expect(store.appendEvents(CONV, [stamped(all[10]!), stamped(taken)])).rejects.toThrow(refused(1, taken.event.id));
    await expect(store.appendEvents(CONV, [...all.slice(10, 1_510), taken])).rejects.toThrow(refused(1_500, taken.event.id));
    // Twice in the batch itself: the second one is named.
    await expect(store.appendEvents(CONV, [all[10]!, all[11]!, all[10]!])).rejects.toThrow(refused(2, all[10]!.event.id));
    await expect(store.appendEvents(CONV, [...all.slice(10, 1_510), all[700]!])).rejects.toThrow(refused(1_500, all[700]!.event.id));
    await expect(store.createConversation({ id: "dup-in-batch", status: "RUNNING" }, [...all.slice(10, 1_510), all[20]!])).rejects.toThrow(refused(1_500, all[20]!.event.id));
    expect(await store.count(CONV, {})).toBe(10);
    expect(await store.getConversation("dup-in-batch")).toBeUndefined();
    // Nothing was written by the refused appends: the next ones take the next seqs.
    expect((await store.appendEvents(CONV, all.slice(10, 12))).map((e) => e.seq)).toEqual([11, 12]);
    expect((await store.appendEvents(CONV, all.slice(12, 1_512))).map((e) => e.seq)).toEqual(Array.from({ length: 1_500 }, (_, i) => 13 + i));
    // The same ids in another conversation: allowed, each found in its own.
    await store.createConversation({ id: OTHER, status: "RUNNING" }, all.slice(5, 1_505));
    expect((await store.appendEvents(OTHER, [all[0]!, stamped(all[1]!)])).map((e) => e.seq)).toEqual([1_501, 1_502]);
    expect(await store.positionOf(CONV, all[5]!.event.id)).toEqual({ ts: expect.any(Number), seq: 6 });
    expect(await store.positionOf(OTHER, all[5]!.event.id)).toEqual({ ts: expect.any(Number), seq: 1 });
    expect(await store.positionOf(OTHER, all[2_000]!.event.id)).toBeUndefined();
    await expect(store.appendEvents(OTHER, [all[2_000]!, all[6]!])).rejects.toThrow(refused(1, all[6]!.event.id));
    // An id holding a newline (the lookup's ids are sent joined by newlines, else as text[]).
    const odd = toStore(message("line\nbreak", iso(T0), "an odd id"));
    await store.appendEvents(OTHER, [odd]);
    await expect(store.appendEvents(OTHER, [...all.slice(2_000, 3_100), odd])).rejects.toThrow(refused(1_100, "line\nbreak"));
    await expect(store.appendEvents(OTHER, [...all.slice(2_000, 2_005), odd])).rejects.toThrow(refused(5, "line\nbreak"));
  });

  it("probes one bucket of the hash index for an id, not the conversation's range of the primary key, when the conversation comes from the locked row (the live append's check)", async () => {
    // Right after a replay, before any ANALYZE (autovacuum's comes later): what the planner had when
    // it chose the primary key's range (EXPLAIN ANALYZE of the statement at 100k events: 2.6 ms).
    const store = await openPostgresStore({ url: scratch.db.url, schema: schemaName(), maxConnections: 2, analyzeAfterRows: Number.MAX_SAFE_INTEGER });
    scratch.opened.push(store);
    await store.createConversation({ id: CONV, status: "RUNNING" }, events(60_000));
    // The shape of appendInOneStatement's check.
    const check = `with locked as (select pk, next_seq from conversations where id = $1 for update),
      conv as (
        select locked.* from locked
        where locked.next_seq = (select next_seq from conversations where id = $1)
          and not exists (select from unnest($2::text[]) as t(id) cross join lateral (select from events e where ${sameEvent("locked.pk", "t.id")} limit 1) taken)
      )
      select conv.pk is null as taken from locked left join conv on true`;
    const plan = await planOf(store.pool, check, [CONV, ["not-stored"]]);
    expect(plan).toMatch(/events_conv_id_hash/);
    expect(plan).not.toMatch(/events_pkey/);
    expect((await store.pool.query(check, [CONV, ["not-stored", events(1)[0]!.event.id]])).rows).toEqual([{ taken: true }]);
    expect((await store.pool.query(check, [CONV, ["not-stored"]])).rows).toEqual([{ taken: false }]);
  });

  it("sends a live append again as one statement, not a transaction, when another instance's append came in between its snapshot and its lock", async () => {
    const schema = schemaName();
    const [a, b] = await Promise.all([scratch.open(schema), scratch.open(schema)]);
    await a.createConversation({ id: CONV, status: "RUNNING" }, []);
    const statements: string[] = [];
    for (const store of [a, b]) spyQueries(store, (text) => statements.push(text));
    const all = events(4);
    const stamped = (e: EventToStore) => ({ ...e, stampedAtRecording: true });
    for (const [fromA, fromB] of [[[all[0]!], [all[1]!]], [[stamped(all[2]!)], [stamped(all[3]!)]]] as const) {
      const hold = await holdConversation(scratch.db, a, 300);
      const before = statements.length;
      const stored = await Promise.all([a.appendEvents(CONV, fromA), b.appendEvents(CONV, fromB)]);
      await hold.released;
      expect(stored.flat().map((e) => e.seq).sort()).toHaveLength(2);
      const sent = statements.slice(before);
      expect(sent.filter((t) => t === "begin")).toEqual([]); // no transaction
      expect(sent.filter((t) => t.includes("for update"))).toHaveLength(3); // one of the two sent twice
    }
    expect((await a.readAfter(CONV, 0, 10)).map((e) => e.id).sort()).toEqual(all.map((e) => e.event.id).sort());
  });

  it("lets exactly one of two instances append an id to a conversation when both append it at once, the other refused with DuplicateEventIdError", async () => {
    const schema = schemaName();
    const [a, b] = await Promise.all([scratch.open(schema), scratch.open(schema)]);
    await a.createConversation({ id: CONV, status: "RUNNING" }, []);
    const all = events(6_000);
    const stamped = (e: EventToStore) => ({ ...e, stampedAtRecording: true });
    // Each round: another session holds the conversation's row while both appends start, so that
    // both take their snapshot before either writes (then the one that locks second must see the
    // first's events anyway); a live append each, a stamped one each, a replay's batch each.
    const rounds: Array<[EventToStore[], EventToStore[], string]> = [
      [[all[0]!, all[1]!], [all[2]!, all[1]!], all[1]!.event.id],
      [[stamped(all[3]!)], [stamped(all[4]!), stamped(all[3]!)], all[3]!.event.id],
      [all.slice(10, 1_510), [...all.slice(2_000, 3_000), all[1_000]!], all[1_000]!.event.id],
      [[all[5]!], all.slice(3_000, 4_500).map((e, i) => (i === 700 ? all[5]! : e)), all[5]!.event.id],
    ];
    let total = 0;
    for (const [fromA, fromB, shared] of rounds) {
      const hold = await holdConversation(scratch.db, a, 300);
      const settled = await Promise.allSettled([a.appendEvents(CONV, fromA), b.appendEvents(CONV, fromB)]);
      await hold.released;
      expect(settled.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      const loser = settled.find((r) => r.status === "rejected") as PromiseRejectedResult;
      expect(loser.reason).toBeInstanceOf(DuplicateEventIdError);
      expect((loser.reason as DuplicateEventIdError).eventId).toBe(shared);
      const winner = settled.find((r) => r.status === "fulfilled") as PromiseFulfilledResult<unknown[]>;
      total += winner.value.length;
      expect(await b.count(CONV, {})).toBe(total);
    }
    // And without a holder: many appends of one id from both instances at once, one stored.
    const racers = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).appendEvents(CONV, [all[5_000 + i]!, all[5_999]!]));
    const raced = await Promise.allSettled(racers);
    expect(raced.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of raced) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(DuplicateEventIdError);
    const ids = (await a.readAfter(CONV, 0, 10_000)).map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(total + 2);
  });

  it("runs its own ANALYZE after n, 2n, 4n … rows written (doubling), not after every n", async () => {
    const store = await openPostgresStore({ url: scratch.db.url, schema: schemaName(), maxConnections: 2, analyzeAfterRows: 100 });
    scratch.opened.push(store);
    await store.createConversation({ id: CONV, status: "RUNNING" }, []);
    const all = events(4_000);
    for (let i = 0; i < 40; i++) {
      await store.appendEvents(CONV, all.slice(i * 100, (i + 1) * 100));
      await (store as unknown as { analyze: { running?: Promise<void> } }).analyze.running; // one at a time: let each finish
    }
    // At 100, 200, 400, 800, 1,600 and 3,200 rows; after every 100 rows it would be 40.
    expect(store.analyzes).toBe(6);
  });
});

describeStreamBatch("PostgreSQL, COPY as the chunks come", {
  open: async () => {
    // copyMinRows 1,000: a batch's COPY starts with its first chunk (the small batch writes by INSERT).
    const store = await openPostgresStore({ url: scratch.db.url, schema: schemaName(), copyMinRows: 1_000 });
    scratch.opened.push(store);
    return store;
  },
  rawCounts: async (store) => {
    const { schema } = store as PostgresEventStore;
    const [row] = await adminQuery<Record<string, number>>(
      `select (select count(*)::int from "${schema}".conversations) as conversations, (select count(*)::int from "${schema}".events) as events,
         (select count(*)::int from "${schema}".message_texts) as message_texts, (select coalesce(sum(n), 0)::int from "${schema}".event_counts) as counted`,
      [],
      scratch.db.url,
    );
    return row!;
  },
});
