/**
 * The SQL of an append: the one-statement append of a few events (PostgresEventStore.appendInOneStatement),
 * plain and with events stamped at recording, and a chunk of a batch's INSERT … SELECT FROM unnest(…).
 */
import { unnestRows, unpackedTexts } from "./batch-rows.js";
import { sameEvent } from "./event-ids.js";

/**
 * Most rows an append writes in one statement (appendInOneStatement, below copyMinRows: or a
 * stamped batch up to this size), and rows per COPY. Both check the batch's ids under the
 * conversation's row lock first (there is no unique index on them, see event-ids.ts): the
 * statement in itself, the COPY's transaction with takenIds.
 */
export const ONE_STATEMENT_ROWS = 10_000;

/**
 * The one-statement append's head (both forms): `locked`, the conversation's row under FOR UPDATE;
 * `fresh`, whether no append committed between this statement's snapshot and that lock; `conv`,
 * the locked row when it is fresh and none of the batch's ids ($3) is stored in the conversation.
 */
const LOCKED_UNTAKEN = `with locked as (select pk, next_seq, last_ts from conversations where id = $1 for update),
         fresh as (select locked.next_seq = (select next_seq from conversations where id = $1) as fresh from locked),
         conv as (
           select locked.* from locked, fresh
           where fresh.fresh
             and not exists (select from unnest($3::text[]) as t(id) cross join lateral (select from events e where ${sameEvent("locked.pk", "t.id")} limit 1) taken)
         ),`;

/** The counters' upsert of appendInOneStatement ($8–$10: kind, source, n). */
const COUNTED = `insert into event_counts (conv, kind, source, n)
           select conv.pk, kind, source, n from conv, unnest($8::text[], $9::text[], $10::bigint[]) as t(kind, source, n)
           on conflict (conv, kind, source) do update set n = event_counts.n + excluded.n`;

/**
 * The one-statement append of events none of which is stamped at recording. Parameters: $1 the
 * conversation's id; $2–$7 the rows (unnestRows) and $15–$16 their texts (packRows' bytes and
 * offsets); $8–$10 the counters (COUNTED); $11 the row count, $12 the time of the write; $13 the
 * notification channel and $14 its payload's prefix; $17–$19 the rows' time order (RowTally:
 * ordered, first, last).
 */
export const APPEND_SQL = `${LOCKED_UNTAKEN}
     src as (select t.*, ${unpackedTexts(15, 16)} from ${unnestRows(2)}),
     inserted as (
       insert into events (conv, seq, ts, id, kind, source, json)
       select conv.pk, conv.next_seq + o - 1, ts, id, kind, source, json from conv, src
     ),
     texts as (
       insert into message_texts (conv, seq, ts, source, body)
       select conv.pk, conv.next_seq + o - 1, ts, source, body from conv, src where body is not null
     ),
     counted as (${COUNTED}),
     moved as (
       update conversations set next_seq = next_seq + $11, event_count = event_count + $11, updated_at = $12,
         ts_ordered = ts_ordered and $17 and coalesce(last_ts <= $18, true), last_ts = greatest(last_ts, $19)
       where pk = (select pk from conv)
     )
     select locked.next_seq as first, conv.pk is not null as ok, fresh.fresh, null::bigint[] as moved_o, null::bigint[] as moved_ts, null::text[] as moved_json,
       case when conv.pk is not null then pg_notify($13, $14 || conv.next_seq || ':' || (conv.next_seq + $11 - 1)) end
     from locked cross join fresh left join conv on true`;

/**
 * The one-statement append with events stamped at recording: APPEND_SQL's $1–$16, then $17–$18 per
 * row its Stamp's pre and post (null: not stamped). nts: a stamped row's timestamp moved up to the
 * latest before it (the conversation's, then the batch's own rows'); others keep theirs. The order
 * kept in conversations.ts_ordered is the moved rows'. The conversation's latest is its row's
 * last_ts, read under the row lock (a row updated by the append we waited for is re-read at its
 * new version), and a moved row's JSON is `pre || its new timestamp || post`.
 *
 * In one statement, not a transaction: that takes five round trips (begin, lock, read the latest
 * ts, insert, commit) holding the conversation's row across four turns of this process's event
 * loop; with two busy instances appending to one conversation (1,000 live subscribers at 100
 * events/s), each append waits for the other's event loop and they queue (p50 7–11 s, 12–28%
 * refused).
 */
export const APPEND_STAMPED_SQL = `${LOCKED_UNTAKEN}
     src as (
       select t.*, ${unpackedTexts(15, 16)}
       from unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $17::text[], $18::text[]) with ordinality as t(ts, id, kind, source, bl, jl, pre, post, o)
     ),
     stamped as (
       select src.*, case when pre is null then ts else greatest(ts, conv.last_ts, max(ts) over (order by o)) end as nts from conv, src
     ),
     rows as (
       select o, nts, id, kind, source, body,
         case when nts > ts then pre || to_char(timestamp 'epoch' + nts * interval '1 microsecond', 'YYYY-MM-DD"T"HH24:MI:SS.US') || post else json end as json,
         nts > ts as was_moved, nts >= coalesce(lag(nts) over (order by o), nts) as in_order
       from stamped
     ),
     inserted as (
       insert into events (conv, seq, ts, id, kind, source, json)
       select conv.pk, conv.next_seq + o - 1, nts, id, kind, source, json from conv, rows
     ),
     texts as (
       insert into message_texts (conv, seq, ts, source, body)
       select conv.pk, conv.next_seq + o - 1, nts, source, body from conv, rows where body is not null
     ),
     counted as (${COUNTED}),
     batch as (
       select bool_and(in_order) as ordered, (array_agg(nts order by o))[1] as first_ts, max(nts) as last_ts,
         array_agg(o order by o) filter (where was_moved) as moved_o,
         array_agg(nts order by o) filter (where was_moved) as moved_ts,
         array_agg(json order by o) filter (where was_moved) as moved_json
       from rows
     ),
     moved as (
       update conversations set next_seq = next_seq + $11, event_count = event_count + $11, updated_at = $12,
         ts_ordered = ts_ordered and batch.ordered and coalesce(conversations.last_ts <= batch.first_ts, true),
         last_ts = greatest(conversations.last_ts, batch.last_ts)
       from batch where pk = (select pk from conv)
     )
     select locked.next_seq as first, conv.pk is not null as ok, fresh.fresh, moved_o, moved_ts, moved_json,
       case when conv.pk is not null then pg_notify($13, $14 || conv.next_seq || ':' || (conv.next_seq + $11 - 1)) end
     from locked cross join fresh left join conv on true, batch`;

/** A chunk of a batch's rows inserted into events and message_texts: $1 the conversation, $2 the chunk's first seq, $3–$8 its rows (unnestRows), $9–$10 their texts (packRows). */
export const INSERT_ROWS_SQL = `with src as (select t.*, ${unpackedTexts(9, 10)} from ${unnestRows(3)}),
       inserted as (insert into events (conv, seq, ts, id, kind, source, json) select $1, $2::bigint + o - 1, ts, id, kind, source, json from src)
     insert into message_texts (conv, seq, ts, source, body) select $1, $2::bigint + o - 1, ts, source, body from src where body is not null`;

/** What a batch's rows add to the counters: $1 the conversation, $2–$4 per (kind, source) pair its count (RowTally.counters). */
export const RECORD_COUNTS_SQL = `insert into event_counts (conv, kind, source, n)
     select $1, kind, source, n from unnest($2::text[], $3::text[], $4::bigint[]) as t(kind, source, n)
     on conflict (conv, kind, source) do update set n = event_counts.n + excluded.n`;

/** What a batch's rows move in their conversation's row: $1 the conversation, $2 the row count, $3 the time of the write, $4–$6 the rows' time order (RowTally: ordered, first, last). */
export const RECORD_CONVERSATION_SQL = `update conversations set next_seq = next_seq + $2, event_count = event_count + $2, updated_at = $3,
       ts_ordered = ts_ordered and $4 and coalesce(last_ts <= $5, true), last_ts = greatest(last_ts, $6) where pk = $1`;
