/**
 * Event search on the SQLite store, what the contract (contract/) cannot see: the query plans
 * (EXPLAIN QUERY PLAN) and both read paths of searchJson.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Event } from "@acs-toolkit/schema";
import { openSqliteStore, type SqliteEventStore, type SqliteStoreOptions } from "../../src/store/sqlite/index.js";
import { eventTimeMicros } from "../../src/store/time.js";
import type { SearchQuery } from "../../src/store/types.js";
import { CONV, T0, fill, iso, message, mixedEvents, naive, pages, template } from "./contract/fixtures.js";

let dir: string;
let opened: SqliteEventStore[];

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "acs-search-"));
  opened = [];
});
afterEach(async () => {
  for (const store of opened) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(options: Partial<SqliteStoreOptions> = {}): SqliteEventStore {
  const store = openSqliteStore({ file: path.join(dir, `events-${opened.length}.db`), ...options });
  opened.push(store);
  return store;
}

describe("searchJson's two read paths", () => {
  it("gives search's pages as bytes at extreme instants (before 1970, past 2^53 µs), with ties, in both orders, on both read paths", async () => {
    // 2^53 µs is in the year 2255; past it, timestamps are integers that numbers hold only in part.
    const instants = ["1900-01-01T00:00:00.000001", "1969-12-31T23:59:59.999999", "1970-01-01T00:00:00", "2026-02-05T11:00:00.5", "2255-06-05T23:47:34.740992", "2255-06-05T23:47:34.740993", "9999-12-31T23:59:59.999999"];
    const events = Array.from({ length: 60 }, (_, i) => ({ ...template("PauseEvent"), id: `p${i}`, timestamp: instants[(i * 5) % instants.length]! }) as Event);
    for (const sortedJsonPages of [false, true]) {
      const store = open({ sortedJsonPages });
      const rows = await fill(store, events, 7);
      for (const order of ["asc", "desc"] as const) {
        for (const limit of [1, 3, 7, 59, 60, 100]) expect(await pages(store, { order, limit })).toEqual(naive(rows, { order }));
        const gte = eventTimeMicros(instants[2]!)!;
        expect(await pages(store, { order, limit: 4, timestampGte: gte })).toEqual(naive(rows, { order, timestampGte: gte }));
      }
      expect(store.unsortedPages).toBe(0);
    }
  });
});

describe("query plans (EXPLAIN QUERY PLAN)", () => {
  const flat = (plans: string[][]) => plans.flat().join("\n");

  it("pages are index range scans: no scan, no sort", async () => {
    const store = open();
    await fill(store, mixedEvents());
    const after = { ts: T0 + 5000, seq: 3 };
    for (const kind of [undefined, "ActionEvent"] as const) {
      for (const source of [undefined, "agent"] as const) {
        const index = kind && source ? "events_by_kind_source" : kind ? "events_by_kind" : source ? "events_by_source" : "events_by_time";
        for (const order of ["asc", "desc"] as const) {
          for (const extra of [{}, { after }, { timestampGte: T0, timestampLt: T0 + 9000 }, { after, timestampGte: T0 }]) {
            const query: SearchQuery = { order, limit: 100, kind, source, ...extra };
            const plans = store.explain(CONV, query);
            expect(plans).toHaveLength(1);
            expect(plans[0], JSON.stringify(query)).toEqual([
              `SEARCH events USING INDEX ${index} (conversation=?${kind ? " AND kind=?" : ""}${source ? " AND source=?" : ""} AND (ts,seq)>(?,?) AND (ts,seq)<(?,?))`,
            ]);
            // searchJson: the same range scan, in a co-routine the aggregates read in its order.
            const range = `${index} (conversation=?${kind ? " AND kind=?" : ""}${source ? " AND source=?" : ""} AND (ts,seq)>(?,?) AND (ts,seq)<(?,?))`;
            expect(store.explain(CONV, query, "searchJson"), JSON.stringify(query)).toEqual([
              ["CO-ROUTINE (subquery-1)", `SEARCH events USING INDEX ${range}`, "SCAN (subquery-1)"],
              [`SEARCH events USING COVERING INDEX ${range}`],
            ]);
            const counted = flat(store.explain(CONV, query, "count"));
            if ("timestampGte" in extra) {
              expect(counted).toBe(
                `SEARCH events USING COVERING INDEX ${index} (conversation=?${kind ? " AND kind=?" : ""}${source ? " AND source=?" : ""} AND (ts,seq)>(?,?) AND (ts,seq)<(?,?))`,
              );
            } else {
              // No time range: the counters' rows of the conversation (migrations.ts, version 3), never its events.
              expect(counted, JSON.stringify(query)).toBe(`SEARCH event_counts USING PRIMARY KEY (conversation=?${kind ? " AND kind=?" : ""}${kind && source ? " AND source=?" : ""})`);
            }
          }
        }
      }
    }
  });

  it("body plans: the ordered walk uses the message index, FTS is restricted to the conversation", async () => {
    const store = open();
    await fill(store, [message("m", iso(T0), "hello world")]);
    for (const source of [undefined, "user"] as const) {
      for (const order of ["asc", "desc"] as const) {
        const query: SearchQuery = { order, limit: 100, body: "world", source, after: { ts: T0, seq: 0 } };
        const [probe, walk, fts, ordered, ...seqBounds] = store.explain(CONV, query);
        const index = source ? "events_by_kind_source" : "events_by_kind";
        expect(walk).toEqual([
          `SEARCH e USING COVERING INDEX ${index} (conversation=? AND kind=?${source ? " AND source=?" : ""} AND (ts,seq)>(?,?) AND (ts,seq)<(?,?))`,
          "SEARCH m USING INTEGER PRIMARY KEY (rowid=?)",
        ]);
        // FTS5's plan string: M = MATCH, then the rowid bounds (> and <) pushed into the FTS index.
        expect(flat([probe!])).toMatch(/SCAN message_fts VIRTUAL TABLE INDEX \d+:M\d*></);
        expect(fts![0]).toMatch(/^SCAN f VIRTUAL TABLE INDEX \d+:M\d*></);
        expect(fts).toContain("SEARCH m USING INTEGER PRIMARY KEY (rowid=?)");
        // Sorting happens only on the FTS path, bounded by FTS_CANDIDATES (see sqlite.ts).
        for (const plan of [probe!, walk!, fts!]) expect(flat([plan])).not.toMatch(/SCAN (events|e|m|message_texts)\b/);
        expect(flat([walk!])).not.toMatch(/TEMP B-TREE/);
        // In append order (a conversation whose timestamps never decrease): FTS hands out its
        // matches in rowid order between two seqs, found on the time index; nothing is sorted.
        expect(ordered![0]).toMatch(/^SCAN f VIRTUAL TABLE INDEX \d+:M\d*></);
        expect(ordered).toContain("SEARCH m USING INTEGER PRIMARY KEY (rowid=?)");
        expect(flat([ordered!])).not.toMatch(/TEMP B-TREE/);
        for (const plan of seqBounds) expect(plan).toEqual(["SEARCH events USING COVERING INDEX events_by_time (conversation=? AND (ts,seq)>(?,?) AND (ts,seq)<(?,?))"]);

        // A body of two characters goes to FTS too: the trigrams that begin with it (migrations.ts, version 4).
        expect(store.explain(CONV, { ...query, body: "wo" })).toEqual([probe, walk, fts, ordered, ...seqBounds]);
        // One no indexed trigram begins with reads nothing; one that is not ASCII is walked.
        expect(store.explain(CONV, { ...query, body: "é" })).toEqual([walk]);
        expect(flat(store.explain(CONV, query, "count"))).toMatch(/^SCAN f VIRTUAL TABLE INDEX \d+:M\d*></);
        expect(flat(store.explain(CONV, { ...query, body: "wo" }, "count"))).toContain(`SEARCH e USING COVERING INDEX ${index}`);
      }
    }
  });
});
