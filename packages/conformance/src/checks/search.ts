/**
 * searchEvents: filters one by one and combined, both orders, paging invariants, `limit` bounds.
 * Expected answers are computed from the events the run created (see data.ts).
 */
import type { operations } from "@acs-toolkit/schema";
import { ensure, expectSameIds, fail, type Check } from "../check.js";
import type { CheckContext } from "../context.js";
import { BODY_WORD, freshTrajectory, instantMicros, timestampText, type AnyEvent } from "../data.js";
import { expectHolds, expectMonotone, expectNoDuplicate, expectSearchBetween } from "../listing.js";

/** A searchEvents query of the checks (paging is theirs: no page_id). */
type Query = Omit<NonNullable<operations["searchEvents"]["parameters"]["query"]>, "page_id">;

const ids = (events: ReadonlyArray<{ id: string }>) => events.map((e) => e.id);

/** Timestamp text `seconds` after the main trajectory's first instant, in a given form. */
function mainInstant(ctxEvents: ReadonlyArray<{ timestamp: string }>, seconds: number, form: Parameters<typeof timestampText>[1]): string {
  return timestampText(instantMicros(ctxEvents[0]!.timestamp) + seconds * 1_000_000, form);
}

/**
 * Searches the main conversation with each query (all pages) and compares with the answer computed
 * from the conversation's own listings around the search (the events the suite sent, and any the
 * implementation recorded, before or during the search).
 */
async function expectSearches(ctx: CheckContext, queries: (events: ReadonlyArray<{ timestamp: string }>) => Query[]): Promise<string> {
  const { id, events } = await ctx.main();
  const counts: number[] = [];
  for (const query of queries(events)) {
    const { before, result, after } = await ctx.between(id, () => ctx.searchAll(id, { limit: 100, ...query }));
    expectSearchBetween(result, before, after, query, query.sort_order ?? "TIMESTAMP", `search ${JSON.stringify(query)}`);
    counts.push(result.length);
  }
  return `${counts.length} searches, ${counts.join("/")} events`;
}

export const searchChecks: Check[] = [
  {
    id: "search.page",
    title: "a page is an EventPage: items valid events, next_page_id a string while more remain",
    spec: "searchEvents 200 (EventPage)",
    async run(ctx) {
      const { id } = await ctx.main();
      const page = await ctx.searchPage(id, { limit: 10 });
      ensure(page.items.length === 10, `limit 10 gave ${page.items.length} events`);
      ensure(typeof page.next_page_id === "string" && page.next_page_id.length > 0, `no next_page_id although 100 more events remain: ${JSON.stringify(page.next_page_id)}`);
    },
  },
  {
    id: "search.filter.kind",
    title: "kind keeps the events of that kind",
    spec: "searchEvents kind",
    run: (ctx) => expectSearches(ctx, () => [{ kind: "ActionEvent" }, { kind: "PauseEvent" }, { kind: "CondensationSummaryEvent" }, { kind: "MessageEvent" }]),
  },
  {
    id: "search.filter.kind-qualified",
    title: "kind also takes the fully qualified Python path",
    spec: "searchEvents kind (KindFilter)",
    run: (ctx) =>
      expectSearches(ctx, () => [{ kind: "openhands.sdk.event.llm_convertible.action.ActionEvent" }, { kind: "openhands.sdk.event.llm_convertible.message.MessageEvent" }]),
  },
  {
    id: "search.filter.kind-unstored",
    title: "a well-formed kind that no event has (a later release's, short or fully qualified) gives an empty page, not a 422",
    spec: "searchEvents kind (KindFilter)",
    async run(ctx) {
      const { id } = await ctx.main();
      for (const kind of ["AcsConformanceLaterEvent", "openhands.sdk.event.acs_conformance.AcsConformanceLaterEvent"]) {
        const page = await ctx.searchPage(id, { kind });
        ensure(page.items.length === 0 && !page.next_page_id, `search kind=${kind}: expected an empty page, got ${page.items.length} events and next_page_id ${JSON.stringify(page.next_page_id)}`);
      }
    },
  },
  {
    id: "search.filter.source",
    title: "source keeps the events from that source (an event without one has its kind's default)",
    spec: "searchEvents source; Event source defaults",
    run: (ctx) => expectSearches(ctx, () => [{ source: "agent" }, { source: "user" }, { source: "environment" }]),
  },
  {
    id: "search.filter.body",
    title: "body keeps MessageEvents whose text, extended content or reasoning contains it, any case",
    spec: "searchEvents body (BodyFilter)",
    run: (ctx) => expectSearches(ctx, () => [{ body: "zEpHyR" }, { body: BODY_WORD.toUpperCase() + " module" }, { body: "not-in-any-message" }]),
  },
  {
    id: "search.filter.timestamp-gte",
    title: "timestamp__gte keeps events at or after the instant (offsets honoured, none means UTC)",
    spec: "searchEvents timestamp__gte",
    run: (ctx) =>
      expectSearches(ctx, (events) => [
        { timestamp__gte: events[40]!.timestamp },
        { timestamp__gte: mainInstant(events, 20, "Z") },
        { timestamp__gte: mainInstant(events, 33.5, "+01:00") },
        { timestamp__gte: mainInstant(events, 47, "-02:00") },
      ]),
  },
  {
    id: "search.filter.timestamp-lt",
    title: "timestamp__lt keeps events before the instant (offsets honoured, none means UTC)",
    spec: "searchEvents timestamp__lt",
    run: (ctx) =>
      expectSearches(ctx, (events) => [
        { timestamp__lt: events[40]!.timestamp },
        { timestamp__lt: mainInstant(events, 20, "none") },
        { timestamp__lt: mainInstant(events, 33.5, "+01:00") },
      ]),
  },
  {
    id: "search.filter.timestamp-forms",
    title: "timestamp filters take every form the agent server accepts: space or t separator, comma fraction, no seconds, a date alone, +hhmm, epoch seconds and milliseconds",
    spec: "searchEvents timestamp__gte, timestamp__lt (TimestampQuery)",
    run: (ctx) =>
      expectSearches(ctx, (events) => {
        const iso = mainInstant(events, 20, "Z"); // …T10:00:20.123456Z
        const seconds = (instantMicros(iso) - 123_456) / 1_000_000;
        return [
          { timestamp__gte: iso.slice(0, -1).replace("T", " ") },
          { timestamp__gte: iso.slice(0, -1).replace("T", "t").replace(".", ",") },
          { timestamp__lt: iso.slice(0, 16) },
          { timestamp__gte: iso.slice(0, 10) },
          { timestamp__gte: mainInstant(events, 33.5, "+01:00").replace(/:(\d\d)$/, "$1") },
          { timestamp__gte: String(seconds) },
          { timestamp__lt: `${seconds}.5` },
          { timestamp__gte: String((seconds + 7) * 1000) },
        ];
      }),
  },
  {
    id: "search.filter.combined",
    title: "filters combine (all must hold), in both orders",
    spec: "searchEvents",
    run: (ctx) =>
      expectSearches(ctx, (events) => [
        { kind: "ActionEvent", source: "agent" },
        { body: BODY_WORD, source: "user" },
        { kind: "ObservationEvent", timestamp__gte: mainInstant(events, 10, "Z"), timestamp__lt: mainInstant(events, 40, "none") },
        { source: "environment", timestamp__gte: mainInstant(events, 5, "none"), sort_order: "TIMESTAMP_DESC" },
        { kind: "MessageEvent", body: BODY_WORD, timestamp__lt: mainInstant(events, 50, "Z"), sort_order: "TIMESTAMP_DESC" },
        { kind: "TokenEvent", source: "user" },
      ]),
  },
  {
    id: "search.order.asc",
    title: "default order (and TIMESTAMP) is by instant, then append order",
    spec: "searchEvents sort_order",
    async run(ctx) {
      const { id, events } = await ctx.shuffled();
      expectHolds(await ctx.listing(id), events, "search without sort_order");
      const { before, result, after } = await ctx.between(id, () => ctx.searchAll(id, { sort_order: "TIMESTAMP", limit: 9 }));
      expectSearchBetween(result, before, after, {}, "TIMESTAMP", "search with sort_order TIMESTAMP, limit 9");
    },
  },
  {
    id: "search.order.desc",
    title: "TIMESTAMP_DESC is the exact reverse of TIMESTAMP, ties included",
    spec: "searchEvents sort_order",
    async run(ctx) {
      const { id } = await ctx.shuffled();
      for (const limit of [100, 9]) {
        const { before, result, after } = await ctx.between(id, () => ctx.searchAll(id, { sort_order: "TIMESTAMP_DESC", limit }));
        expectSearchBetween(result, before, after, {}, "TIMESTAMP_DESC", `search with sort_order TIMESTAMP_DESC, limit ${limit}`);
      }
    },
  },
  {
    id: "paging.complete",
    title: "following next_page_id lists every event once: no duplicate, no gap, null exactly at the end",
    spec: "searchEvents page_id / next_page_id",
    async run(ctx) {
      const { id, events } = await ctx.main();
      for (const sort_order of ["TIMESTAMP", "TIMESTAMP_DESC"] as const) {
        for (const limit of [1, 7, 10, 100]) {
          const { before, result, after } = await ctx.between(id, () => ctx.searchAll(id, { limit, sort_order }));
          const what = `paging with limit ${limit}, ${sort_order}`;
          if (sort_order === "TIMESTAMP") expectHolds(result, events, what);
          expectSearchBetween(result, before, after, {}, sort_order, what);
        }
      }
    },
  },
  {
    id: "paging.filtered",
    title: "paging through a filtered search lists exactly the matches",
    spec: "searchEvents page_id",
    run: (ctx) =>
      expectSearches(ctx, (events) => [
        { kind: "ActionEvent", limit: 5 },
        { kind: "ActionEvent", limit: 5, sort_order: "TIMESTAMP_DESC" },
        { source: "environment", timestamp__gte: mainInstant(events, 3, "none"), limit: 4 },
        { body: BODY_WORD, limit: 1, sort_order: "TIMESTAMP_DESC" },
      ]),
  },
  {
    id: "paging.page-id-event",
    title: "page_id may be an event id: the page starts at that event (inclusive) in the chosen order, as the agent server reads it",
    spec: "searchEvents page_id",
    async run(ctx) {
      const { id, events } = await ctx.main();
      const at = 37;
      const asc = await ctx.searchPage(id, { page_id: events[at]!.id, limit: 5 });
      expectSameIds(ids(asc.items), ids(events.slice(at, at + 5)), `page_id=${events[at]!.id} (event ${at}), limit 5`);
      ensure(typeof asc.next_page_id === "string", "no next_page_id after a page started at an event id, with more events left");
      const next = await ctx.searchPage(id, { page_id: asc.next_page_id, limit: 5 });
      expectSameIds(ids(next.items), ids(events.slice(at + 5, at + 10)), "the page after it");
      const desc = await ctx.searchPage(id, { page_id: events[at]!.id, limit: 5, sort_order: "TIMESTAMP_DESC" });
      expectSameIds(ids(desc.items), ids(events.slice(at - 4, at + 1)).reverse(), `page_id=${events[at]!.id} (event ${at}), limit 5, TIMESTAMP_DESC`);
    },
  },
  {
    id: "paging.cursor-reuse",
    title: "a next_page_id can be used again and gives the same page",
    spec: "searchEvents page_id",
    async run(ctx) {
      const { id } = await ctx.main();
      const first = await ctx.searchPage(id, { limit: 10 });
      const cursor = first.next_page_id ?? fail("no next_page_id on the first of eleven pages");
      const again = ids((await ctx.searchPage(id, { limit: 10, page_id: cursor })).items);
      const once = ids((await ctx.searchPage(id, { limit: 10, page_id: cursor })).items);
      expectSameIds(again, once, "the same page_id asked twice");
    },
  },
  {
    id: "paging.concurrent-append",
    title: "a cursor stays valid while events are appended: no duplicate, no gap, new events after the old",
    spec: "searchEvents page_id (cursor stability)",
    needs: ["append"],
    async run(ctx) {
      for (const sort_order of ["TIMESTAMP", "TIMESTAMP_DESC"] as const) {
        const { id, events } = await ctx.seed(freshTrajectory(30));
        const appended: string[] = [];
        const received: AnyEvent[] = [];
        let pageId: string | null | undefined;
        let pages = 0;
        do {
          const page = await ctx.searchPage(id, { limit: 7, sort_order, page_id: pageId ?? undefined });
          received.push(...page.items);
          pageId = page.next_page_id;
          if (++pages <= 3) appended.push((await ctx.append(id, `appended while paging ${pages}`)).id);
          if (pages > 100) fail(`${sort_order}: still a next_page_id after 100 pages`);
        } while (pageId);
        const what = `${sort_order} paging with 3 appends between pages`;
        expectNoDuplicate(ids(received), what);
        expectMonotone(received, sort_order, what);
        // Appended events are newer than every replayed one: listed after them ascending, and before
        // the cursor (so not at all) descending. Events an agent records in reply may come too.
        const original = ids(events);
        const known = new Set([...original, ...appended]);
        const listedKnown = ids(received).filter((id) => known.has(id));
        expectSameIds(listedKnown, sort_order === "TIMESTAMP" ? [...original, ...appended] : [...original].reverse(), what);
      }
    },
  },
  {
    id: "limit.default",
    title: "without limit a page holds 100 events",
    spec: "searchEvents limit (default 100)",
    async run(ctx) {
      const { id } = await ctx.main();
      const page = await ctx.searchPage(id);
      ensure(page.items.length === 100, `a page without limit holds ${page.items.length} events of at least 110`);
      ensure(page.next_page_id, "no next_page_id after 100 of 110 events");
    },
  },
  {
    id: "limit.bounds",
    title: "limit 1 and limit 100 (the bounds) are honoured exactly",
    spec: "searchEvents limit (1..100)",
    async run(ctx) {
      const { id } = await ctx.main();
      for (const limit of [1, 100]) {
        const page = await ctx.searchPage(id, { limit });
        ensure(page.items.length === limit, `limit ${limit} gave ${page.items.length} events`);
        ensure(page.next_page_id, `limit ${limit}: no next_page_id with ${110 - limit} or more events left`);
      }
    },
  },
];
