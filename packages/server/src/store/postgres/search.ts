/**
 * Searches and counts of a conversation's events (see store.ts for the indexes each kind of
 * filter uses): a page is a keyset range on (ts, seq) over the index that fits the filters, or a
 * budgeted walk of the messages for a body pg_trgm cannot narrow.
 */
import type { Position, SearchFilters, SearchPage, SearchQuery, StoredEvent } from "../types.js";
import type { Queryable } from "./connection.js";
import { sameEvent } from "./event-ids.js";
import { filtersWhere, likeSubstring, orderBy, pairWhere, walked, Where } from "./search-sql.js";

/**
 * Messages that one page of a body search pg_trgm cannot narrow (a body with no run of 3 letters or
 * digits: 1–2 characters, punctuation) tests, walking the conversation's messages in the page's
 * order: the page ends at `limit + 1` hits or after this many messages, short (possibly empty) with
 * a cursor that resumes the walk (SearchPage.resumeAfter), as the SQLite store's walk does. So a
 * page costs at most this many index entries and rows, whatever the conversation's size (unbounded,
 * a sparse 2-character term scans every message: 151 ms at 1M events). 500 messages: well under a
 * millisecond of the walk on top of the page's round trip (1,000 measured 1.9 ms a page at 1M
 * events against 0.8 ms for a whole 10k-event conversation, 253 messages: a ratio of 2.5 where the
 * benchmark asks for 2). A sparse term costs more round trips instead: a page per 500 messages.
 */
export const BODY_SCAN_BUDGET = 500;

/** A page (its paging arguments checked): keyset on (ts, seq) over the index that fits the filters, or the budgeted walk of at most `bodyScanBudget` messages (see BODY_SCAN_BUDGET). */
export async function searchPage(db: Queryable, conversationId: string, query: SearchQuery, bodyScanBudget: number): Promise<SearchPage> {
  const where = filtersWhere(conversationId, query, true);
  if (!where) return { items: [], hasMore: false };
  const { after, order, limit } = query;
  if (after) where.add(order === "asc" ? "(ts, seq) > (?, ?)" : "(ts, seq) < (?, ?)", after.ts, after.seq);
  const by = orderBy(order);
  if (query.body === undefined && (query.kind !== undefined || query.source !== undefined)) {
    const page = await kindSourcePage(db, conversationId, query);
    if (page) return page; // else two pairs share a hash: the filters on the rows themselves, below
  }
  if (query.body !== undefined && walked(query.body)) {
    // The messages' texts in order (message_texts_time), at most bodyScanBudget of them (the inner
    // LIMIT), each tested; the outer LIMIT stops the walk at limit + 1 hits. The budget's last
    // message comes back too, hit or not: where a short page's cursor resumes. Only the hits'
    // events rows are read.
    const pattern = where.values.push(likeSubstring(query.body.toLowerCase()));
    const budget = where.values.push(bodyScanBudget);
    const want = where.values.push(limit + 2);
    const { rows } = await db.query<StoredEvent & { hit: boolean; n: number }>(
      `select e.id, e.json, w.ts, w.seq, w.hit, w.n from (
         select conv, ts, seq, hit, n from (
           select conv, ts, seq, body like $${pattern} as hit, row_number() over (${by}) as n
           from message_texts where ${where.text} ${by} limit $${budget}
         ) walk where hit or n = $${budget} limit $${want}
       ) w left join lateral (select id, json from events where conv = w.conv and seq = w.seq and w.hit) e on true order by w.n`,
      where.values,
    );
    const items: StoredEvent[] = [];
    let resumeAfter: Position | undefined;
    for (const row of rows) {
      if (row.hit) items.push({ id: row.id, json: row.json, ts: row.ts, seq: row.seq });
      if (items.length > limit) break;
      if (row.n === bodyScanBudget) resumeAfter = { ts: row.ts, seq: row.seq };
    }
    if (items.length > limit) return { items: items.slice(0, limit), hasMore: true };
    return resumeAfter ? { items, hasMore: true, resumeAfter } : { items, hasMore: false };
  }
  where.values.push(limit + 1);
  const { rows } = await db.query<StoredEvent>(
    query.body === undefined
      ? `select id, json, ts, seq from events where ${where.text} ${by} limit $${where.values.length}`
      : // The page's messages from their texts (walking message_texts_time, or the trigram index's
        // matches sorted), then only their own events rows, by primary key.
        `select e.id, e.json, m.ts, m.seq from (select conv, ts, seq from message_texts where ${where.text} ${by} limit $${where.values.length}) m
         cross join lateral (select id, json from events where conv = m.conv and seq = m.seq) e ${orderBy(order, "m.")}`,
    where.values,
  );
  const hasMore = rows.length > limit;
  return { items: hasMore ? rows.slice(0, limit) : rows, hasMore };
}

/**
 * A page of a kind and/or a source without a body (migration 9): for each (kind, source) pair of
 * the conversation that matches (its event_counts rows, read in the same statement, so in the same
 * snapshot as the events), the first limit + 1 rows after the cursor on events_kind_source_time in
 * the page's order; the page is the first limit + 1 of them all. So a page reads at most (matching
 * pairs) × (limit + 1) index entries and rows, whatever the conversation's size: one pair for most
 * kinds, up to one per kind for a source (9 of the bench's 20 pairs for "environment"). PostgreSQL
 * 15 merges no ordered UNION ALL of index scans (it sorts their whole output) and no ordered
 * `= ANY` over an index column, hence the per-pair LIMIT. The branches select by the hash alone:
 * with `kind = … and source = …` as well the planner multiplies the three selectivities, expects
 * a handful of rows and sorts a bitmap scan of the whole pair (0.7 s for 300k rows). A hash shared
 * by two pairs shows here as a row of another pair, or one row twice: undefined, and page reads
 * the rows' own columns instead.
 */
async function kindSourcePage(db: Queryable, conversationId: string, query: SearchQuery): Promise<SearchPage | undefined> {
  const { after, order, limit, kind, source } = query;
  const { values, branch, pairs } = pairWhere(conversationId, query, "");
  if (after) branch.add(order === "asc" ? "(ts, seq) > (?, ?)" : "(ts, seq) < (?, ?)", after.ts, after.seq);
  const want = values.push(limit + 1);
  const { rows } = await db.query<StoredEvent & { kind: string; source: string }>(
    `select e.id, e.json, e.ts, e.seq, e.kind, e.source from event_counts c
     cross join lateral (select id, json, ts, seq, kind, source from events where ${branch.text} ${orderBy(order)} limit $${want}) e
     where ${pairs.text} ${orderBy(order, "e.")} limit $${want}`,
    values,
  );
  const items: StoredEvent[] = [];
  for (const row of rows) {
    if ((kind !== undefined && row.kind !== kind) || (source !== undefined && row.source !== source) || items.at(-1)?.seq === row.seq) return undefined;
    items.push({ id: row.id, json: row.json, ts: row.ts, seq: row.seq });
  }
  const hasMore = items.length > limit;
  return { items: hasMore ? items.slice(0, limit) : items, hasMore };
}

/** How many events match `filters` (see store.ts for what each kind of filter costs). */
export async function countEvents(db: Queryable, conversationId: string, filters: SearchFilters): Promise<number> {
  if (filters.body === undefined && filters.timestampGte === undefined && filters.timestampLt === undefined) {
    // The counters: a handful of rows per conversation, whatever its size.
    const where = new Where([]).add("conv = (select pk from conversations where id = ?)", conversationId);
    if (filters.kind !== undefined) where.add("kind = ?", filters.kind);
    if (filters.source !== undefined) where.add("source = ?", filters.source);
    const { rows: [row] } = await db.query<{ n: number }>(`select coalesce(sum(n), 0)::bigint as n from event_counts where ${where.text}`, where.values);
    return row!.n;
  }
  if (filters.body === undefined && (filters.kind !== undefined || filters.source !== undefined)) {
    // A time range with a kind or a source: per matching pair (as kindSourcePage), the rows of its
    // range on events_kind_source_time, the pair's own columns checked (a shared hash counts once).
    const { values, branch, pairs } = pairWhere(conversationId, filters, " and kind = c.kind and source = c.source");
    const { rows: [row] } = await db.query<{ n: number }>(
      `select coalesce(sum(e.n), 0)::bigint as n from event_counts c cross join lateral (select count(*) as n from events where ${branch.text}) e where ${pairs.text}`,
      values,
    );
    return row!.n;
  }
  if (filters.body === undefined && filters.kind === undefined && filters.source === undefined) {
    // A time range alone: where the conversation's timestamps never go back (ts_ordered), the
    // events with ts ≥ t are the seqs from the first such event's on, so the count is the
    // difference of two seqs, each an index probe: O(log n), whatever the range holds.
    const { rows: [row] } = await db.query<{ ordered: boolean; next_seq: number; lo: number | null; hi: number | null }>(
      `select c.ts_ordered as ordered, c.next_seq,
         (select seq from events where conv = c.pk and ts >= $2 order by ts, seq limit 1) as lo,
         (select seq from events where conv = c.pk and ts >= $3 order by ts, seq limit 1) as hi
       from conversations c where c.id = $1`,
      [conversationId, filters.timestampGte ?? null, filters.timestampLt ?? null],
    );
    if (!row) return 0;
    if (row.ordered) {
      const lo = filters.timestampGte === undefined ? 1 : (row.lo ?? row.next_seq);
      const hi = filters.timestampLt === undefined ? row.next_seq : (row.hi ?? row.next_seq);
      return Math.max(0, hi - lo);
    }
    // Out of order (an import or append with earlier timestamps): the rows of the range, counted.
  }
  const where = filtersWhere(conversationId, filters);
  if (!where) return 0;
  const { rows: [row] } = await db.query<{ n: number }>(`select count(*) as n from ${filters.body === undefined ? "events" : "message_texts"} where ${where.text}`, where.values);
  return row!.n;
}

/** Where the event `eventId` is in its conversation, or undefined when the conversation has none. */
export async function eventPosition(db: Queryable, conversationId: string, eventId: string): Promise<Position | undefined> {
  const {
    rows: [row],
  } = await db.query<Position>(
    `select e.ts, e.seq from conversations c cross join lateral (select ts, seq from events e where ${sameEvent("c.pk", "$2::text")} limit 1) e where c.id = $1`,
    [conversationId, eventId],
  );
  return row && { ts: row.ts, seq: row.seq };
}

/** Up to `limit` events after `afterSeq`, in append order. */
export async function eventsAfter(db: Queryable, conversationId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
  const n = Math.max(0, Math.floor(limit));
  if (n === 0) return [];
  const { rows } = await db.query<StoredEvent>("select id, json, ts, seq from events where conv = (select pk from conversations where id = $1) and seq > $2 order by seq limit $3", [
    conversationId,
    Math.max(0, Math.floor(afterSeq)),
    n,
  ]);
  return rows;
}
