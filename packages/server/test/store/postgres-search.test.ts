/**
 * How the PostgreSQL store searches and counts beyond the shared contract: LIKE's wildcards are plain
 * characters in a body, a body pg_trgm cannot index is walked within a budget, counts come from the
 * counters or two index probes, the planner's statistics are refreshed by the store itself, and
 * each kind of page reads the index it should (checked on its plan).
 */
import type { EventKind } from "@acs-toolkit/schema";
import { describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/store/postgres/index.js";
import type { EventToStore } from "../../src/store/types.js";
import { adminQuery, schemaName } from "../support/postgres.js";
import { CONV, events, message, pages, template, toStore, iso, T0 } from "./contract/fixtures.js";
import { spyQueries, searchWithPlan, useScratchStores } from "./postgres-support.js";

const scratch = useScratchStores();

describe("PostgresEventStore: search and count", () => {
  it("matches %, _ and \\ in a body as themselves", async () => {
    const store = await scratch.open(schemaName());
    const texts = ["100% done", "1000 done", "snake_case", "snakeXcase", "a\\b", "ab"];
    await store.createConversation({ id: CONV, status: "RUNNING" }, texts.map((t, i) => toStore(message(`m${i}`, iso(T0 + i), t))));
    const ids = async (body: string) => (await store.search(CONV, { order: "asc", limit: 10, body })).items.map((e) => e.id);
    expect(await ids("0% d")).toEqual(["m0"]);
    expect(await ids("e_c")).toEqual(["m2"]);
    expect(await ids("a\\b")).toEqual(["m4"]);
    expect(await store.count(CONV, { body: "%" })).toBe(1);
  });

  it("walks at most bodyScanBudget messages for a page of a body pg_trgm cannot index (1–2 characters), then resumes after them", async () => {
    const store = await openPostgresStore({ url: scratch.db.url, schema: schemaName(), maxConnections: 2, bodyScanBudget: 10 });
    scratch.opened.push(store);
    // 30 messages (and 30 other events between them); only the 25th and the 26th hold "Q7".
    const batch = Array.from({ length: 30 }, (_, i) => toStore(message(`m${i}`, iso(T0 + 2 * i), i === 24 || i === 25 ? "see Q7 here" : "nothing")));
    const others = events(30, { start: Date.UTC(2026, 1, 5, 11, 0, 0) + 1 }).filter((e) => e.event.kind !== "MessageEvent");
    await store.createConversation({ id: CONV, status: "RUNNING" }, [...batch, ...others]);
    const first = await store.search(CONV, { order: "asc", limit: 1, body: "q7" });
    // The first 10 messages hold no hit: an empty page that resumes after the 10th message.
    expect(first).toEqual({ items: [], hasMore: true, resumeAfter: { ts: T0 + 18, seq: 10 } });
    const json = await store.searchJson(CONV, { order: "asc", limit: 1, body: "q7" });
    expect({ count: json.count, last: json.last, hasMore: json.hasMore }).toEqual({ count: 0, last: first.resumeAfter, hasMore: true });
    const seen: string[] = [];
    let after = first.resumeAfter;
    for (let pages = 0; after && pages < 10; pages++) {
      const page = await store.search(CONV, { order: "asc", limit: 1, body: "q7", after });
      seen.push(...page.items.map((e) => e.id));
      after = page.hasMore ? (page.resumeAfter ?? page.items[page.items.length - 1]) : undefined;
    }
    expect(seen).toEqual(["m24", "m25"]);
    // Descending, from the end: the hits come within the budget.
    expect((await store.search(CONV, { order: "desc", limit: 5, body: "Q7" })).items.map((e) => e.id)).toEqual(["m25", "m24"]);
    // A body with a run of 3 letters or digits is served by the trigram index: no budget.
    expect((await store.search(CONV, { order: "asc", limit: 5, body: "see q7" })).items.map((e) => e.id)).toEqual(["m24", "m25"]);
    expect(await store.count(CONV, { body: "q7" })).toBe(2);
  });

  it("counts without a filter, by kind and by source from the counters, and time ranges exactly", async () => {
    const store = await scratch.open(schemaName());
    const all = events(300);
    await store.createConversation({ id: CONV, status: "RUNNING" }, all.slice(0, 100));
    await store.appendEvents(CONV, all.slice(100));
    expect((await store.pool.query("select sum(n)::int as n from event_counts")).rows[0].n).toBe(300);
    // The counters answer: rows removed behind the store's back do not change these counts.
    await store.pool.query("delete from events where seq > 250");
    expect(await store.count(CONV, {})).toBe(300);
    const kind = all[1]!.event.kind;
    expect(await store.count(CONV, { kind })).toBe(all.filter((e) => e.event.kind === kind).length);
    expect(await store.count(CONV, { source: "user" })).toBe(all.filter((e) => (e.event as { source?: string }).source === "user").length);
    // A time range counts rows: [T0 + 10 ms, T0 + 20 ms) holds 10 events.
    const start = Date.UTC(2026, 1, 5, 11, 0, 0) * 1000;
    expect(await store.count(CONV, { timestampGte: start + 10_000, timestampLt: start + 20_000 })).toBe(10);
  });

  it("counts a time range from two positions where timestamps never go back, and by rows where they do", async () => {
    const store = await scratch.open(schemaName());
    const all = events(300); // 1 ms apart, from 11:00:00
    await store.createConversation({ id: CONV, status: "RUNNING" }, all.slice(0, 100));
    await store.appendEvents(CONV, all.slice(100, 200)); // one statement
    await store.appendEvents(CONV, all.slice(200, 203)); // one statement, a live append
    const start = Date.UTC(2026, 1, 5, 11, 0, 0) * 1000;
    const range = (from?: number, to?: number) => store.count(CONV, { timestampGte: from === undefined ? undefined : start + from * 1000, timestampLt: to === undefined ? undefined : start + to * 1000 });
    expect([await range(10, 20), await range(0, 203), await range(150), await range(undefined, 50), await range(500, 600), await range(20, 10)]).toEqual([10, 203, 53, 50, 0, 0]);
    // Two index probes, not a scan: rows removed behind the store's back inside the range do not change it.
    await store.pool.query("delete from events where seq between 12 and 15");
    expect(await range(10, 20)).toBe(10);
    // An append whose timestamps go back (before the latest stored): from then on, rows are counted.
    await store.appendEvents(CONV, [{ ...all[203]!, event: { ...all[203]!.event, id: "early", timestamp: iso(start + 10_500) } } as never, ...all.slice(204, 210)]);
    expect((await store.pool.query("select ts_ordered from conversations")).rows[0].ts_ordered).toBe(false);
    expect(await range(10, 20)).toBe(7);
  });

  it("refreshes the planner's statistics after a large write, so that a page walks an index instead of sorting the conversation", async () => {
    const store = await scratch.open(schemaName());
    await store.createConversation({ id: CONV, status: "RUNNING" }, events(25_000));
    // The write started the store's own ANALYZE (autovacuum's would set last_autoanalyze, not last_analyze).
    expect(store.analyzes).toBe(1);
    await (store as unknown as { analyze: { running?: Promise<void> } }).analyze.running;
    const lastAnalyze = async () => (await store.pool.query("select last_analyze from pg_stat_user_tables where schemaname = $1 and relname = 'events'", [store.schema])).rows[0]?.last_analyze ?? null;
    // Its statistics report is read back (polled: a server before PostgreSQL 15 reports through its collector, later).
    await expect.poll(lastAnalyze, { timeout: 10_000, interval: 20 }).not.toBeNull();
    const { page, plan } = await searchWithPlan(store)({ order: "asc", limit: 100, source: "user" });
    expect(page.items).toHaveLength(100);
    // Per (kind, source) pair of the source, its first 101 rows in order on the index; the one Sort
    // merges those (at most pairs × 101 rows), none sorts a pair's whole run.
    expect(plan).toContain("Index Scan using events_kind_source_time");
    expect(plan).not.toContain("Bitmap");
    expect(plan.match(/Sort Key/g)).toHaveLength(1);
  });

  it("answers kind and source pages and counts exactly when two (kind, source) pairs share the index's hash (migration 9)", async () => {
    const store = await scratch.open(schemaName());
    // hashtext('Kind50549 agent') = hashtext('Kind86637 agent') = 1245948536 (found by a search over generated names).
    const [a, b] = ["Kind50549", "Kind86637"] as unknown as EventKind[]; // kinds of no release the schema knows: the store keeps any kind
    const { rows } = await store.pool.query<{ same: boolean }>("select hashtext($1 || ' agent') = hashtext($2 || ' agent') as same", [a, b]);
    expect(rows[0]!.same).toBe(true);
    const base = template("ActionEvent");
    const all = Array.from({ length: 60 }, (_, i) => {
      const kind = [a, b, "ActionEvent"][i % 3]!;
      return toStore({ ...base, kind, source: "agent", id: `e${i}`, timestamp: iso(T0 + i * 1000) } as unknown as Parameters<typeof toStore>[0]);
    });
    await store.createConversation({ id: CONV, status: "RUNNING" }, all.slice(0, 30));
    await store.appendEvents(CONV, all.slice(30));
    const ids = (kind?: string) => all.filter((e) => kind === undefined || e.event.kind === kind).map((e) => e.event.id);
    for (const order of ["asc", "desc"] as const) {
      const reversed = (xs: string[]) => (order === "asc" ? xs : [...xs].reverse());
      expect(await pages(store, { order, limit: 7, kind: a })).toEqual(reversed(ids(a)));
      expect(await pages(store, { order, limit: 7, kind: b, source: "agent" })).toEqual(reversed(ids(b)));
      expect(await pages(store, { order, limit: 7, source: "agent" })).toEqual(reversed(ids()));
    }
    const range = { timestampGte: T0 + 10_000, timestampLt: T0 + 40_000 };
    expect(await store.count(CONV, { kind: a, ...range })).toBe(10);
    expect(await store.count(CONV, { source: "agent", ...range })).toBe(30);
  });

  it("empties the trigram index's pending list at the end of a replay's COPY, gathered under a 4 MB bound, and keeps 128 kB for other writes (migration 8)", async () => {
    const store = await scratch.open(schemaName());
    await store.pool.query("create extension if not exists pgstattuple with schema public");
    const pending = async () => (await store.pool.query<{ pages: number; tuples: number }>("select pending_pages as pages, pending_tuples as tuples from pgstatginindex('message_texts_body')")).rows[0]!;
    const sent: string[] = [];
    spyQueries(store, (text) => void sent.push(text));
    const texts = Array.from({ length: 2_000 }, (_, i) => toStore(message(`m${i}`, iso(T0 + i * 1000), `message number ${i} about the ${i % 7 === 0 ? "repository" : "weather"}`)));
    await store.createConversation({ id: CONV, status: "RUNNING" }, texts);
    expect(sent).toContain("set local gin_pending_list_limit = 4096");
    expect(sent).toContain("select gin_clean_pending_list('message_texts_body'::regclass)");
    expect(await pending()).toEqual({ pages: 0, tuples: 0 });
    // The bound is the connection's, not the index's (an index's storage parameter would override it).
    expect((await store.pool.query("show gin_pending_list_limit")).rows).toEqual([{ gin_pending_list_limit: "128kB" }]);
    expect((await store.pool.query("select reloptions from pg_class where oid = 'message_texts_body'::regclass")).rows).toEqual([{ reloptions: null }]);
    // A live append leaves its entries in the list, for the next flush (at 128 kB).
    await store.appendEvents(CONV, [toStore(message("live", iso(T0 + 3_000_000), "one more about the repository"))]);
    expect((await pending()).tuples).toBeGreaterThan(0);
    expect(await store.count(CONV, { body: "REPOSITORY" })).toBe(287);
  });

  it("appends a replay through a role that does not own the tables, leaving the pending list to its own flushes", async () => {
    const owner = await scratch.open(schemaName());
    const role = `acs_app_${process.pid}`;
    await adminQuery(`drop role if exists ${role}`, [], scratch.db.url);
    await adminQuery(`create role ${role} login`, [], scratch.db.url);
    try {
      await owner.pool.query(`grant usage on schema "${owner.schema}" to ${role}; grant all on all tables in schema "${owner.schema}" to ${role}; grant all on all sequences in schema "${owner.schema}" to ${role}`);
      const url = new URL(scratch.db.url);
      url.username = role;
      const app = await openPostgresStore({ url: url.toString(), schema: owner.schema, maxConnections: 2 });
      try {
        expect(owner.ownsBodyIndex).toBe(true);
        expect(app.ownsBodyIndex).toBe(false);
        const texts = Array.from({ length: 1_500 }, (_, i) => toStore(message(`m${i}`, iso(T0 + i * 1000), `text ${i} about the repository`)));
        await app.createConversation({ id: CONV, status: "RUNNING" }, texts);
        expect(await app.count(CONV, { body: "repository" })).toBe(1_500);
      } finally {
        await app.close();
      }
    } finally {
      await owner.pool.query(`drop owned by ${role}`);
      await adminQuery(`drop role if exists ${role}`, [], scratch.db.url);
    }
  });

  it("analyzes a conversation of a few thousand events by default, so that its pages walk an index even where autovacuum never runs", async () => {
    const store = await scratch.open(schemaName());
    await store.createConversation({ id: CONV, status: "RUNNING" }, events(6_000));
    await (store as unknown as { analyze: { running?: Promise<void> } }).analyze.running;
    expect(store.analyzes).toBe(1);
    const { rows: positions } = await store.pool.query<{ ts: string; seq: string }>("select ts, seq from events order by seq offset 3000 limit 1");
    const { ts, seq } = positions[0]!;
    const { page, plan } = await searchWithPlan(store)({ order: "asc", limit: 100, after: { ts: Number(ts), seq: Number(seq) } });
    expect(page.items.length).toBe(100);
    expect(plan).toContain("Index Scan using events_time");
    expect(plan).not.toContain("Sort");
  });

  it("walks the messages' texts in order for a page of a body in many of them, with or without kind=MessageEvent, sorts the trigram index's few matches for a rare one, and reads only the page's events rows (migration 10)", async () => {
    const store = await scratch.open(schemaName());
    // 40,000 events, one in 4 a message (10,000 texts: enough that a scan of them all costs more
    // than the trigram index); half the messages hold "repository", one holds "quasar".
    const other = template("ActionEvent");
    const all = Array.from({ length: 40_000 }, (_, i): EventToStore => {
      const timestamp = iso(T0 + i * 1000);
      if (i % 4 !== 0) return toStore({ ...other, id: `a${i}`, timestamp } as typeof other);
      return toStore(message(`m${i}`, timestamp, i === 20_000 ? "a quasar" : i % 8 === 0 ? "see the repository" : "nothing to see"));
    });
    await store.createConversation({ id: CONV, status: "RUNNING" }, all);
    await store.pool.query("analyze events, message_texts");
    const search = searchWithPlan(store);
    const plans: string[] = [];
    for (const query of [
      { order: "asc", limit: 100, body: "REPOSITORY" },
      { order: "asc", limit: 100, body: "repository", kind: "MessageEvent" },
      { order: "desc", limit: 100, body: "repository", kind: "MessageEvent" },
      { order: "asc", limit: 100, body: "quasar" },
    ] as const) {
      const { page, plan } = await search(query);
      expect(page.items.length).toBe(query.body === "quasar" ? 1 : 100);
      plans.push(plan);
    }
    for (const plan of plans.slice(0, 3)) {
      expect(plan).toMatch(/Index Scan (Backward )?using message_texts_time on message_texts/);
      expect(plan).not.toContain("Sort");
    }
    expect(plans[3]).toContain("Bitmap Index Scan on message_texts_body");
    // The events table is read by primary key, one row a match, never walked or rechecked.
    for (const plan of plans) expect(plan.split("\n").filter((line) => / on events( |$)/.test(line))).toEqual([expect.stringMatching(/Index Scan using events_pkey on events$/)]);
  });
});
