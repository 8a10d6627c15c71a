/**
 * Event search on the SQLite store: every filter alone and combined, both orders, ties, instants,
 * cursors, the body filter's semantics and plans, and the query plans (EXPLAIN QUERY PLAN).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_EVENT_SOURCE, EVENT_KINDS, type Event, type EventKind, type EventSource, type MessageEvent } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { jsonPageFor, nextAfter, readable } from "../support/json-page.js";
import { messageBodyText } from "../support/trajectory.js";
import { openSqliteStore, type SqliteEventStore, type SqliteStoreOptions } from "../../src/store/sqlite.js";
import { eventTimeMicros } from "../../src/store/time.js";
import type { EventToStore, Position, SearchFilters, SearchQuery } from "../../src/store/types.js";

const CONV = "4c0d5e8a-1f2b-4c3d-8e9f-0a1b2c3d4e5f";
const OTHER = "9e8d7c6b-5a49-4837-a261-5f4e3d2c1b0a";

let dir: string;
let opened: SqliteEventStore[];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "acs-search-"));
  opened = [];
});
afterEach(() => {
  for (const store of opened) store.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(options: Partial<SqliteStoreOptions> = {}): SqliteEventStore {
  const store = openSqliteStore({ file: path.join(dir, `events-${opened.length}.db`), ...options });
  opened.push(store);
  return store;
}

const templates = exampleEvents();
const template = (kind: EventKind) => templates.find((e) => e.kind === kind)!;
const toStore = (event: Event): EventToStore => ({ event, json: JSON.stringify(event) });
const iso = (micros: number) => {
  const d = new Date(Math.floor(micros / 1000)).toISOString();
  return `${d.slice(0, 19)}.${String(micros % 1_000_000).padStart(6, "0")}`;
};
const T0 = Date.UTC(2026, 1, 5, 11, 0, 0) * 1000;

function message(
  id: string,
  timestamp: string,
  text: string,
  extra: { reasoning?: string; extended?: string[]; image?: boolean; source?: EventSource } = {},
): Event {
  const base = template("MessageEvent") as MessageEvent;
  const content: NonNullable<MessageEvent["llm_message"]["content"]> = [{ type: "text", text }];
  if (extra.image) content.push({ type: "image", image_urls: ["https://example.com/needle.png"] });
  const event: MessageEvent = {
    ...base,
    id,
    timestamp,
    source: extra.source ?? "user",
    llm_message: { ...base.llm_message, content, reasoning_content: extra.reasoning ?? null },
    extended_content: (extra.extended ?? []).map((t) => ({ type: "text", text: t })),
  };
  return event;
}

/** Every page of a query, concatenated; checks hasMore on the way. */
function pages(store: SqliteEventStore, query: Omit<SearchQuery, "after"> & { after?: Position }, id = CONV): string[] {
  const out: string[] = [];
  let after = query.after;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = store.search(id, { ...query, after });
    expect(readable(store.searchJson(id, { ...query, after }))).toEqual(jsonPageFor(page)); // the page as bytes is the same page
    out.push(...page.items.map((e) => e.id));
    if (!page.hasMore) return out;
    if (!page.resumeAfter) expect(page.items).toHaveLength(query.limit); // short only when the scan budget ran out
    after = nextAfter(page)!;
  }
  throw new Error("runaway paging");
}

interface Row {
  id: string;
  ts: number;
  seq: number;
  kind: string;
  source: string;
  event: Event;
}

function naive(rows: Row[], f: SearchFilters & { order?: "asc" | "desc" }): string[] {
  const out = rows
    .filter(
      (r) =>
        (f.kind === undefined || r.kind === f.kind) &&
        (f.source === undefined || r.source === f.source) &&
        (f.timestampGte === undefined || r.ts >= f.timestampGte) &&
        (f.timestampLt === undefined || r.ts < f.timestampLt) &&
        (f.body === undefined || (r.kind === "MessageEvent" && messageBodyText(r.event as MessageEvent).includes(f.body.toLowerCase()))),
    )
    .sort((a, b) => a.ts - b.ts || a.seq - b.seq)
    .map((r) => r.id);
  return f.order === "desc" ? out.reverse() : out;
}

/** Stores `events` in batches of `batch` and returns their rows as the naive model sees them. */
function fill(store: SqliteEventStore, events: Event[], batch = 17, id = CONV): Row[] {
  for (let i = 0; i < events.length; i += batch) {
    const chunk = events.slice(i, i + batch).map(toStore);
    if (i === 0) store.createConversation({ id, status: "RUNNING" }, chunk);
    else store.appendEvents(id, chunk);
  }
  return events.map((event, i) => ({
    id: event.id,
    ts: eventTimeMicros(event.timestamp)!,
    seq: i + 1,
    kind: event.kind,
    source: event.source ?? DEFAULT_EVENT_SOURCE[event.kind]!,
    event,
  }));
}

/** Every example kind, several times, timestamps out of append order with ties. */
function mixedEvents(): Event[] {
  const out: Event[] = [];
  for (let round = 0; round < 4; round++) {
    exampleEvents({ seed: round + 1 }).forEach((e, i) => {
      const micros = T0 + ((i * 7919 + round * 104729) % 50) * 1000; // 50 distinct instants: many ties
      out.push({ ...e, timestamp: iso(micros) } as Event);
    });
  }
  return out;
}

describe("filters and order", () => {
  it("each filter alone and combined, in both orders, equals the naive answer", () => {
    const store = open();
    const rows = fill(store, mixedEvents());
    const kinds = [...new Set(rows.map((r) => r.kind))] as EventKind[];
    expect(kinds.length).toBe(EVENT_KINDS.length);
    const instants = [...new Set(rows.map((r) => r.ts))].sort((a, b) => a - b);
    const filters: SearchFilters[] = [
      {},
      ...kinds.map((kind) => ({ kind })),
      ...(["agent", "user", "environment"] as const).map((source) => ({ source })),
      { timestampGte: instants[10] },
      { timestampLt: instants[10] },
      { timestampGte: instants[5], timestampLt: instants[30] },
      { timestampGte: instants[5]! + 1, timestampLt: instants[30]! + 1 },
      { kind: "ActionEvent", source: "agent" },
      { kind: "ActionEvent", source: "user" },
      { kind: "MessageEvent", source: "user", timestampGte: instants[3] },
      { source: "environment", timestampLt: instants[40], timestampGte: instants[2] },
      { kind: "ObservationEvent", timestampGte: instants[20], timestampLt: instants[21] },
      { timestampGte: instants[20], timestampLt: instants[20] },
    ];
    for (const f of filters) {
      for (const order of ["asc", "desc"] as const) {
        const expected = naive(rows, { ...f, order });
        for (const limit of [1, 7, 100]) {
          expect(pages(store, { ...f, order, limit }), JSON.stringify({ f, order, limit })).toEqual(expected);
        }
      }
      expect(store.count(CONV, f), JSON.stringify(f)).toBe(naive(rows, f).length);
    }
  });

  it("orders ties by append order and DESC is the exact reverse", () => {
    const store = open();
    const same = "2026-02-05T11:00:00.5";
    const evs: Event[] = [
      { ...template("PauseEvent"), id: "late", timestamp: "2026-02-05T11:00:01" },
      ...["a", "b", "c"].map((id) => ({ ...template("PauseEvent"), id, timestamp: same })),
      { ...template("PauseEvent"), id: "early", timestamp: "2026-02-05T11:00:00" },
      ...["d", "e"].map((id) => ({ ...template("CondensationRequest"), id, timestamp: same })),
    ] as Event[];
    fill(store, evs, 3); // ties span two batches
    expect(pages(store, { order: "asc", limit: 100 })).toEqual(["early", "a", "b", "c", "d", "e", "late"]);
    expect(pages(store, { order: "desc", limit: 100 })).toEqual(["late", "e", "d", "c", "b", "a", "early"]);
    for (let limit = 1; limit <= 7; limit++) {
      expect(pages(store, { order: "asc", limit })).toEqual(["early", "a", "b", "c", "d", "e", "late"]);
      expect(pages(store, { order: "desc", limit })).toEqual(["late", "e", "d", "c", "b", "a", "early"]);
    }
    // Resuming inside the tie group.
    const c = store.positionOf(CONV, "c")!;
    expect(pages(store, { order: "asc", limit: 2, after: c })).toEqual(["d", "e", "late"]);
    expect(pages(store, { order: "desc", limit: 2, after: c })).toEqual(["b", "a", "early"]);
    expect(pages(store, { order: "asc", limit: 2, after: c, kind: "PauseEvent" })).toEqual(["late"]);
  });

  it("readAfter pages in append order, whatever the timestamps, and only this conversation's events", () => {
    const store = open();
    const evs = ["late", "a", "early", "b"].map((id, i) => ({ ...template("PauseEvent"), id, timestamp: `2026-02-05T11:00:0${[9, 5, 1, 5][i]}` })) as Event[];
    fill(store, evs, 3);
    store.createConversation({ id: OTHER, status: "STOPPED" }, [toStore({ ...template("PauseEvent"), id: "other" } as Event)]);
    const ids = (page: { id: string }[]) => page.map((e) => e.id);
    expect(ids(store.readAfter(CONV, 0, 100))).toEqual(["late", "a", "early", "b"]);
    const [first, second] = store.readAfter(CONV, 0, 2);
    expect([first!.seq, second!.seq]).toEqual([1, 2]);
    expect(ids(store.readAfter(CONV, second!.seq, 100))).toEqual(["early", "b"]);
    expect(store.readAfter(CONV, 4, 100)).toEqual([]);
    expect(store.readAfter("00000000-0000-4000-8000-000000000000", 0, 100)).toEqual([]);
    expect(store.readAfter(CONV, 0, 100)[0]!.json).toBe(JSON.stringify(evs[0]));
  });

  it("compares timestamps as instants, reading a timestamp without offset as UTC", () => {
    const store = open();
    const pause = (id: string, timestamp: string) => ({ ...template("PauseEvent"), id, timestamp }) as Event;
    fill(store, [
      pause("plus-one", "2026-02-05T12:00:00+01:00"),
      pause("naive", "2026-02-05T11:00:00"),
      pause("before", "2026-02-05T10:59:59.999999"),
      pause("zulu", "2026-02-05T11:00:00.000Z"),
      pause("minus-five", "2026-02-05T06:00:00-05:00"),
      pause("after", "2026-02-05T11:00:00.000001"),
      pause("lowercase-z", "2026-02-05t11:00:00z".toUpperCase().replace("T", "T")),
    ]);
    const eleven = eventTimeMicros("2026-02-05T11:00:00")!;
    expect(eventTimeMicros("2026-02-05T12:00:00+01:00")).toBe(eleven);
    expect(pages(store, { order: "asc", limit: 100 })).toEqual([
      "before",
      "plus-one",
      "naive",
      "zulu",
      "minus-five",
      "lowercase-z",
      "after",
    ]);
    expect(pages(store, { order: "asc", limit: 100, timestampGte: eleven, timestampLt: eleven + 1 })).toEqual([
      "plus-one",
      "naive",
      "zulu",
      "minus-five",
      "lowercase-z",
    ]);
    expect(pages(store, { order: "asc", limit: 100, timestampLt: eleven })).toEqual(["before"]);
    expect(pages(store, { order: "desc", limit: 2, timestampGte: eventTimeMicros("2026-02-05T13:00:00+02:00") })).toEqual([
      "after",
      "lowercase-z",
      "minus-five",
      "zulu",
      "naive",
      "plus-one",
    ]);
  });

  it("`after` resumes strictly after the position, whether or not an event is there", () => {
    const store = open();
    const rows = fill(store, mixedEvents());
    const sorted = naive(rows, {});
    const at = rows.find((r) => r.id === sorted[100])!;
    expect(pages(store, { order: "asc", limit: 9, after: at })).toEqual(sorted.slice(101));
    expect(pages(store, { order: "desc", limit: 9, after: at })).toEqual(sorted.slice(0, 100).reverse());
    // A position between events: (ts, 0) is before every event at ts, (ts, huge) after them all.
    const between = { ts: at.ts, seq: 0 };
    const firstAtTs = sorted.findIndex((id) => rows.find((r) => r.id === id)!.ts === at.ts);
    expect(pages(store, { order: "asc", limit: 50, after: between })).toEqual(sorted.slice(firstAtTs));
    expect(pages(store, { order: "desc", limit: 50, after: between })).toEqual(sorted.slice(0, firstAtTs).reverse());
    const last = rows.find((r) => r.id === sorted[sorted.length - 1])!;
    expect(store.search(CONV, { order: "asc", limit: 5, after: last })).toEqual({ items: [], hasMore: false });
    // Combined with a time range, the tighter bound wins.
    const gte = rows.find((r) => r.id === sorted[150])!.ts;
    expect(pages(store, { order: "asc", limit: 10, after: at, timestampGte: gte })).toEqual(naive(rows, { timestampGte: gte }));
  });

  it("hasMore is true exactly when another event matches", () => {
    const store = open();
    fill(store, Array.from({ length: 10 }, (_, i) => ({ ...template("PauseEvent"), id: `p${i}`, timestamp: iso(T0 + i) }) as Event));
    expect(store.search(CONV, { order: "asc", limit: 10 }).hasMore).toBe(false);
    expect(store.search(CONV, { order: "asc", limit: 9 }).hasMore).toBe(true);
    expect(store.search(CONV, { order: "asc", limit: 9, after: store.positionOf(CONV, "p0") }).hasMore).toBe(false);
  });
});

describe("searchJson", () => {
  it("gives search's pages as bytes at extreme instants (before 1970, past 2^53 µs), with ties, in both orders, on both read paths", () => {
    // 2^53 µs is in the year 2255; past it, timestamps are integers that numbers hold only in part.
    const instants = ["1900-01-01T00:00:00.000001", "1969-12-31T23:59:59.999999", "1970-01-01T00:00:00", "2026-02-05T11:00:00.5", "2255-06-05T23:47:34.740992", "2255-06-05T23:47:34.740993", "9999-12-31T23:59:59.999999"];
    const events = Array.from({ length: 60 }, (_, i) => ({ ...template("PauseEvent"), id: `p${i}`, timestamp: instants[(i * 5) % instants.length]! }) as Event);
    for (const sortedJsonPages of [false, true]) {
      const store = open({ sortedJsonPages });
      const rows = fill(store, events, 7);
      for (const order of ["asc", "desc"] as const) {
        for (const limit of [1, 3, 7, 59, 60, 100]) expect(pages(store, { order, limit })).toEqual(naive(rows, { order }));
        const gte = eventTimeMicros(instants[2]!)!;
        expect(pages(store, { order, limit: 4, timestampGte: gte })).toEqual(naive(rows, { order, timestampGte: gte }));
      }
      expect(store.unsortedPages).toBe(0);
    }
  });

  it("an empty page, a page of an unknown conversation and a page of a kind never stored are empty", () => {
    const store = open();
    fill(store, Array.from({ length: 5 }, (_, i) => ({ ...template("PauseEvent"), id: `p${i}`, timestamp: iso(T0 + i) }) as Event));
    const empty = { count: 0, last: undefined, hasMore: false };
    expect({ ...store.searchJson(OTHER, { order: "asc", limit: 5 }), json: undefined }).toEqual({ ...empty, json: undefined });
    expect(store.searchJson(CONV, { order: "asc", limit: 5, kind: "MessageEvent" }).json).toHaveLength(0);
    expect(store.searchJson(CONV, { order: "desc", limit: 5, timestampLt: T0 }).count).toBe(0);
    expect(() => store.searchJson(CONV, { order: "asc", limit: 101 })).toThrow(RangeError);
  });
});

describe("body filter", () => {
  function bodyStore(options: Partial<SqliteStoreOptions> = {}) {
    const store = open(options);
    const evs: Event[] = [
      message("m-text", iso(T0 + 1), "Please FIX the Failing Test in parser.ts"),
      message("m-ext", iso(T0 + 2), "nothing here", { extended: ["Skill: Kubernetes deployment"] }),
      message("m-reason", iso(T0 + 3), "ok", { reasoning: "I should check the CONFIG first" }),
      message("m-join", iso(T0 + 4), "alpha", { reasoning: "omega" }),
      message("m-image", iso(T0 + 5), "see picture", { image: true }),
      message("m-quote", iso(T0 + 6), 'He said "ship it" AND left; NEAR(x, y) * star -not col:umn ^caret 100% a_b'),
      message("m-unicode", iso(T0 + 7), "Größe ÄNDERN und Straße ΣΊΣΥΦΟΣ"),
      message("m-agent", iso(T0 + 8), "the agent fixed the failing test", { source: "agent" }),
      message("m-empty", iso(T0 + 9), ""),
      message("m-long-s", iso(T0 + 9), "ſtop word"), // ties with m-empty; FTS5 folds ſ to s, str.lower() does not
      { ...template("ActionEvent"), id: "action", timestamp: iso(T0 + 10) } as Event,
      { ...template("SystemPromptEvent"), id: "system", timestamp: iso(T0 + 11) } as Event,
      { ...template("ConversationErrorEvent"), id: "error", timestamp: iso(T0 + 12), detail: "failing test" } as Event,
    ];
    const rows = fill(store, evs, 5);
    // Another conversation with the same words must never leak in.
    fill(store, [message("other-1", iso(T0), "the failing test"), message("other-2", iso(T0), "fix")], 5, OTHER);
    return { store, rows };
  }

  const cases: [string, string[]][] = [
    ["failing test", ["m-text", "m-agent"]],
    ["FAILING TEST", ["m-text", "m-agent"]],
    ["fix", ["m-text", "m-agent"]],
    ["kubernetes", ["m-ext"]],
    ["config", ["m-reason"]],
    ["alpha omega", ["m-join"]], // parts are joined by a space, as the reference does
    ["alphaomega", []],
    ["picture", ["m-image"]],
    ["needle.png", []], // image URLs are not text
    ['"ship it"', ["m-quote"]],
    ['"', ["m-quote"]],
    ['said "', ["m-quote"]],
    ["AND left", ["m-quote"]],
    ["NEAR(", ["m-quote"]],
    ["NEAR(x, y)", ["m-quote"]],
    ["* star", ["m-quote"]],
    ["-not", ["m-quote"]],
    ["col:umn", ["m-quote"]],
    ["^caret", ["m-quote"]],
    ["100%", ["m-quote"]],
    ["%", ["m-quote"]],
    ["a_b", ["m-quote"]],
    ["_", ["m-quote"]],
    ["größe", ["m-unicode"]],
    ["GRÖSSE", []], // str.lower() does not fold ß to ss
    ["straße", ["m-unicode"]],
    ["änd", ["m-unicode"]],
    ["σίσυφος", ["m-unicode"]],
    ["x", ["m-text", "m-quote", "m-agent"]],
    ["Ö", ["m-unicode"]],
    ["q", []],
    ["zz", []],
    ["ok", ["m-reason"]],
    ["ts", ["m-text"]],
    [" ", ["m-text", "m-ext", "m-reason", "m-join", "m-image", "m-quote", "m-unicode", "m-agent", "m-long-s"]],
    ["", ["m-text", "m-ext", "m-reason", "m-join", "m-image", "m-quote", "m-unicode", "m-agent", "m-empty", "m-long-s"]],
    ["system", []], // only MessageEvents match, whatever the other events contain
    ["stop word", []], // an FTS candidate, refused by the exact check
    ["ſtop", ["m-long-s"]],
  ];

  for (const options of [{}, { bodySearch: { ftsCandidates: 0, scanBudget: 1 } }, { bodySearch: { ftsCandidates: 0, scanBudget: 2 } }]) {
    it(`is a case-insensitive substring of a message's text (${JSON.stringify(options)})`, () => {
      const { store } = bodyStore(options);
      for (const [body, expected] of cases) {
        for (const order of ["asc", "desc"] as const) {
          const want = order === "asc" ? expected : [...expected].reverse();
          for (const limit of [1, 2, 100]) {
            expect(pages(store, { order, limit, body }), JSON.stringify({ body, order, limit })).toEqual(want);
          }
        }
        expect(store.count(CONV, { body }), body).toBe(expected.length);
      }
    });
  }

  it("excludes every other kind and combines with the other filters", () => {
    const { store, rows } = bodyStore();
    expect(pages(store, { order: "asc", limit: 10, body: "failing", kind: "ActionEvent" })).toEqual([]);
    expect(store.count(CONV, { body: "failing", kind: "ConversationErrorEvent" })).toBe(0);
    expect(pages(store, { order: "asc", limit: 10, body: "failing", kind: "MessageEvent" })).toEqual(["m-text", "m-agent"]);
    expect(pages(store, { order: "asc", limit: 10, body: "failing", source: "agent" })).toEqual(["m-agent"]);
    expect(pages(store, { order: "asc", limit: 10, body: "f", source: "agent" })).toEqual(["m-agent"]);
    expect(store.count(CONV, { body: "f", source: "user" })).toBe(naive(rows, { body: "f", source: "user" }).length);
    expect(naive(rows, { body: "f", source: "user" })).toEqual(["m-text", "m-reason", "m-quote"]);
    expect(pages(store, { order: "asc", limit: 10, body: "failing", timestampGte: T0 + 2 })).toEqual(["m-agent"]);
    expect(pages(store, { order: "desc", limit: 10, body: "e", timestampLt: T0 + 5 })).toEqual(naive(rows, { body: "e", timestampLt: T0 + 5, order: "desc" }));
    const after = store.positionOf(CONV, "m-text")!;
    expect(pages(store, { order: "asc", limit: 1, body: "failing", after })).toEqual(["m-agent"]);
    expect(pages(store, { order: "desc", limit: 1, body: "failing", after })).toEqual([]);
  });

  it("serves each plan at the default thresholds: rare, frequent, and frequent-but-sparse-here", () => {
    const store = open();
    // 2,500 messages without the word, then 1,500 with it: > FTS_CANDIDATES candidates, and a walk
    // from the start tests 2,500 messages (within SCAN_BUDGET) before the first hit.
    const evs: Event[] = [];
    for (let i = 0; i < 4000; i++) {
      const text = i < 2500 ? `plain message ${i}` : `a frequent word ${i}`;
      evs.push(message(`m${i}`, iso(T0 + i * 10), i === 1234 ? "one rare zebra" : text));
      if (i % 4 === 0) evs.push({ ...template("PauseEvent"), id: `p${i}`, timestamp: iso(T0 + i * 10 + 5) } as Event);
    }
    const rows = fill(store, evs, 1000);
    for (const [body, after] of [
      ["zebra", undefined],
      ["frequent", undefined],
      ["frequent", store.positionOf(CONV, "m3000")],
      ["plain", store.positionOf(CONV, "m2400")],
      ["e", store.positionOf(CONV, "m100")],
    ] as const) {
      for (const order of ["asc", "desc"] as const) {
        const expected = naive(rows, { body, order });
        const start = after ? expected.indexOf(rows.find((r) => r.ts === after.ts && r.seq === after.seq)!.id) + 1 : 0;
        const page = store.search(CONV, { order, limit: 100, body, after });
        expect(page.items.map((e) => e.id), `${body} ${order}`).toEqual(expected.slice(start, start + 100));
        expect(page.hasMore).toBe(expected.length > start + 100);
      }
    }
    expect(store.count(CONV, { body: "frequent" })).toBe(1500);
    expect(store.count(CONV, { body: "e" })).toBe(4000);
  });
});

describe("query plans (EXPLAIN QUERY PLAN)", () => {
  const flat = (plans: string[][]) => plans.flat().join("\n");

  it("pages are index range scans: no scan, no sort", () => {
    const store = open();
    fill(store, mixedEvents());
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
            expect(counted).toBe(
              `SEARCH events USING COVERING INDEX ${index} (conversation=?${kind ? " AND kind=?" : ""}${source ? " AND source=?" : ""} AND (ts,seq)>(?,?) AND (ts,seq)<(?,?))`,
            );
          }
        }
      }
    }
  });

  it("body plans: the ordered walk uses the message index, FTS is restricted to the conversation", () => {
    const store = open();
    fill(store, [message("m", iso(T0), "hello world")]);
    for (const source of [undefined, "user"] as const) {
      for (const order of ["asc", "desc"] as const) {
        const query: SearchQuery = { order, limit: 100, body: "world", source, after: { ts: T0, seq: 0 } };
        const [probe, walk, fts] = store.explain(CONV, query);
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

        const short = store.explain(CONV, { ...query, body: "wo" });
        expect(short).toEqual([walk]);
        expect(flat(store.explain(CONV, query, "count"))).toMatch(/^SCAN f VIRTUAL TABLE INDEX \d+:M\d*></);
        expect(flat(store.explain(CONV, { ...query, body: "wo" }, "count"))).toContain(`SEARCH e USING COVERING INDEX ${index}`);
      }
    }
  });
});
