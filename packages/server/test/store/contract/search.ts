/** The store contract, search: every filter alone and combined, both orders, ties, instants, cursors, bytes, the body filter. */
import { describe, expect, it } from "vitest";
import { EVENT_KINDS, type Event, type EventKind } from "@acs-toolkit/schema";
import type { SearchFilters } from "../../../src/store/types.js";
import { instantMicros } from "@acs-toolkit/schema/search";
import type { StoreContext } from "./index.js";
import { CONV, OTHER, T0, fill, iso, message, mixedEvents, naive, pages, template, toStore } from "./fixtures.js";

export function searchContract({ open, variants }: StoreContext): void {
  describe("filters and order", () => {
    it("each filter alone and combined, in both orders, equals the naive answer", async () => {
      const store = await open();
      const rows = await fill(store, mixedEvents());
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
            expect(await pages(store, { ...f, order, limit }), JSON.stringify({ f, order, limit })).toEqual(expected);
          }
        }
        expect(await store.count(CONV, f), JSON.stringify(f)).toBe(naive(rows, f).length);
      }
    });

    it("orders ties by append order and DESC is the exact reverse", async () => {
      const store = await open();
      const same = "2026-02-05T11:00:00.5";
      const evs: Event[] = [
        { ...template("PauseEvent"), id: "late", timestamp: "2026-02-05T11:00:01" },
        ...["a", "b", "c"].map((id) => ({ ...template("PauseEvent"), id, timestamp: same })),
        { ...template("PauseEvent"), id: "early", timestamp: "2026-02-05T11:00:00" },
        ...["d", "e"].map((id) => ({ ...template("CondensationRequest"), id, timestamp: same })),
      ] as Event[];
      await fill(store, evs, 3); // ties span two batches
      expect(await pages(store, { order: "asc", limit: 100 })).toEqual(["early", "a", "b", "c", "d", "e", "late"]);
      expect(await pages(store, { order: "desc", limit: 100 })).toEqual(["late", "e", "d", "c", "b", "a", "early"]);
      for (let limit = 1; limit <= 7; limit++) {
        expect(await pages(store, { order: "asc", limit })).toEqual(["early", "a", "b", "c", "d", "e", "late"]);
        expect(await pages(store, { order: "desc", limit })).toEqual(["late", "e", "d", "c", "b", "a", "early"]);
      }
      // Resuming inside the tie group.
      const c = (await store.positionOf(CONV, "c"))!;
      expect(await pages(store, { order: "asc", limit: 2, after: c })).toEqual(["d", "e", "late"]);
      expect(await pages(store, { order: "desc", limit: 2, after: c })).toEqual(["b", "a", "early"]);
      expect(await pages(store, { order: "asc", limit: 2, after: c, kind: "PauseEvent" })).toEqual(["late"]);
    });

    it("readAfter pages in append order, whatever the timestamps, and only this conversation's events", async () => {
      const store = await open();
      const evs = ["late", "a", "early", "b"].map((id, i) => ({ ...template("PauseEvent"), id, timestamp: `2026-02-05T11:00:0${[9, 5, 1, 5][i]}` })) as Event[];
      await fill(store, evs, 3);
      await store.createConversation({ id: OTHER, status: "STOPPED" }, [toStore({ ...template("PauseEvent"), id: "other" } as Event)]);
      const ids = (page: { id: string }[]) => page.map((e) => e.id);
      expect(ids(await store.readAfter(CONV, 0, 100))).toEqual(["late", "a", "early", "b"]);
      const [first, second] = await store.readAfter(CONV, 0, 2);
      expect([first!.seq, second!.seq]).toEqual([1, 2]);
      expect(ids(await store.readAfter(CONV, second!.seq, 100))).toEqual(["early", "b"]);
      expect(await store.readAfter(CONV, 4, 100)).toEqual([]);
      expect(await store.readAfter("00000000-0000-4000-8000-000000000000", 0, 100)).toEqual([]);
      expect((await store.readAfter(CONV, 0, 100))[0]!.json).toBe(JSON.stringify(evs[0]));
    });

    it("compares timestamps as instants, reading a timestamp without offset as UTC", async () => {
      const store = await open();
      const pause = (id: string, timestamp: string) => ({ ...template("PauseEvent"), id, timestamp }) as Event;
      await fill(store, [
        pause("plus-one", "2026-02-05T12:00:00+01:00"),
        pause("naive", "2026-02-05T11:00:00"),
        pause("before", "2026-02-05T10:59:59.999999"),
        pause("zulu", "2026-02-05T11:00:00.000Z"),
        pause("minus-five", "2026-02-05T06:00:00-05:00"),
        pause("after", "2026-02-05T11:00:00.000001"),
        pause("lowercase-z", "2026-02-05t11:00:00z".toUpperCase().replace("T", "T")),
      ]);
      const eleven = instantMicros("2026-02-05T11:00:00")!;
      expect(instantMicros("2026-02-05T12:00:00+01:00")).toBe(eleven);
      expect(await pages(store, { order: "asc", limit: 100 })).toEqual([
        "before",
        "plus-one",
        "naive",
        "zulu",
        "minus-five",
        "lowercase-z",
        "after",
      ]);
      expect(await pages(store, { order: "asc", limit: 100, timestampGte: eleven, timestampLt: eleven + 1 })).toEqual([
        "plus-one",
        "naive",
        "zulu",
        "minus-five",
        "lowercase-z",
      ]);
      expect(await pages(store, { order: "asc", limit: 100, timestampLt: eleven })).toEqual(["before"]);
      expect(await pages(store, { order: "desc", limit: 2, timestampGte: instantMicros("2026-02-05T13:00:00+02:00") })).toEqual([
        "after",
        "lowercase-z",
        "minus-five",
        "zulu",
        "naive",
        "plus-one",
      ]);
    });

    it("`after` resumes strictly after the position, whether or not an event is there", async () => {
      const store = await open();
      const rows = await fill(store, mixedEvents());
      const sorted = naive(rows, {});
      const at = rows.find((r) => r.id === sorted[100])!;
      expect(await pages(store, { order: "asc", limit: 9, after: at })).toEqual(sorted.slice(101));
      expect(await pages(store, { order: "desc", limit: 9, after: at })).toEqual(sorted.slice(0, 100).reverse());
      // A position between events: (ts, 0) is before every event at ts, (ts, huge) after them all.
      const between = { ts: at.ts, seq: 0 };
      const firstAtTs = sorted.findIndex((id) => rows.find((r) => r.id === id)!.ts === at.ts);
      expect(await pages(store, { order: "asc", limit: 50, after: between })).toEqual(sorted.slice(firstAtTs));
      expect(await pages(store, { order: "desc", limit: 50, after: between })).toEqual(sorted.slice(0, firstAtTs).reverse());
      const last = rows.find((r) => r.id === sorted[sorted.length - 1])!;
      expect(await store.search(CONV, { order: "asc", limit: 5, after: last })).toEqual({ items: [], hasMore: false });
      // Combined with a time range, the tighter bound wins.
      const gte = rows.find((r) => r.id === sorted[150])!.ts;
      expect(await pages(store, { order: "asc", limit: 10, after: at, timestampGte: gte })).toEqual(naive(rows, { timestampGte: gte }));
    });

    it("hasMore is true exactly when another event matches", async () => {
      const store = await open();
      await fill(store, Array.from({ length: 10 }, (_, i) => ({ ...template("PauseEvent"), id: `p${i}`, timestamp: iso(T0 + i) }) as Event));
      expect((await store.search(CONV, { order: "asc", limit: 10 })).hasMore).toBe(false);
      expect((await store.search(CONV, { order: "asc", limit: 9 })).hasMore).toBe(true);
      expect((await store.search(CONV, { order: "asc", limit: 9, after: await store.positionOf(CONV, "p0") })).hasMore).toBe(false);
    });
  });

  describe("searchJson", () => {
    it("gives search's pages as bytes at extreme instants (before 1970, past 2^53 µs), with ties, in both orders", async () => {
      // 2^53 µs is in the year 2255; past it, timestamps are integers that numbers hold only in part.
      const instants = ["1900-01-01T00:00:00.000001", "1969-12-31T23:59:59.999999", "1970-01-01T00:00:00", "2026-02-05T11:00:00.5", "2255-06-05T23:47:34.740992", "2255-06-05T23:47:34.740993", "9999-12-31T23:59:59.999999"];
      const events = Array.from({ length: 60 }, (_, i) => ({ ...template("PauseEvent"), id: `p${i}`, timestamp: instants[(i * 5) % instants.length]! }) as Event);
      for (let variant = 0; variant < variants; variant++) {
        const store = await open(variant);
        const rows = await fill(store, events, 7);
        for (const order of ["asc", "desc"] as const) {
          for (const limit of [1, 3, 7, 59, 60, 100]) expect(await pages(store, { order, limit })).toEqual(naive(rows, { order }));
          const gte = instantMicros(instants[2]!)!;
          expect(await pages(store, { order, limit: 4, timestampGte: gte })).toEqual(naive(rows, { order, timestampGte: gte }));
        }
      }
    });

    it("an empty page, a page of an unknown conversation and a page of a kind never stored are empty", async () => {
      const store = await open();
      await fill(store, Array.from({ length: 5 }, (_, i) => ({ ...template("PauseEvent"), id: `p${i}`, timestamp: iso(T0 + i) }) as Event));
      const empty = { count: 0, last: undefined, hasMore: false };
      expect({ ...(await store.searchJson(OTHER, { order: "asc", limit: 5 })), json: undefined }).toEqual({ ...empty, json: undefined });
      expect((await store.searchJson(CONV, { order: "asc", limit: 5, kind: "MessageEvent" })).json).toHaveLength(0);
      expect((await store.searchJson(CONV, { order: "desc", limit: 5, timestampLt: T0 })).count).toBe(0);
      await expect(store.searchJson(CONV, { order: "asc", limit: 101 })).rejects.toThrow(RangeError);
    });
  });

  describe("body filter", () => {
    async function bodyStore(variant = 0) {
      const store = await open(variant);
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
      const rows = await fill(store, evs, 5);
      // Another conversation with the same words must never leak in.
      await fill(store, [message("other-1", iso(T0), "the failing test"), message("other-2", iso(T0), "fix")], 5, OTHER);
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

    for (let variant = 0; variant < variants; variant++) {
      it(`is a case-insensitive substring of a message's text (store variant ${variant})`, async () => {
        const { store } = await bodyStore(variant);
        for (const [body, expected] of cases) {
          for (const order of ["asc", "desc"] as const) {
            const want = order === "asc" ? expected : [...expected].reverse();
            for (const limit of [1, 2, 100]) {
              expect(await pages(store, { order, limit, body }), JSON.stringify({ body, order, limit })).toEqual(want);
            }
          }
          expect(await store.count(CONV, { body }), body).toBe(expected.length);
        }
      });
    }

    it("excludes every other kind and combines with the other filters", async () => {
      const { store, rows } = await bodyStore();
      expect(await pages(store, { order: "asc", limit: 10, body: "failing", kind: "ActionEvent" })).toEqual([]);
      expect(await store.count(CONV, { body: "failing", kind: "ConversationErrorEvent" })).toBe(0);
      expect(await pages(store, { order: "asc", limit: 10, body: "failing", kind: "MessageEvent" })).toEqual(["m-text", "m-agent"]);
      expect(await pages(store, { order: "asc", limit: 10, body: "failing", source: "agent" })).toEqual(["m-agent"]);
      expect(await pages(store, { order: "asc", limit: 10, body: "f", source: "agent" })).toEqual(["m-agent"]);
      expect(await store.count(CONV, { body: "f", source: "user" })).toBe(naive(rows, { body: "f", source: "user" }).length);
      expect(naive(rows, { body: "f", source: "user" })).toEqual(["m-text", "m-reason", "m-quote"]);
      expect(await pages(store, { order: "asc", limit: 10, body: "failing", timestampGte: T0 + 2 })).toEqual(["m-agent"]);
      expect(await pages(store, { order: "desc", limit: 10, body: "e", timestampLt: T0 + 5 })).toEqual(naive(rows, { body: "e", timestampLt: T0 + 5, order: "desc" }));
      const after = (await store.positionOf(CONV, "m-text"))!;
      expect(await pages(store, { order: "asc", limit: 1, body: "failing", after })).toEqual(["m-agent"]);
      expect(await pages(store, { order: "desc", limit: 1, body: "failing", after })).toEqual([]);
    });

    it("serves each plan at the default thresholds: rare, frequent, and frequent-but-sparse-here", async () => {
      const store = await open();
      // 2,500 messages without the word, then 1,500 with it: > FTS_CANDIDATES candidates, and a walk
      // from the start tests 2,500 messages (within SCAN_BUDGET) before the first hit.
      const evs: Event[] = [];
      for (let i = 0; i < 4000; i++) {
        const text = i < 2500 ? `plain message ${i}` : `a frequent word ${i}`;
        evs.push(message(`m${i}`, iso(T0 + i * 10), i === 1234 ? "one rare zebra" : text));
        if (i % 4 === 0) evs.push({ ...template("PauseEvent"), id: `p${i}`, timestamp: iso(T0 + i * 10 + 5) } as Event);
      }
      const rows = await fill(store, evs, 1000);
      for (const [body, after] of [
        ["zebra", undefined],
        ["frequent", undefined],
        ["frequent", await store.positionOf(CONV, "m3000")],
        ["plain", await store.positionOf(CONV, "m2400")],
        ["e", await store.positionOf(CONV, "m100")],
      ] as const) {
        for (const order of ["asc", "desc"] as const) {
          const expected = naive(rows, { body, order });
          const start = after ? expected.indexOf(rows.find((r) => r.ts === after.ts && r.seq === after.seq)!.id) + 1 : 0;
          const page = await store.search(CONV, { order, limit: 100, body, after });
          expect(page.items.map((e) => e.id), `${body} ${order}`).toEqual(expected.slice(start, start + 100));
          expect(page.hasMore).toBe(expected.length > start + 100);
        }
      }
      expect(await store.count(CONV, { body: "frequent" })).toBe(1500);
      expect(await store.count(CONV, { body: "e" })).toBe(4000);
    });
  });
}
