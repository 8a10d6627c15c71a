/**
 * searchEvents: filters one by one and combined, both orders, paging invariants, `limit` bounds.
 * Expected answers are computed from the events the run created (see data.ts).
 */
import { ensure, expectSameIds, fail, type Check } from "../check.js";
import type { CheckContext } from "../context.js";
import { BODY_WORD, filteredIds, freshTrajectory, instantMicros, timestampText, type AnyEvent, type SearchFilters } from "../data.js";
import { expectHolds, expectMonotone, expectNoDuplicate } from "../listing.js";

type Query = SearchFilters & { sort_order?: "TIMESTAMP" | "TIMESTAMP_DESC"; limit?: number };

const ids = (events: ReadonlyArray<{ id: string }>) => events.map((e) => e.id);

/** Timestamp text `seconds` after the main trajectory's first instant, in a given form. */
function mainInstant(ctxEvents: ReadonlyArray<{ timestamp: string }>, seconds: number, form: Parameters<typeof timestampText>[1]): string {
  return timestampText(instantMicros(ctxEvents[0]!.timestamp) + seconds * 1_000_000, form);
}

/**
 * Searches the main conversation with each query (all pages) and compares with the answer computed
 * from the conversation's own listing (the events the suite sent, and any the implementation added).
 */
async function expectSearches(ctx: CheckContext, queries: (events: ReadonlyArray<{ timestamp: string }>) => Query[]): Promise<string> {
  const { id, events, listed } = await ctx.main();
  const counts: number[] = [];
  for (const query of queries(events)) {
    const expected = filteredIds(listed, query, query.sort_order);
    const received = ids(await ctx.searchAll(id, { limit: 100, ...query }));
    expectSameIds(received, expected, `search ${JSON.stringify(query)}`);
    counts.push(expected.length);
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
      const { id, events, listed } = await ctx.shuffled();
      expectHolds(listed, events, "search without sort_order");
      expectSameIds(ids(await ctx.searchAll(id, { sort_order: "TIMESTAMP", limit: 9 })), ids(listed), "search with sort_order TIMESTAMP, limit 9");
    },
  },
  {
    id: "search.order.desc",
    title: "TIMESTAMP_DESC is the exact reverse of TIMESTAMP, ties included",
    spec: "searchEvents sort_order",
    async run(ctx) {
      const { id, listed } = await ctx.shuffled();
      const expected = ids(listed).reverse();
      expectSameIds(ids(await ctx.searchAll(id, { sort_order: "TIMESTAMP_DESC" })), expected, "search with sort_order TIMESTAMP_DESC");
      expectSameIds(ids(await ctx.searchAll(id, { sort_order: "TIMESTAMP_DESC", limit: 9 })), expected, "search with sort_order TIMESTAMP_DESC, limit 9");
    },
  },
  {
    id: "paging.complete",
    title: "following next_page_id lists every event once: no duplicate, no gap, null exactly at the end",
    spec: "searchEvents page_id / next_page_id",
    async run(ctx) {
      const { id, events, listed } = await ctx.main();
      for (const sort_order of ["TIMESTAMP", "TIMESTAMP_DESC"] as const) {
        for (const limit of [1, 7, 10, 100]) {
          const received = await ctx.searchAll(id, { limit, sort_order });
          const what = `paging with limit ${limit}, ${sort_order}`;
          if (sort_order === "TIMESTAMP") expectHolds(received, events, what);
          expectSameIds(ids(received), filteredIds(listed, {}, sort_order), what);
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
        const { id, events } = await ctx.seedAndSettle(freshTrajectory(30));
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
