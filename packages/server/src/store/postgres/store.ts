/**
 * The EventStore contract (../types.ts) on PostgreSQL, through `pg` (node-postgres): the most used
 * client, maintained with its pool, protocol and type packages by one author; a connection that dies
 * (a database restart) fails its query with an error the pool recovers from. (`postgres` 3.4.9 was
 * tried first: a backend terminated mid-write throws an uncatchable TypeError from a setImmediate
 * and ends the process — porsager/postgres#1154, #1208, fixes unmerged; the store's restart test
 * reproduced it.) Every value is a query parameter; only the schema name is quoted into SQL.
 *
 * Same semantics as the SQLite store (the contract suite runs on both):
 * - order: (ts, seq) per conversation; seq is taken from the conversation row under FOR UPDATE in
 *   the append's transaction, so appends from several instances are serialized by the database;
 * - event ids: unique per conversation, checked by every write under that row lock (takenIds, or
 *   the one-statement append's own check), through a hash index on the id's hash seeded by the
 *   conversation (migration 6), not by a unique index; a taken id is a DuplicateEventIdError;
 * - body: a LIKE on the messages' lower-cased searchable texts (`%`, `_` and `\` escaped), kept in a
 *   narrow table of their own (message_texts: conv, seq, ts, source, body; migration 10), indexed by
 *   a pg_trgm GIN index, or answered by walking the texts in order (message_texts_time) where the
 *   planner expects that to fill the page sooner (a frequent term); only the page's own events
 *   rows are read, by primary key;
 *   a body it cannot index, 1–2 characters, always walks, at most BODY_SCAN_BUDGET messages a
 *   page. The text is lower-cased in JavaScript, as the other stores do, so that case folding is
 *   the toolkit's, not the database collation's;
 * - counts: no filter, kind, source and kind+source add up the per-conversation counters that the
 *   append keeps in its transaction (a few rows, never a scan). A time range alone, in a conversation
 *   whose timestamps never go back in seq order (conversations.ts_ordered, kept by the append), is
 *   the difference of two seqs found by two probes of the time index (O(log n)). Body counts and
 *   time ranges with kind/source (or out of order) use the indexes (GIN bitmap, a range of the
 *   time index or of the kind/source index per pair), O(the rows they count); they are bounded by
 *   the statement timeout: one that runs past it fails with StoreUnavailableError (503), it never
 *   holds a request;
 * - kind and source: one index on (conv, a hash of the pair, ts, seq), walked once per matching
 *   pair of the conversation (kindSourcePage, migration 9).
 */
import { once } from "node:events";
import { finished } from "node:stream/promises";
import type { Writable } from "node:stream";
import type pg from "pg";
import type { from as CopyFrom } from "pg-copy-streams";
import type { ConversationLifecycleStatus } from "@acs-toolkit/schema";
import { prepareEvent, searchTextOf, type PreparedEvent, type RowBatch } from "../prepare.js";
import { decodeRows } from "../row-batch.js";
import {
  type AppendedBatch,
  type BatchStream,
  ConversationExistsError,
  ConversationNotFoundError,
  DuplicateEventIdError,
  StoreUnavailableError,
  type ConversationRecord,
  type EventStore,
  type EventToStore,
  type ImportHandle,
  type JsonPage,
  type NewConversation,
  type Position,
  type SearchFilters,
  type SearchPage,
  type SearchQuery,
  type StoredEvent,
} from "../types.js";
import { timestampOfMicros } from "../time.js";
import { migratePostgres, quoteIdent } from "./migrations.js";

const MAX_LIMIT = 100;
/**
 * Rows from which an append writes its events with COPY (binary) instead of INSERT … SELECT FROM
 * unnest(…): a replay's batches. COPY inserts a heap page's rows with one WAL record (heap_multi_insert)
 * and skips the per-row executor of the INSERT; see BENCHMARKS.md for the figures.
 */
const COPY_MIN_ROWS = 1_000;
/** Rows per INSERT … SELECT FROM unnest(…): bounds one statement's parameter size. */
const INSERT_CHUNK = 5_000;
/**
 * Most rows an append writes in one statement (appendInOneStatement, below copyMinRows: or a
 * stamped batch up to this size), and rows per COPY. Both check the batch's ids under the
 * conversation's row lock first (there is no unique index on them since migration 6): the
 * statement in itself, the COPY's transaction with takenIds.
 */
const ONE_STATEMENT_ROWS = 10_000;
/** Times appendEvents sends its one statement when another append came in between (see appendInOneStatement). */
const ONE_STATEMENT_ATTEMPTS = 3;
/**
 * Rows written by this instance after which it refreshes the planner's statistics itself: right
 * after a large replay, stale statistics (autovacuum's analyze comes later, or never where an
 * operator turned autovacuum off) make PostgreSQL pick a bitmap scan and a sort over the whole
 * conversation instead of walking a (conv, …, ts, seq) index for a page: 7-32 ms instead of
 * 0.1 ms per page at 100k events. A table never analyzed fares as badly: with the first ANALYZE
 * at 20k rows, a 10k-event conversation's deep-cursor page took 7.0 ms and its 2-character body
 * page 8.5 ms on a server with autovacuum off; at 5k rows, 0.84 and 1.05 ms (an ANALYZE of a
 * small table costs a few ms). The next one waits for at least as many rows as this instance had
 * written by then (5k, 10k, 20k, …: statistics stay within a factor of 2 of the rows written): an
 * ANALYZE after every 20k rows ran back to back with a long replay, on the same cores (50 of them
 * during 1M events).
 */
const ANALYZE_AFTER_ROWS = 5_000;
/**
 * Messages that one page of a body search pg_trgm cannot narrow (a body with no run of 3 letters or
 * digits: 1–2 characters, punctuation) tests, walking the conversation's messages in the page's
 * order: the page ends at `limit + 1` hits or after this many messages, short (possibly empty) with
 * a cursor that resumes the walk (SearchPage.resumeAfter), as the SQLite store's walk does. So a
 * page costs at most this many index entries and rows, whatever the conversation's size; before, a
 * sparse 2-character term scanned every message (151 ms at 1M events). 500 messages: well under a
 * millisecond of the walk on top of the page's round trip (1,000 measured 1.9 ms a page at 1M
 * events against 0.8 ms for a whole 10k-event conversation, 253 messages: a ratio of 2.5 where the
 * benchmark asks for 2). A sparse term costs more round trips instead: a page per 500 messages.
 */
const BODY_SCAN_BUDGET = 500;
/** The trigram index's pending list bound on the store's connections, kB: what a body search reads of it at most (migrations 5 and 8). */
const GIN_PENDING_LIST_KB = 128;
/** The bound within a COPY's transaction, kB, which empties the list at its end (migration 8). */
const COPY_GIN_PENDING_LIST_KB = 4096;
/** A staged import untouched this long belongs to a process that died: removed at open. */
const STALE_IMPORT_MS = 60 * 60 * 1000;

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions {
  /** A connection URL (`postgres://user@host:5432/db`). */
  url: string;
  /** The schema holding the store's tables, created when missing. Default `acs`. */
  schema?: string;
  /** Most connections in the pool. Default 10. A replay's batches use one more, of their own (PostgresEventStore.idCheckPool). */
  maxConnections?: number;
  /** Longest a statement may run, in ms, before it fails with StoreUnavailableError. Default 10,000; 0 for none. */
  statementTimeoutMs?: number;
  /** Longest to wait for a connection, in ms. Default 5,000. */
  connectTimeoutMs?: number;
  /** Messages a body search that pg_trgm cannot serve tests for one page (see BODY_SCAN_BUDGET); tests lower it. */
  bodyScanBudget?: number;
  /** Rows written before the first ANALYZE this instance runs itself (see ANALYZE_AFTER_ROWS); tests lower it. */
  analyzeAfterRows?: number;
  /** Rows from which an append uses COPY (see COPY_MIN_ROWS); Infinity never does (benchmarks compare). */
  copyMinRows?: number;
}

interface ConversationRow {
  pk: number;
  id: string;
  status: ConversationLifecycleStatus;
  created_at: string;
  updated_at: string;
  event_count: number;
  next_seq: number;
  repository: string | null;
  selected_branch: string | null;
  git_provider: ConversationRecord["gitProvider"];
}

const toRecord = (row: ConversationRow): ConversationRecord => ({
  id: row.id,
  status: row.status,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  eventCount: row.event_count,
  repository: row.repository,
  selectedBranch: row.selected_branch,
  gitProvider: row.git_provider,
});

class StagedImport implements ImportHandle {
  written = 0;
  constructor(
    readonly pk: number,
    readonly finalId: string,
  ) {}
}

/** What runs a statement: the pool, or a client inside a transaction. */
interface Queryable {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** Whether `q` is a client of the pool (in a transaction): it can run a COPY. */
const isClient = (q: Queryable): q is pg.PoolClient => typeof (q as Partial<pg.PoolClient>).release === "function";

/** SQLSTATE classes that mean "the database cannot answer now": connection, resources, operator, system. */
const UNAVAILABLE_STATE = /^(08|53|57|58)/;
/** Client-side failures of the same kind (pg gives these no SQLSTATE). */
const UNAVAILABLE_CLIENT = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE|EHOSTUNREACH)$|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|is not currently accepting connections/;

function unavailable(error: unknown): StoreUnavailableError | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  const byState = typeof code === "string" && UNAVAILABLE_STATE.test(code);
  if (!byState && !(typeof code === "string" && UNAVAILABLE_CLIENT.test(code)) && !UNAVAILABLE_CLIENT.test(error.message)) return undefined;
  const detail = code === "57014" ? "the database did not answer within the statement timeout" : `the database is unavailable (${error.message})`;
  return new StoreUnavailableError(detail, { cause: error });
}

/** The key of events_kind_source_time after conv (migration 9), as the planner must see it to use the index. */
const KIND_SOURCE_KEY = "hashtext(kind || ' ' || source)";

/** `%`, `_` and the escape character itself stand for themselves in a LIKE pattern. */
const likeSubstring = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Whether a body search walks the messages (BODY_SCAN_BUDGET): pg_trgm finds no trigram in a body without a run of 3 letters or digits. */
const walked = (body: string) => body !== "" && !/[\p{L}\p{N}]{3}/u.test(body);

/** A page's ORDER BY in `order`, on the columns ts and seq of `table` (a prefix such as `e.`). */
const orderBy = (order: SearchQuery["order"], table = "") => (order === "asc" ? `order by ${table}ts, ${table}seq` : `order by ${table}ts desc, ${table}seq desc`);

function checkedPaging(query: SearchQuery): void {
  const { limit, order } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new RangeError(`limit must be an integer in 1..${MAX_LIMIT}, got ${limit}`);
  if (order !== "asc" && order !== "desc") throw new RangeError(`order must be "asc" or "desc"`);
}

/**
 * The SQL condition "row `e` of events is conversation `conv`'s event `id`" (both SQL expressions),
 * in the form the hash index events_conv_id_hash (migration 6) answers: the id's 64-bit hash seeded
 * by the conversation, then the conversation and the id themselves (a hash may collide). The
 * conversation is compared as `e.conv + 0`, which no index serves, on purpose: with `e.conv = …`
 * the planner ANDed the primary key's range of the whole conversation into a bitmap with the hash
 * probe (the live append's check, its conversation from the locked row: 100,002 entries, 2.6 ms
 * at 100k events, instead of one bucket).
 */
export const sameEvent = (conv: string, id: string) => `hashtextextended(e.id, e.conv) = hashtextextended((${id}) collate "C", ${conv}) and e.conv + 0 = ${conv} and e.id = ${id}`;

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

/** @throws DuplicateEventIdError for the first of a batch's `ids` that is in `taken` or earlier in the batch */
function checkBatchIds(ids: readonly string[], taken: readonly string[]): void {
  const seen = new Set(taken);
  for (const [index, id] of ids.entries()) {
    if (seen.has(id)) throw new DuplicateEventIdError(id, index);
    seen.add(id);
  }
}

const idsOf = (rows: readonly PreparedEvent[]) => rows.map((r) => r.id);

/**
 * What a batch's rows add to their conversation, taken as they come: how many there are per
 * (kind, source) (event_counts), and whether their timestamps never decrease, the first and the
 * largest (conversations.ts_ordered, migration 3).
 */
class RowTally {
  private readonly counts = new Map<string, { kind: string; source: string; n: number }>();
  count = 0;
  ordered = true;
  first = 0;
  last = 0;
  add(rows: readonly PreparedEvent[]): void {
    for (const r of rows) {
      if (this.count++ === 0) this.first = this.last = r.ts;
      if (r.ts < this.last) this.ordered = false;
      else this.last = r.ts;
      const key = `${r.kind}\u0000${r.source}`;
      const c = this.counts.get(key);
      if (c) c.n++;
      else this.counts.set(key, { kind: r.kind, source: r.source, n: 1 });
    }
  }
  counters(): Array<{ kind: string; source: string; n: number }> {
    return [...this.counts.values()];
  }
}

const tallyOf = (rows: readonly PreparedEvent[]) => {
  const tally = new RowTally();
  tally.add(rows);
  return tally;
};

/**
 * The rows' searchable texts and JSON texts as one buffer, sent as one binary parameter, with each
 * text's 1-based byte offset (interleaved: body, json) and byte length (-1: no body). As text[]
 * parameters, the client escaped every `"` and `\\` of every JSON text into an array literal and the
 * server parsed it back: 70% of the client's CPU time of a replay (2.9 s → 0.86 s per 100k
 * events). The server cuts the texts out with substring (UTF-8 checked by convert_from).
 */
function packRows(rows: readonly PreparedEvent[]): { bytes: Buffer; offsets: number[]; bodyLengths: number[]; jsonLengths: number[] } {
  const bodies = rows.map((r) => searchTextOf(r));
  let max = 0;
  for (let i = 0; i < rows.length; i++) max += (rows[i]!.json.length + (bodies[i]?.length ?? 0)) * 3; // ≤ 3 bytes per UTF-16 unit
  const bytes = Buffer.allocUnsafe(max);
  const offsets: number[] = new Array(rows.length * 2);
  const bodyLengths: number[] = new Array(rows.length);
  const jsonLengths: number[] = new Array(rows.length);
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    const body = bodies[i];
    offsets[2 * i] = at + 1;
    if (body === null || body === undefined) bodyLengths[i] = -1;
    else at += bodyLengths[i] = bytes.write(body, at, "utf8");
    offsets[2 * i + 1] = at + 1;
    at += jsonLengths[i] = bytes.write(rows[i]!.json, at, "utf8");
  }
  return { bytes: bytes.subarray(0, at), offsets, bodyLengths, jsonLengths };
}

const COPY_SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");

/** Rows per chunk of a COPY's data (CopyStatement): the server parses and inserts one while the next is encoded. */
const COPY_CHUNK_ROWS = 500;

/**
 * Writes the rows of a binary COPY into a buffer that grows as needed: per row its field count, then
 * each field's byte length and bytes (int8 big-endian, text as UTF-8, -1 for a null).
 */
class CopyRowWriter {
  /** Allocated when first written to (a chunk's buffer is handed on by take). */
  private buffer = Buffer.alloc(0);
  private at = 0;
  constructor(private readonly size = 1 << 20) {}
  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.size, 2 * this.buffer.length, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }
  /** The header of a row of `fields` fields. */
  row(fields: number): void {
    this.room(2);
    this.at = this.buffer.writeInt16BE(fields, this.at);
  }
  /** An int8 field (a safe integer, negative or not). */
  int8(n: number): void {
    this.room(12);
    const b = this.buffer;
    this.at = b.writeInt32BE(8, this.at);
    const hi = Math.floor(n / 4294967296);
    this.at = b.writeInt32BE(hi, this.at);
    this.at = b.writeUInt32BE(n - hi * 4294967296, this.at);
  }
  /** A text field, as UTF-8; null: a NULL. */
  text(value: string | null): void {
    if (value === null) {
      this.room(4);
      this.at = this.buffer.writeInt32BE(-1, this.at);
      return;
    }
    this.room(4 + value.length * 3); // ≤ 3 bytes per UTF-16 unit
    const n = this.buffer.write(value, this.at + 4, "utf8");
    this.buffer.writeInt32BE(n, this.at);
    this.at += 4 + n;
  }
  /** Raw bytes (the COPY's header and trailer). */
  bytes(value: Buffer): void {
    this.room(value.length);
    this.at += value.copy(this.buffer, this.at);
  }
  /** What was written since the last take, in a buffer of its own. */
  take(): Buffer {
    const out = this.buffer.subarray(0, this.at);
    this.buffer = Buffer.alloc(0);
    this.at = 0;
    return out;
  }
}

const COPY_HEADER = Buffer.concat([COPY_SIGNATURE, Buffer.alloc(8)]); // flags 0, header extension length 0
const COPY_TRAILER = Buffer.from([0xff, 0xff]); // a field count of -1

/**
 * One `COPY … FROM STDIN (FORMAT binary)` on `tx`: rows written through `writer` (the header
 * first), sent to the server every COPY_CHUNK_ROWS rows (`wrote`), so that it parses and inserts a
 * chunk while the next is encoded; then the trailer (-1) at `end`.
 */
class CopyStatement {
  readonly writer = new CopyRowWriter();
  /** Rows written. */
  rows = 0;
  private readonly stream: Writable;
  private readonly done: Promise<void>;
  constructor(tx: pg.PoolClient, into: string) {
    this.stream = tx.query(postgresDriver().copyFrom(`copy ${into} from stdin with (format binary)`));
    this.done = finished(this.stream);
    this.done.catch(() => undefined); // awaited by end or cancel; until then, a failure waits there
    this.writer.bytes(COPY_HEADER);
  }

  /** After each row written: a full chunk is sent, and the Promise (else none: no await per row) waits while the connection's buffer is full. */
  wrote(): Promise<void> | undefined {
    return ++this.rows % COPY_CHUNK_ROWS === 0 ? this.send() : undefined;
  }

  /** Sends the rest and the trailer. @throws what the server answers the COPY */
  async end(): Promise<void> {
    this.writer.bytes(COPY_TRAILER);
    this.stream.end(this.writer.take());
    await this.done;
  }

  /** Fails the COPY (CopyFail: the server rolls it back, and the connection can roll the transaction back). */
  async cancel(reason: Error): Promise<void> {
    this.stream.destroy(reason);
    await this.done.catch(() => undefined);
  }

  private async send(): Promise<void> {
    if (!this.stream.write(this.writer.take()) && !this.stream.destroyed) await Promise.race([once(this.stream, "drain"), this.done]);
  }
}

/**
 * A batch's rows written by binary COPY, inside the transaction of `tx`, as they come (insertRows;
 * an event batch as the import thread parses it, streamBatch): the events in COPY statements of at
 * most ONE_STATEMENT_ROWS rows (each within the statement timeout); then, at `end`, the messages'
 * searchable texts, gathered meanwhile, with what the rows add to the conversation.
 */
class BatchCopy {
  /** What the rows add to the conversation's counters and time order. */
  readonly tally = new RowTally();
  /** The rows' ids, in order. */
  readonly ids: string[] = [];
  private readonly texts: Array<{ seq: number; ts: number; source: string; body: string }> = [];
  private statement: CopyStatement | undefined;
  private constructor(
    private readonly tx: pg.PoolClient,
    private readonly conv: number,
    /** The seq of the next row. */
    private next: number,
    private readonly ownsBodyIndex: boolean,
  ) {}

  static async begin(tx: pg.PoolClient, conv: number, firstSeq: number, ownsBodyIndex: boolean): Promise<BatchCopy> {
    // The trigram index's new entries gather in a pending list of up to 4 MB for this transaction,
    // moved into the index at once at `end` (migration 8), so that searches read 128 kB at most.
    // Only the index's owner may empty the list (a role that does not keeps the 128 kB flushes).
    if (ownsBodyIndex) await tx.query(`set local gin_pending_list_limit = ${COPY_GIN_PENDING_LIST_KB}`);
    return new BatchCopy(tx, conv, firstSeq, ownsBodyIndex);
  }

  /** Writes `rows` after those before. @throws what the server answers the COPY */
  async add(rows: readonly PreparedEvent[]): Promise<void> {
    this.tally.add(rows);
    for (const r of rows) {
      if (this.statement?.rows === ONE_STATEMENT_ROWS) await this.endStatement();
      const statement = (this.statement ??= new CopyStatement(this.tx, "events (conv, seq, ts, id, kind, source, json)"));
      const seq = this.next++;
      const w = statement.writer;
      w.row(7);
      w.int8(this.conv);
      w.int8(seq);
      w.int8(r.ts);
      w.text(r.id);
      w.text(r.kind);
      w.text(r.source);
      w.text(r.json);
      this.ids.push(r.id);
      const body = searchTextOf(r);
      if (body !== null) this.texts.push({ seq, ts: r.ts, source: r.source, body });
      const sent = statement.wrote();
      if (sent) await sent;
    }
  }

  /** Ends the events' COPY, then writes the messages' texts (a few percent of the rows) and moves their trigrams into the index. */
  async end(): Promise<void> {
    if (this.statement) await this.endStatement();
    if (this.texts.length === 0) return;
    const statement = (this.statement = new CopyStatement(this.tx, "message_texts (conv, seq, ts, source, body)"));
    for (const m of this.texts) {
      const w = statement.writer;
      w.row(5);
      w.int8(this.conv);
      w.int8(m.seq);
      w.int8(m.ts);
      w.text(m.source);
      w.text(m.body);
      const sent = statement.wrote();
      if (sent) await sent;
    }
    await this.endStatement();
    if (this.ownsBodyIndex) await this.tx.query("select gin_clean_pending_list('message_texts_body'::regclass)");
  }

  /** Fails the COPY under way, if any. */
  async cancel(reason: Error): Promise<void> {
    const statement = this.statement;
    this.statement = undefined;
    await statement?.cancel(reason);
  }

  private async endStatement(): Promise<void> {
    const statement = this.statement!;
    this.statement = undefined;
    await statement.end();
  }
}

/** A queue whose reader waits for the next item (a streamed batch's chunks, as the request thread gets them). */
class Inbox<T> {
  private readonly items: T[] = [];
  private waiting: ((item: T) => void) | undefined;
  push(item: T): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting(item);
    else this.items.push(item);
  }
  next(): Promise<T> {
    if (this.items.length > 0) return Promise.resolve(this.items.shift()!);
    return new Promise((resolve) => (this.waiting = resolve));
  }
}

/** A streamed batch's abort (BatchStream.abort): its transaction rolls back. */
class BatchAbortedError extends Error {
  override readonly name = "BatchAbortedError";
  constructor() {
    super("the event batch was aborted");
  }
}

/** `unnest(ts, id, kind, source, body length, json length) with ordinality as t(…, o)` from parameter $first on. */
const unnestRows = (first: number) =>
  `unnest($${first}::bigint[], $${first + 1}::text[], $${first + 2}::text[], $${first + 3}::text[], $${first + 4}::int[], $${first + 5}::int[]) with ordinality as t(ts, id, kind, source, bl, jl, o)`;

/** The columns body and json of row `o`, cut out of packRows' buffer ($bytes) at its offsets ($offsets). */
const unpackedTexts = (bytes: number, offsets: number) =>
  `case when bl < 0 then null else convert_from(substring($${bytes}::bytea from ($${offsets}::int[])[2 * o - 1] for bl), 'UTF8') end as body,
   convert_from(substring($${bytes}::bytea from ($${offsets}::int[])[2 * o] for jl), 'UTF8') as json`;

/** A stamped event's JSON around its timestamp's value (see appendInOneStatement): `pre` ends with the opening quote, `post` starts with the closing one. */
interface Stamp {
  pre: string;
  post: string;
}

const STAMP_MARK = "\u0001acs-timestamp\u0001";

/** Per event, its Stamp when stamped at recording (else null): restamped's JSON with a mark for the timestamp, cut at it. */
function stampsOf(events: readonly EventToStore[]): Array<Stamp | null> {
  return events.map((entry) => {
    if (!entry.stampedAtRecording) return null;
    const parts = JSON.stringify({ ...entry.event, timestamp: STAMP_MARK }).split(JSON.stringify(STAMP_MARK).slice(1, -1));
    if (parts.length !== 2) throw new Error("an event's JSON holds the timestamp mark");
    return { pre: parts[0]!, post: parts[1]! };
  });
}

/** The counters' upsert of appendInOneStatement ($8–$10: kind, source, n). */
const COUNTED = `insert into event_counts (conv, kind, source, n)
           select conv.pk, kind, source, n from conv, unnest($8::text[], $9::text[], $10::bigint[]) as t(kind, source, n)
           on conflict (conv, kind, source) do update set n = event_counts.n + excluded.n`;

/** A WHERE clause under construction: its text and its parameters. */
class Where {
  readonly parts: string[] = [];
  constructor(readonly values: unknown[]) {}
  /** Adds `clause`, where `?` stands for `value`'s parameter. */
  add(clause: string, ...values: unknown[]): this {
    let text = clause;
    for (const value of values) {
      this.values.push(value);
      text = text.replace("?", `$${this.values.length}`);
    }
    this.parts.push(text);
    return this;
  }
  get text(): string {
    return this.parts.join(" and ");
  }
}

/**
 * The clauses of a statement over the (kind, source) pairs of a conversation that match `f`
 * (`pairs`, on event_counts as c, $1 the conversation's id) and of each pair's rows in the time
 * range (`branch`, on events_kind_source_time, `recheck` appended): kindSourcePage and count.
 */
function pairWhere(conversationId: string, f: SearchFilters, recheck: string): { values: unknown[]; branch: Where; pairs: Where } {
  const values: unknown[] = [conversationId];
  const branch = new Where(values).add(`conv = c.conv and ${KIND_SOURCE_KEY} = hashtext(c.kind || ' ' || c.source)${recheck}`);
  if (f.timestampGte !== undefined) branch.add("ts >= ?", f.timestampGte);
  if (f.timestampLt !== undefined) branch.add("ts < ?", f.timestampLt);
  const pairs = new Where(values).add("c.conv = (select pk from conversations where id = $1)");
  if (f.kind !== undefined) pairs.add("c.kind = ?", f.kind);
  if (f.source !== undefined) pairs.add("c.source = ?", f.source);
  return { values, branch, pairs };
}

/** The PostgreSQL EventStore (see the module comment); open it with {@link openPostgresStore}. */
export class PostgresEventStore implements EventStore {
  readonly kind = "postgres";
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Per conversation, the tail of its writes from this instance: calls apply in the order made. */
  private readonly tails = new Map<string, Promise<unknown>>();
  private rowsSinceAnalyze = 0;
  /** Rows written by this instance (see ANALYZE_AFTER_ROWS). */
  private rowsWritten = 0;
  /** Rows since the last ANALYZE that start the next one (see ANALYZE_AFTER_ROWS). */
  private analyzeAfterRows: number;
  /** ANALYZEs started by this instance. */
  analyzes = 0;
  private analyzing: Promise<void> | undefined;
  /** See COPY_MIN_ROWS. */
  copyMinRows = COPY_MIN_ROWS;
  /** Whether this role may empty the trigram index's pending list (its owner, or a superuser): see insertRows. */
  ownsBodyIndex = false;
  /** One connection (opened when first used) that looks up a replay batch's ids while its COPY runs (insertChecked); none: on the batch's own connection, before. */
  idCheckPool: pg.Pool | undefined;

  /** @internal use openPostgresStore */
  constructor(
    /** The connection pool (its connections' search_path is the store's schema). */
    readonly pool: pg.Pool,
    /** The schema holding the tables. */
    readonly schema: string,
    /** The URL the pool connects to (the live fan-out opens its LISTEN connection with it). */
    readonly url: string,
    /** See BODY_SCAN_BUDGET. */
    readonly bodyScanBudget = BODY_SCAN_BUDGET,
    firstAnalyzeAfterRows = ANALYZE_AFTER_ROWS,
  ) {
    this.analyzeAfterRows = firstAnalyzeAfterRows;
  }

  // Every call: a rejection (never a throw), with database outages as StoreUnavailableError.
  private async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) throw new Error("the store is closed");
    return this.execute(fn);
  }

  private async execute<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw unavailable(error) ?? error;
    }
  }

  /**
   * Runs `fn` after this instance's earlier writes to `key` (the pool would otherwise reorder them).
   * A write called before close runs even if it starts after: close waits for it.
   */
  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the store is closed"));
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(
      () => this.execute(fn),
      () => this.execute(fn),
    );
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  private async query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]> {
    return (await this.pool.query<R>(text, values)).rows;
  }

  /** Runs `fn` in a transaction on one connection; a connection that failed is dropped, not reused. */
  private async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // A checked-out client whose connection dies also emits 'error' (the query rejects as well);
    // unheard, that event would end the process.
    const onError = (error: Error) => void (broken = error);
    client.on("error", onError);
    try {
      await client.query("begin");
      const result = await fn(client);
      await client.query("commit");
      if (this.rowsSinceAnalyze >= this.analyzeAfterRows) this.analyzeSoon();
      return result;
    } catch (error) {
      await client.query("rollback").catch((rollbackError: unknown) => {
        broken = rollbackError as Error;
      });
      if (unavailable(error)) broken = error as Error;
      throw error;
    } finally {
      client.off("error", onError);
      client.release(broken);
    }
  }

  /** Refreshes the events table's statistics in the background (see ANALYZE_AFTER_ROWS); one at a time. */
  private analyzeSoon(): void {
    if (this.analyzing || this.closed) return;
    this.rowsSinceAnalyze = 0;
    this.analyzeAfterRows = Math.max(this.analyzeAfterRows, this.rowsWritten);
    this.analyzes++;
    this.analyzing = this.pool
      .query("analyze events, message_texts")
      .then(() => undefined, () => undefined) // autovacuum's analyze comes anyway
      .finally(() => (this.analyzing = undefined));
  }

  // -- writes ----------------------------------------------------------------------------------

  createConversation(conversation: NewConversation, events: readonly EventToStore[]): Promise<ConversationRecord> {
    return this.serial(conversation.id, async () => {
      const rows = events.map((entry, index) => prepareEvent(entry, index));
      return this.transaction(async (tx) => {
        const now = new Date().toISOString();
        const created = (
          await tx.query<ConversationRow>(
            `insert into conversations (id, status, created_at, updated_at, repository, selected_branch, git_provider)
             values ($1, $2, $3, $3, $4, $5, $6) on conflict (id) do nothing returning *`,
            [conversation.id, conversation.status, now, conversation.repository ?? null, conversation.selectedBranch ?? null, conversation.gitProvider ?? null],
          )
        ).rows[0];
        if (!created) throw new ConversationExistsError(conversation.id);
        await this.insertRows(tx, created.pk, 1, rows, [], now);
        return toRecord((await tx.query<ConversationRow>("select * from conversations where pk = $1", [created.pk])).rows[0]!);
      });
    });
  }

  appendEvents(conversationId: string, events: readonly EventToStore[]): Promise<StoredEvent[]> {
    return this.serial(conversationId, async () => {
      const rows = events.map((entry, index) => prepareEvent(entry, index));
      const restamp = events.some((entry) => entry.stampedAtRecording);
      if (rows.length > 0 && rows.length <= ONE_STATEMENT_ROWS && (rows.length < this.copyMinRows || restamp)) {
        // A live append: one statement, which writes nothing when an id is taken (the transaction
        // below then names it) or when another append came in between its snapshot and its lock
        // (sent again: appends from two busy instances wait for each other's lock all the time,
        // and the transaction holds the row across its round trips; after a few, the transaction).
        const stamps = restamp ? stampsOf(events) : undefined;
        for (let attempt = 0; attempt < ONE_STATEMENT_ATTEMPTS; attempt++) {
          const stored = await this.appendInOneStatement(conversationId, rows, stamps);
          if (stored === "taken") break;
          if (stored !== "raced") return stored;
        }
      }
      // A replay's batch (COPY from copyMinRows rows), or the fallback: lock, look up, insert.
      return this.appendInTransaction(conversationId, events, rows);
    });
  }

  /** appendEvents' transaction: lock the conversation's row, (restamp,) look up the batch's ids (under the lock), insert, notify. */
  private appendInTransaction(conversationId: string, events: readonly EventToStore[], prepared: PreparedEvent[]): Promise<StoredEvent[]> {
    const restamp = events.some((entry) => entry.stampedAtRecording);
    return this.transaction(async (tx) => {
      let rows = prepared;
      // The row lock orders this append after any other instance's on the same conversation.
      const conv = (await tx.query<{ pk: number; next_seq: number }>("select pk, next_seq from conversations where id = $1 for update", [conversationId])).rows[0];
      if (!conv) throw new ConversationNotFoundError(conversationId);
      if (restamp) rows = await this.restamped(tx, conv.pk, events, rows);
      const stored = await this.insertChecked(tx, conv.pk, conv.next_seq, rows, new Date().toISOString());
      // Delivered at commit, to every instance LISTENing (the live fan-out); never before the rows are visible.
      if (stored.length > 0) await tx.query("select pg_notify($1, $2)", [NOTIFY_CHANNEL, `${this.schema}:${conversationId}:${stored[0]!.seq}:${stored[stored.length - 1]!.seq}`]);
      return stored;
    });
  }

  appendBatch(conversationId: string, batch: RowBatch): Promise<AppendedBatch> {
    return this.serial(conversationId, () =>
      this.transaction(async (tx) => {
        const rows = decodeRows(batch);
        // The row lock orders the batch after any other instance's append to the conversation.
        const conv = (await tx.query<{ pk: number; next_seq: number; event_count: number }>("select pk, next_seq, event_count from conversations where id = $1 for update", [conversationId])).rows[0];
        if (!conv) throw new ConversationNotFoundError(conversationId);
        const firstSeq = Number(conv.next_seq);
        const stored = await this.insertChecked(tx, conv.pk, firstSeq, rows, new Date().toISOString());
        // The live fan-out of every instance reads the batch from the store once it is committed.
        if (stored.length > 0) await tx.query("select pg_notify($1, $2)", [NOTIFY_CHANNEL, `${this.schema}:${conversationId}:${firstSeq}:${firstSeq + stored.length - 1}`]);
        return { firstSeq, count: rows.length, eventCount: Number(conv.event_count) + rows.length };
      }),
    );
  }

  /**
   * appendBatch with the rows given as the import thread parses them (ConversationService.appendBatch):
   * the batch's transaction begins in turn and takes the conversation's row; from copyMinRows rows
   * on, each chunk goes into the events' COPY as it is added, while the import thread parses the
   * batch's last lines, and its ids are looked up beside it on the id-check connection (insertChecked's
   * rule). A batch that ends smaller is written as appendBatch writes it, in the same transaction.
   * Without the id-check pool, undefined (appendBatch then).
   */
  streamBatch(conversationId: string): BatchStream | undefined {
    const idCheckPool = this.idCheckPool;
    if (!idCheckPool) return undefined;
    const inbox = new Inbox<Uint8Array | { end: number } | "abort">();
    const written = this.serial(conversationId, () =>
      this.transaction(async (tx): Promise<AppendedBatch> => {
        // The row lock orders the batch after any other instance's append to the conversation.
        const conv = (await tx.query<{ pk: number; next_seq: number; event_count: number }>("select pk, next_seq, event_count from conversations where id = $1 for update", [conversationId])).rows[0];
        if (!conv) throw new ConversationNotFoundError(conversationId);
        const firstSeq = Number(conv.next_seq);
        const now = new Date().toISOString();
        let held: PreparedEvent[] = []; // the rows before the COPY starts
        let copy: BatchCopy | undefined;
        const lookups: Array<Promise<string[]>> = [];
        const lookUp = (rows: readonly PreparedEvent[]) => {
          const lookup = this.takenIds(idCheckPool, conv.pk, idsOf(rows));
          lookup.catch(() => undefined); // awaited after the COPY
          lookups.push(lookup);
        };
        try {
          for (let item = await inbox.next(); ; item = await inbox.next()) {
            if (item === "abort") throw new BatchAbortedError();
            if (!(item instanceof Uint8Array)) {
              const added = (copy?.tally.count ?? 0) + held.length;
              if (item.end !== added) throw new Error(`an event batch ended at ${item.end} rows after ${added} were added`);
              break;
            }
            const rows = decodeRows({ count: 0, chunks: [item] });
            if (copy) {
              lookUp(rows);
              await copy.add(rows);
            } else if ((held = held.concat(rows)).length >= this.copyMinRows && isClient(tx)) {
              copy = await BatchCopy.begin(tx, conv.pk, firstSeq, this.ownsBodyIndex);
              lookUp(held);
              await copy.add(held);
              held = [];
            }
          }
          await copy?.end();
        } catch (error) {
          await copy?.cancel(error as Error);
          await Promise.allSettled(lookups);
          throw error;
        }
        let count: number;
        if (copy) {
          checkBatchIds(copy.ids, (await Promise.all(lookups)).flat());
          await this.recordRows(tx, conv.pk, copy.tally, now);
          count = copy.tally.count;
        } else count = (await this.insertChecked(tx, conv.pk, firstSeq, held, now)).length;
        // The live fan-out of every instance reads the batch from the store once it is committed.
        if (count > 0) await tx.query("select pg_notify($1, $2)", [NOTIFY_CHANNEL, `${this.schema}:${conversationId}:${firstSeq}:${firstSeq + count - 1}`]);
        return { firstSeq, count, eventCount: Number(conv.event_count) + count };
      }),
    );
    written.catch(() => undefined); // end or abort hands it on
    return {
      add: (chunk) => inbox.push(chunk),
      end: (count) => {
        inbox.push({ end: count });
        return written;
      },
      abort: async () => {
        inbox.push("abort");
        await written.catch(() => undefined);
      },
    };
  }

  /**
   * A live append (a few events) as one statement, so one round trip and one commit: lock the
   * conversation's row, insert the rows after its next_seq, add to the counters, move next_seq and
   * notify; all or nothing. At ~0.5 ms a round trip, the transaction of appendEvents spent more in
   * its nine round trips than in its commit.
   *
   * Events stamped at recording (`stamps`: per row, its JSON cut around the timestamp's value, or
   * null) are moved in the same statement (restamped's rule): the latest timestamp is the
   * conversation row's last_ts, read under the row lock (a row updated by the append we waited for
   * is re-read at its new version), and a moved row's JSON is `pre || its new timestamp || post`.
   * Before, a stamped append was a transaction of five round trips (begin, lock, read the latest ts,
   * insert, commit) holding the conversation's row across four turns of this process's event loop:
   * with two busy instances appending to one conversation (1,000 live subscribers at 100 events/s),
   * each append waited for the other's event loop and they queued (p50 7–11 s, 12–28% refused).
   *
   * Event ids (no unique index since migration 6): the statement writes nothing when one of the
   * batch's ids is stored in the conversation ("taken": `conv` below is empty), or when another
   * append committed between this statement's snapshot and its lock ("raced": the locked row's
   * next_seq, its latest version, is not the snapshot's, and that append's events are not in this
   * statement's snapshot, so the check could not see them). appendEvents sends a raced statement
   * again (its new snapshot holds the append it waited for), and names a taken id in a transaction.
   */
  private async appendInOneStatement(conversationId: string, rows: readonly PreparedEvent[], stamps?: ReadonlyArray<Stamp | null>): Promise<StoredEvent[] | "taken" | "raced"> {
    checkBatchIds(idsOf(rows), []);
    const tally = tallyOf(rows);
    const c = tally.counters();
    const texts = packRows(rows);
    const values: unknown[] = [
      conversationId,
      rows.map((r) => r.ts),
      rows.map((r) => r.id),
      rows.map((r) => r.kind),
      rows.map((r) => r.source),
      texts.bodyLengths,
      texts.jsonLengths,
      c.map((x) => x.kind),
      c.map((x) => x.source),
      c.map((x) => x.n),
      rows.length,
      new Date().toISOString(),
      NOTIFY_CHANNEL,
      `${this.schema}:${conversationId}:`,
      texts.bytes,
      texts.offsets,
    ];
    let text: string;
    if (!stamps) {
      values.push(tally.ordered, tally.first, tally.last);
      text = `${LOCKED_UNTAKEN}
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
    } else {
      // nts: a stamped row's timestamp moved up to the latest before it (the conversation's, then the
      // batch's own rows'); others keep theirs. The order kept in conversations.ts_ordered is the
      // moved rows'.
      values.push(
        stamps.map((s) => s?.pre ?? null),
        stamps.map((s) => s?.post ?? null),
      );
      text = `${LOCKED_UNTAKEN}
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
    }
    // A named statement (two texts, one per variant): each connection of the pool parses and plans
    // it once, then binds. Planning was ~0.17 of a live append's ~0.3 ms of server time.
    const result = await this.pool.query<{ first: number; ok: boolean; fresh: boolean; moved_o: number[] | null; moved_ts: number[] | null; moved_json: string[] | null }>({
      name: stamps ? "acs-append-stamped" : "acs-append",
      text,
      values,
    });
    const head = result.rows[0];
    if (head === undefined) throw new ConversationNotFoundError(conversationId);
    if (!head.ok) return head.fresh ? "taken" : "raced";
    const first = head.first;
    this.rowsSinceAnalyze += rows.length;
    this.rowsWritten += rows.length;
    if (this.rowsSinceAnalyze >= this.analyzeAfterRows) this.analyzeSoon();
    const stored = rows.map((r, i): StoredEvent => ({ id: r.id, json: r.json, ts: r.ts, seq: first + i }));
    head.moved_o?.forEach((o, k) => {
      const row = stored[Number(o) - 1]!;
      row.ts = Number(head.moved_ts![k]);
      row.json = head.moved_json![k]!;
    });
    return stored;
  }

  /**
   * Inside the append's transaction, its conversation's row locked: the events stamped at recording
   * (EventToStore.stampedAtRecording) whose timestamp is before the conversation's latest, moved to it
   * (then their append order decides), so that the order by (timestamp, seq) is the append order
   * even when another instance stamped later but appended first.
   */
  private async restamped(tx: Queryable, conv: number, events: readonly EventToStore[], rows: PreparedEvent[]): Promise<PreparedEvent[]> {
    // A statement after the lock: its snapshot holds every append committed before ours.
    let latest = (await tx.query<{ ts: number }>("select ts from events where conv = $1 order by ts desc, seq desc limit 1", [conv])).rows[0]?.ts ?? -Infinity;
    return rows.map((row, index) => {
      const entry = events[index]!;
      let moved = row;
      if (entry.stampedAtRecording && row.ts < latest) {
        const event = { ...entry.event, timestamp: timestampOfMicros(latest) };
        moved = prepareEvent({ event, json: JSON.stringify(event) }, index);
      }
      latest = Math.max(latest, moved.ts);
      return moved;
    });
  }

  /**
   * The ids of `rows` already stored in `conv`: one probe of the hash index events_conv_id_hash per
   * id (the LIMIT keeps each a nested loop, never a hash join over the conversation). Called under
   * the conversation's row lock, in a statement after it: what makes ids unique (migration 6).
   */
  private async takenIds(tx: Queryable, conv: number, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    // The ids as one text joined by newlines, split by the server: as a text[] parameter, the
    // array literal's escaping and parsing were half of the lookup (10k ids: 12–15 ms → 8–10 ms).
    // An id that is empty or holds a newline (none do in practice) takes the text[] way.
    const joinable = ids.every((id) => id !== "" && !id.includes("\n"));
    const found = await tx.query<{ id: string }>(
      `select t.id from unnest(${joinable ? "string_to_array($2::text, E'\\n')" : "$2::text[]"}) as t(id)
       cross join lateral (select from events e where ${sameEvent("$1::bigint", "t.id")} limit 1) taken`,
      [conv, joinable ? ids.join("\n") : ids],
    );
    return found.rows.map((r) => r.id);
  }

  /**
   * insertRows after takenIds, inside a transaction holding the conversation's row (FOR UPDATE, or a
   * staged import's). A replay's batch (a COPY) looks its ids up on the id-check pool while the COPY
   * runs, and the transaction fails (rolls back) when one is taken: 2.1-2.4 s of a 1M-event replay's
   * ~21 s of store time was that lookup, before the COPY on the same connection. It sees what
   * takenIds on `tx` would: its statement starts after this transaction took the conversation's row,
   * which every write of the conversation takes first (any instance), so no other write of it
   * commits until this one does; its snapshot holds every event committed before, none of this
   * transaction's. Ids repeated within the batch are refused before the COPY.
   */
  private async insertChecked(tx: Queryable, conv: number, firstSeq: number, rows: readonly PreparedEvent[], now: string): Promise<StoredEvent[]> {
    const ids = idsOf(rows);
    if (!(rows.length >= this.copyMinRows && isClient(tx) && this.idCheckPool)) return this.insertRows(tx, conv, firstSeq, rows, await this.takenIds(tx, conv, ids), now);
    checkBatchIds(ids, []);
    const lookup = this.takenIds(this.idCheckPool, conv, ids);
    let stored: StoredEvent[];
    try {
      stored = await this.insertRows(tx, conv, firstSeq, rows, [], now);
    } catch (error) {
      await lookup.catch(() => undefined); // its own failure, if any, is not this one's cause
      throw error;
    }
    checkBatchIds(ids, await lookup);
    return stored;
  }

  /**
   * Inside a transaction holding the conversation's row (new or FOR UPDATE): checks ids, then
   * writes rows from `firstSeq`, the counters and the conversation's next_seq and count.
   */
  private async insertRows(tx: Queryable, conv: number, firstSeq: number, rows: readonly PreparedEvent[], taken: readonly string[], now: string): Promise<StoredEvent[]> {
    if (rows.length === 0) return [];
    checkBatchIds(idsOf(rows), taken);
    let tally: RowTally;
    if (rows.length >= this.copyMinRows && isClient(tx)) {
      const copy = await BatchCopy.begin(tx, conv, firstSeq, this.ownsBodyIndex);
      try {
        await copy.add(rows);
        await copy.end();
      } catch (error) {
        await copy.cancel(error as Error);
        throw error;
      }
      tally = copy.tally;
    } else {
      tally = tallyOf(rows);
      for (let from = 0; from < rows.length; from += INSERT_CHUNK) {
        const chunk = rows.slice(from, from + INSERT_CHUNK);
        const texts = packRows(chunk);
        await tx.query(
          `with src as (select t.*, ${unpackedTexts(9, 10)} from ${unnestRows(3)}),
             inserted as (insert into events (conv, seq, ts, id, kind, source, json) select $1, $2::bigint + o - 1, ts, id, kind, source, json from src)
           insert into message_texts (conv, seq, ts, source, body) select $1, $2::bigint + o - 1, ts, source, body from src where body is not null`,
          [conv, firstSeq + from, chunk.map((r) => r.ts), chunk.map((r) => r.id), chunk.map((r) => r.kind), chunk.map((r) => r.source), texts.bodyLengths, texts.jsonLengths, texts.bytes, texts.offsets],
        );
      }
    }
    await this.recordRows(tx, conv, tally, now);
    return rows.map((r, i) => ({ id: r.id, json: r.json, ts: r.ts, seq: firstSeq + i }));
  }

  /** After a batch's rows are written: what they add to the counters, and the conversation's next_seq, count and time order. */
  private async recordRows(tx: Queryable, conv: number, tally: RowTally, now: string): Promise<void> {
    this.rowsSinceAnalyze += tally.count;
    this.rowsWritten += tally.count;
    const c = tally.counters();
    await tx.query(
      `insert into event_counts (conv, kind, source, n)
       select $1, kind, source, n from unnest($2::text[], $3::text[], $4::bigint[]) as t(kind, source, n)
       on conflict (conv, kind, source) do update set n = event_counts.n + excluded.n`,
      [conv, c.map((x) => x.kind), c.map((x) => x.source), c.map((x) => x.n)],
    );
    await tx.query(
      `update conversations set next_seq = next_seq + $2, event_count = event_count + $2, updated_at = $3,
         ts_ordered = ts_ordered and $4 and coalesce(last_ts <= $5, true), last_ts = greatest(last_ts, $6) where pk = $1`,
      [conv, tally.count, now, tally.ordered, tally.first, tally.last],
    );
  }

  getConversation(id: string): Promise<ConversationRecord | undefined> {
    return this.run(async () => {
      const [row] = await this.query<ConversationRow>("select * from conversations where id = $1", [id]);
      return row && toRecord(row);
    });
  }

  setStatus(conversationId: string, status: ConversationLifecycleStatus): Promise<ConversationRecord> {
    return this.serial(conversationId, async () => {
      const [row] = await this.query<ConversationRow>("update conversations set status = $2, updated_at = $3 where id = $1 returning *", [conversationId, status, new Date().toISOString()]);
      if (!row) throw new ConversationNotFoundError(conversationId);
      return toRecord(row);
    });
  }

  // -- staged creation ---------------------------------------------------------------------------

  beginImport(conversation: NewConversation): Promise<ImportHandle> {
    return this.run(async () => {
      if ((await this.query("select 1 from conversations where id = $1", [conversation.id])).length > 0) throw new ConversationExistsError(conversation.id);
      // id null: no read finds it until finishImport sets it.
      const [row] = await this.query<{ pk: number }>(
        `insert into conversations (id, status, created_at, updated_at, repository, selected_branch, git_provider)
         values (null, $1, $2, $2, $3, $4, $5) returning pk`,
        [conversation.status, new Date().toISOString(), conversation.repository ?? null, conversation.selectedBranch ?? null, conversation.gitProvider ?? null],
      );
      return new StagedImport(row!.pk, conversation.id);
    });
  }

  /** Inside a transaction: the staged conversation's next_seq, its row locked. */
  private async lockStaged(tx: Queryable, pk: number): Promise<number | undefined> {
    return (await tx.query<{ next_seq: number }>("select next_seq from conversations where pk = $1 and id is null for update", [pk])).rows[0]?.next_seq;
  }

  importRows(handle: ImportHandle, rows: readonly PreparedEvent[]): Promise<void> {
    const staged = handle as StagedImport;
    return this.serial(`import:${staged.pk}`, async () => {
      await this.transaction(async (tx) => {
        const next = await this.lockStaged(tx, staged.pk);
        if (next === undefined) throw new Error("the staged import is gone");
        await this.insertChecked(tx, staged.pk, next, rows, new Date().toISOString());
      });
      staged.written += rows.length;
    });
  }

  finishImport(handle: ImportHandle, events: readonly EventToStore[]): Promise<ConversationRecord> {
    const staged = handle as StagedImport;
    return this.serial(staged.finalId, async () => {
      const rows = events.map((entry, index) => prepareEvent(entry, index));
      return this.transaction(async (tx) => {
        const next = await this.lockStaged(tx, staged.pk);
        if (next === undefined) throw new Error("the staged import is gone");
        const now = new Date().toISOString();
        await this.insertChecked(tx, staged.pk, next, rows, now);
        if ((await tx.query("select 1 from conversations where id = $1", [staged.finalId])).rows.length > 0) throw new ConversationExistsError(staged.finalId);
        try {
          const { rows: [row] } = await tx.query<ConversationRow>("update conversations set id = $2, created_at = $3, updated_at = $3 where pk = $1 returning *", [staged.pk, staged.finalId, now]);
          return toRecord(row!);
        } catch (error) {
          // Another instance took the id between the check and the update.
          if ((error as { code?: string }).code === "23505") throw new ConversationExistsError(staged.finalId);
          throw error;
        }
      });
    });
  }

  discardImport(handle: ImportHandle, maxRows: number): Promise<boolean> {
    const staged = handle as StagedImport;
    return this.serial(`import:${staged.pk}`, () => this.discardStaged(staged.pk, maxRows));
  }

  /** Removes up to ~maxRows rows of a staged conversation, newest first; true when it is gone. */
  private discardStaged(pk: number, maxRows: number): Promise<boolean> {
    const n = Math.max(1, Math.floor(maxRows));
    return this.transaction(async (tx) => {
      const next = await this.lockStaged(tx, pk);
      if (next === undefined) return true;
      const from = Math.max(1, next - n);
      await tx.query("delete from events where conv = $1 and seq >= $2", [pk, from]);
      await tx.query("delete from message_texts where conv = $1 and seq >= $2", [pk, from]);
      if (from > 1) {
        await tx.query("update conversations set next_seq = $2 where pk = $1", [pk, from]);
        return false;
      }
      await tx.query("delete from conversations where pk = $1", [pk]); // cascades to its counters
      return true;
    });
  }

  /** Removes staged imports untouched for an hour (their process died mid-import); at open. */
  async removeStaleImports(): Promise<number> {
    const before = new Date(Date.now() - STALE_IMPORT_MS).toISOString();
    const stale = await this.query<{ pk: number }>("select pk from conversations where id is null and updated_at < $1", [before]);
    for (const { pk } of stale) while (!(await this.discardStaged(pk, 50_000)));
    return stale.length;
  }

  // -- reads -------------------------------------------------------------------------------------

  search(conversationId: string, query: SearchQuery): Promise<SearchPage> {
    return this.run(async () => {
      checkedPaging(query);
      return this.page(conversationId, query);
    });
  }

  searchJson(conversationId: string, query: SearchQuery): Promise<JsonPage> {
    return this.run(async () => {
      checkedPaging(query);
      const { items, hasMore, resumeAfter } = await this.page(conversationId, query);
      const last = resumeAfter ?? items[items.length - 1];
      return { json: Buffer.from(items.map((e) => e.json).join(","), "utf8"), count: items.length, last: last && { ts: last.ts, seq: last.seq }, hasMore };
    });
  }

  /** A page: keyset on (ts, seq) over the index that fits the filters, or the budgeted walk (see BODY_SCAN_BUDGET). */
  private async page(conversationId: string, query: SearchQuery): Promise<SearchPage> {
    const where = this.filters(conversationId, query, true);
    if (!where) return { items: [], hasMore: false };
    const { after, order, limit } = query;
    if (after) where.add(order === "asc" ? "(ts, seq) > (?, ?)" : "(ts, seq) < (?, ?)", after.ts, after.seq);
    const by = orderBy(order);
    if (query.body === undefined && (query.kind !== undefined || query.source !== undefined)) {
      const page = await this.kindSourcePage(conversationId, query);
      if (page) return page; // else two pairs share a hash: the filters on the rows themselves, below
    }
    if (query.body !== undefined && walked(query.body)) {
      // The messages' texts in order (message_texts_time), at most bodyScanBudget of them (the inner
      // LIMIT), each tested; the outer LIMIT stops the walk at limit + 1 hits. The budget's last
      // message comes back too, hit or not: where a short page's cursor resumes. Only the hits'
      // events rows are read.
      const pattern = where.values.push(likeSubstring(query.body.toLowerCase()));
      const budget = where.values.push(this.bodyScanBudget);
      const want = where.values.push(limit + 2);
      const rows = await this.query<StoredEvent & { hit: boolean; n: number }>(
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
        if (row.n === this.bodyScanBudget) resumeAfter = { ts: row.ts, seq: row.seq };
      }
      if (items.length > limit) return { items: items.slice(0, limit), hasMore: true };
      return resumeAfter ? { items, hasMore: true, resumeAfter } : { items, hasMore: false };
    }
    where.values.push(limit + 1);
    const rows = await this.query<StoredEvent>(
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
  private async kindSourcePage(conversationId: string, query: SearchQuery): Promise<SearchPage | undefined> {
    const { after, order, limit, kind, source } = query;
    const { values, branch, pairs } = pairWhere(conversationId, query, "");
    if (after) branch.add(order === "asc" ? "(ts, seq) > (?, ?)" : "(ts, seq) < (?, ?)", after.ts, after.seq);
    const want = values.push(limit + 1);
    const rows = await this.query<StoredEvent & { kind: string; source: string }>(
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

  /**
   * The WHERE clause of the filters, or undefined when nothing can match: over events, or with a
   * body over message_texts (only MessageEvents have one; its columns conv, seq, ts and source are
   * the event's).
   */
  private filters(conversationId: string, f: SearchFilters, page = false): Where | undefined {
    if (f.body !== undefined && f.kind !== undefined && f.kind !== "MessageEvent") return undefined;
    const where = new Where([]).add("conv = (select pk from conversations where id = ?)", conversationId);
    // Only MessageEvents have a body: with one, the query reads message_texts (which has no kind
    // column), and kind = 'MessageEvent' says nothing more.
    if (f.kind !== undefined && f.body === undefined) where.add("kind = ?", f.kind);
    if (f.source !== undefined) where.add("source = ?", f.source);
    // An empty body: every message (every row of message_texts).
    if (f.body !== undefined && f.body !== "" && !(page && walked(f.body))) where.add("body like ?", likeSubstring(f.body.toLowerCase()));
    if (f.timestampGte !== undefined) where.add("ts >= ?", f.timestampGte);
    if (f.timestampLt !== undefined) where.add("ts < ?", f.timestampLt);
    return where;
  }

  count(conversationId: string, filters: SearchFilters): Promise<number> {
    return this.run(async () => {
      if (filters.body === undefined && filters.timestampGte === undefined && filters.timestampLt === undefined) {
        // The counters: a handful of rows per conversation, whatever its size.
        const where = new Where([]).add("conv = (select pk from conversations where id = ?)", conversationId);
        if (filters.kind !== undefined) where.add("kind = ?", filters.kind);
        if (filters.source !== undefined) where.add("source = ?", filters.source);
        const [row] = await this.query<{ n: number }>(`select coalesce(sum(n), 0)::bigint as n from event_counts where ${where.text}`, where.values);
        return row!.n;
      }
      if (filters.body === undefined && (filters.kind !== undefined || filters.source !== undefined)) {
        // A time range with a kind or a source: per matching pair (as kindSourcePage), the rows of its
        // range on events_kind_source_time, the pair's own columns checked (a shared hash counts once).
        const { values, branch, pairs } = pairWhere(conversationId, filters, " and kind = c.kind and source = c.source");
        const [row] = await this.query<{ n: number }>(
          `select coalesce(sum(e.n), 0)::bigint as n from event_counts c cross join lateral (select count(*) as n from events where ${branch.text}) e where ${pairs.text}`,
          values,
        );
        return row!.n;
      }
      if (filters.body === undefined && filters.kind === undefined && filters.source === undefined) {
        // A time range alone: where the conversation's timestamps never go back (ts_ordered), the
        // events with ts ≥ t are the seqs from the first such event's on, so the count is the
        // difference of two seqs, each an index probe: O(log n), whatever the range holds.
        const [row] = await this.query<{ ordered: boolean; next_seq: number; lo: number | null; hi: number | null }>(
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
      const where = this.filters(conversationId, filters);
      if (!where) return 0;
      const [row] = await this.query<{ n: number }>(`select count(*) as n from ${filters.body === undefined ? "events" : "message_texts"} where ${where.text}`, where.values);
      return row!.n;
    });
  }

  positionOf(conversationId: string, eventId: string): Promise<Position | undefined> {
    return this.run(async () => {
      const [row] = await this.query<Position>(
        `select e.ts, e.seq from conversations c cross join lateral (select ts, seq from events e where ${sameEvent("c.pk", "$2::text")} limit 1) e where c.id = $1`,
        [conversationId, eventId],
      );
      return row && { ts: row.ts, seq: row.seq };
    });
  }

  readAfter(conversationId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return this.run(async () => {
      const n = Math.max(0, Math.floor(limit));
      if (n === 0) return [];
      return this.query<StoredEvent>(
        "select id, json, ts, seq from events where conv = (select pk from conversations where id = $1) and seq > $2 order by seq limit $3",
        [conversationId, Math.max(0, Math.floor(afterSeq)), n],
      );
    });
  }

  getDocument(key: string): Promise<string | undefined> {
    return this.run(async () => (await this.query<{ value: string }>("select value from documents where key = $1", [key]))[0]?.value);
  }

  putDocument(key: string, value: string): Promise<void> {
    return this.run(async () => {
      await this.query("insert into documents (key, value) values ($1, $2) on conflict (key) do update set value = excluded.value", [key, value]);
    });
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      await this.pool.query("select 1");
      return true;
    } catch {
      return false;
    }
  }

  /** Waits for this instance's queued writes, then closes the pool (its running queries finish first). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      await Promise.all([...this.tails.values()]);
      await this.analyzing;
      await Promise.all([this.pool.end(), this.idCheckPool?.end()]);
    })();
    return this.closing;
  }
}

/** The channel appends notify on: `<schema>:<conversation id>:<first seq>:<last seq>` of the batch. */
export const NOTIFY_CHANNEL = "acs_events";

/** The driver, `pg` and `pg-copy-streams`: loaded by the first open, not by an import of the server (~45 ms of every start, the mock's too). */
interface PostgresDriver {
  pg: typeof pg;
  copyFrom: typeof CopyFrom;
}
let driver: PostgresDriver | undefined;

/** Loads the driver (once). */
async function loadPostgresDriver(): Promise<PostgresDriver> {
  if (!driver) {
    const [pgModule, copyStreams] = await Promise.all([import("pg"), import("pg-copy-streams")]);
    driver ??= { pg: pgModule.default, copyFrom: copyStreams.from };
  }
  return driver;
}

/** The driver, once a store has been opened (what a store and its live fan-out use). */
export function postgresDriver(): PostgresDriver {
  if (!driver) throw new Error("the PostgreSQL driver is loaded by openPostgresStore");
  return driver;
}

// int8 as numbers: seq and counts are far below 2^53; ts past it rounds as the events' own did.
// Per pool, not pg.types.setTypeParser, which would change every other pg user in the process.
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === 20 ? Number : postgresDriver().pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
};

/** The pool settings of a store (also used by the live fan-out for its LISTEN connection). */
function poolConfig(options: PostgresStoreOptions): pg.PoolConfig {
  const schema = options.schema ?? "acs";
  return {
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    statement_timeout: options.statementTimeoutMs ?? 10_000,
    application_name: "acs-server",
    // gin_pending_list_limit: what a body search reads of the trigram index's pending list at most (migrations 5 and 8).
    options: `-c search_path=${quoteIdent(schema).replaceAll(" ", "\\ ")},public -c gin_pending_list_limit=${GIN_PENDING_LIST_KB}`,
    types,
  };
}

/**
 * Opens (and migrates) a PostgreSQL store. Safe to call from several processes at once.
 * @throws StoreUnavailableError when the database does not answer
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresEventStore> {
  const schema = options.schema ?? "acs";
  const { pg } = await loadPostgresDriver();
  const pool = new pg.Pool(poolConfig(options));
  // An idle connection that dies (a restart) is reported here; without a listener it would end the
  // process. The pool drops it and opens another on the next query.
  pool.on("error", () => undefined);
  try {
    await migratePostgres(pool, schema);
    const store = new PostgresEventStore(pool, schema, options.url, Math.max(1, Math.floor(options.bodyScanBudget ?? BODY_SCAN_BUDGET)), Math.max(1, options.analyzeAfterRows ?? ANALYZE_AFTER_ROWS));
    if (options.copyMinRows !== undefined) store.copyMinRows = options.copyMinRows;
    const { rows: [owner] } = await pool.query<{ owns: boolean }>("select pg_has_role(current_user, relowner, 'USAGE') as owns from pg_class where oid = 'message_texts_body'::regclass");
    store.ownsBodyIndex = owner?.owns === true;
    // One more connection than maxConnections, used by replays only (insertChecked).
    store.idCheckPool = new pg.Pool({ ...poolConfig(options), max: 1, application_name: "acs-server id check" });
    store.idCheckPool.on("error", () => undefined); // as the pool's, below
    await store.removeStaleImports();
    return store;
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw unavailable(error) ?? error;
  }
}
