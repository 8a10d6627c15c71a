/**
 * The embedded SQLite EventStore (better-sqlite3, WAL). Schema and its history: migrations.ts.
 *
 * ## Order and paging
 * One total order per conversation: (ts, seq), ts = the event's timestamp as microseconds UTC,
 * seq = append order. DESC is its exact reverse. Every filter and cursor becomes two strict
 * row-value bounds, `(ts, seq) > (loTs, loSeq) AND (ts, seq) < (hiTs, hiSeq)` (seq >= 1, so
 * `ts >= x` is `(ts, seq) > (x, 0)` and `ts < x` is `(ts, seq) < (x, 0)`; a cursor is the position
 * itself), and a page is a keyset range scan of the composite index that matches the equality
 * filters — (conversation, ts, seq), (conversation, kind, …), (conversation, source, …) or
 * (conversation, kind, source, …) — reading `limit + 1` rows: no OFFSET, no sort, no scan. The index
 * is named with INDEXED BY so that the plan cannot drift (without statistics SQLite would otherwise
 * pick the time index for `kind = ?` and filter). Kinds and sources are stored as integer codes
 * (table `names`, class Names): a filter binds the code of its name, and a name never stored
 * matches nothing without a query.
 *
 * The search endpoint reads the same page through searchJson: one row whose aggregates hold the
 * page's size, positions and JSON texts (joined by `,`, as one BLOB), so that 100 events become one
 * buffer instead of 100 strings decoded from UTF-8 and encoded back (a page of 100 from the mock's
 * 5,000-event conversation: 60–90 µs, against 200–240 µs for `search`, the join and the encoding).
 * The positions prove the order the aggregates saw.
 *
 * ## Body search
 * Only MessageEvents match. Their searchable text (text content + extended_content + reasoning
 * content, joined by a space as the reference joins them) is stored lower-cased (String#toLowerCase,
 * the equivalent of Python's str.lower()) in `message_texts`, with the message's seq, ts and
 * source, and indexed by an FTS5 trigram table (`message_fts`, external content) that the store
 * fills in the inserting transaction. A match is always confirmed with `instr(text, lower(body))`,
 * so the semantics are exactly `body.lower() in text.lower()`; FTS only narrows the candidates.
 * The body goes to FTS as at most FTS_TERMS of its distinct trigrams, each a quoted string (`"`
 * doubled, so `AND`, `NEAR(`, `*`, `:` are literal), joined by AND: a text holding the body holds
 * all of them. (As one phrase, a body of 1,000 repeated characters was 998 copies of one trigram,
 * and FTS5 matched such a phrase against each candidate's positions in quadratic time: seconds
 * for 1,500 messages, minutes for 30,000.)
 *
 * The FTS rowid is `events.key = (conversation << 32) | seq`: `rowid BETWEEN conv<<32 AND
 * conv<<32|0xFFFFFFFF` restricts an FTS query to one conversation inside the full-text index, so
 * other conversations' messages cost nothing, and no query reads a candidate's events row.
 *
 * Every page does bounded work (issue 13: a page must not hold the event loop, whatever the body):
 *  - FTS: when the conversation has at most FTS_CANDIDATES candidates (counted by a probe that
 *    stops at FTS_CANDIDATES + 1, the FTS iterator only), they are confirmed, filtered and sorted:
 *    cheap for a rare term, and bounded by FTS_CANDIDATES.
 *  - walk: otherwise (a frequent term, or a body of 1–2 characters, which trigrams cannot serve),
 *    the (conversation, kind=MessageEvent[, source], ts, seq) index is walked in query order, each
 *    message tested with instr (index + one text row, no events row), until `limit + 1` hits or
 *    SCAN_BUDGET messages. A frequent term fills the page in a few hundred messages. When the
 *    budget runs out first (a term frequent elsewhere but sparse here), the page is shorter than
 *    `limit` — possibly empty — and its cursor resumes the walk after the last message tested, so
 *    the pages together are exactly the matching events, in order, none twice.
 * A page therefore costs at most ~FTS_CANDIDATES candidates or SCAN_BUDGET walked messages (at 1M
 * events, tens of milliseconds at worst; a fraction of a millisecond to a few ms in the common
 * cases). `count` with a body is exact, O(its candidates): the server runs it off the request
 * thread (read-pool.ts).
 * `instr` on pre-lower-cased text is used rather than LIKE: it is an exact substring test with no
 * wildcard escaping, and SQLite's LIKE folds ASCII only.
 *
 * ## Ingest
 * A batch is one IMMEDIATE transaction: every event is checked first (timestamp, source), then the
 * events go in INSERT_CHUNK rows per statement, each chunk's id hashes into `event_ids` (whose
 * unique key is the duplicate check, see resolveHeldHashes), then the message texts and their FTS
 * entries, then the conversation's counters. What each choice saves, measured on replay ingest
 * (migrations.ts, version 2, has the details): no FTS trigger (one FTS segment per transaction
 * instead of per message), integer kind and source, a compact id table keyed by a 32-bit hash,
 * multi-row inserts without statement journals, 8 KiB pages, and WAL checkpoints on a worker
 * thread (BackgroundCheckpointer). Replay of a 1M-event conversation went from ~35,000 to
 * ~70,000 events/s on the 2-core development machine.
 */
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import type { ConversationLifecycleStatus } from "@acs-toolkit/schema";
import { privateFileSync, privateIfExistsSync } from "../private-files.js";
import { WorkerPool } from "../workers/pool.js";
import { assertSchemaSupported, migrate } from "./migrations.js";
import { prepareEvent, searchTextOf, type PreparedEvent } from "./prepare.js";

export { messageSearchText } from "./prepare.js";
import {
  ConversationExistsError,
  ConversationNotFoundError,
  DuplicateEventIdError,
  type ConversationRecord,
  type EventStore,
  type EventToStore,
  type NewConversation,
  type Position,
  type SearchFilters,
  type SearchPage,
  type JsonPage,
  type SearchQuery,
  type StoredEvent,
  type ImportHandle,
} from "./types.js";

/** The handle of a staged creation (see ImportHandle). */
class StagedImport implements ImportHandle {
  written = 0;
  constructor(
    readonly pk: number,
    readonly stagingId: string,
    /** The conversation's id once finished. */
    readonly finalId: string,
  ) {}
}

/** Thrown by appendEvents and setStatus for an unknown conversation id. */
export interface SqliteStoreOptions {
  /** Database file path; ":memory:" for a private in-memory database. */
  file: string;
  /** How long a writer waits for a lock held by another connection, ms. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * The two thresholds of the body-search plan (see the module comment). The defaults suit every
   * size; tests lower them to reach each branch with a few events.
   */
  bodySearch?: { ftsCandidates?: number; scanBudget?: number };
  /**
   * Read every searchJson page with its order stated in the aggregates (the path taken when the
   * fast read comes back out of order); for tests. Default false.
   */
  sortedJsonPages?: boolean;
  /** Open an existing store for reading only (no migration, no write): what a reader thread does. */
  readonly?: boolean;
  /**
   * Reader threads (workers/read-worker.ts, each with its own read-only connection) that run
   * `countAsync` and body-filtered `searchJsonAsync`, so that they never hold the calling thread;
   * 0 runs them in place. File stores only (an in-memory database has one connection). Default 0.
   */
  readThreads?: number;
}

export interface SqliteEventStore extends EventStore {
  readonly kind: "sqlite";
  /**
   * The EXPLAIN QUERY PLAN lines of every statement `search` (or `count`, or `searchJson` without
   * a body filter) would run for this query, in order; for tests and diagnostics.
   */
  explain(conversationId: string, query: SearchQuery, what?: "search" | "count" | "searchJson"): string[][];
  /** How many searchJson pages came back out of order and were read again sorted (expected: 0). */
  readonly unsortedPages: number;
}

/**
 * Body search (see the module comment): up to this many FTS candidates in a conversation, a page
 * is served by sorting them; beyond, by walking the messages in order.
 */
export const FTS_CANDIDATES = 1024;
/** Messages a walk tests for one page; past it the page ends short and its cursor resumes the walk. */
export const SCAN_BUDGET = 20_000;
/** Distinct trigrams of the body that an FTS query asks for (spread over the body). */
export const FTS_TERMS = 16;

const MAX_LIMIT = 100;
/** The id of a conversation being imported: not a UUID, so no request can name it. */
const STAGING_PREFIX = "~import~";
const MAX_CONVERSATION_PK = 2 ** 31 - 1;
const MAX_SEQ = 2 ** 32 - 1;
/** Beyond any event time (µs); exact as a double. */
const FAR = 2 ** 62;

// ---------------------------------------------------------------------------------------------
// SQL — all of it, static statements first, then the few shapes the search statements take.
// ---------------------------------------------------------------------------------------------

const CONVERSATION_COLUMNS =
  "pk, id, status, created_at, updated_at, event_count, repository, selected_branch, git_provider, next_seq";

const SQL = {
  insertConversation: `INSERT INTO conversations
      (id, status, created_at, updated_at, event_count, repository, selected_branch, git_provider, next_seq)
    VALUES (:id, :status, :now, :now, 0, :repository, :selectedBranch, :gitProvider, 1)`,
  conversationById: `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = ?`,
  conversationPk: "SELECT pk FROM conversations WHERE id = ?",
  advanceConversation: `UPDATE conversations
    SET event_count = event_count + :count, next_seq = next_seq + :count, updated_at = :now
    WHERE pk = :pk`,
  setStatus: "UPDATE conversations SET status = :status, updated_at = :now WHERE id = :id",
  /** The seq of the event whose id hash is :idHash (see migrations.ts, version 2). */
  hashHolder: "SELECT seq FROM event_ids WHERE conversation = :conv AND id_hash = :idHash",
  eventIdAt: "SELECT event_id AS id FROM events WHERE key = (:conv << 32) | :seq",
  /** No change when the id is there already: a duplicate. */
  addCollision: "INSERT OR IGNORE INTO event_id_collisions (conversation, event_id, seq) VALUES (:conv, :id, :seq)",
  insertMessageText: `INSERT OR FAIL INTO message_texts (key, seq, ts, source, text)
    VALUES ((:conv << 32) | :seq, :seq, :ts, :source, :text)`,
  /** In the same transaction as the text (no trigger: see migrations.ts, version 2). */
  indexMessageText: "INSERT INTO message_fts (rowid, text) VALUES ((:conv << 32) | :seq, :text)",
  nameCode: "SELECT code FROM names WHERE name = ?",
  addName: "INSERT INTO names (name) VALUES (?)",
  /** The events at the seqs of :seqs (a JSON array), in no particular order: one statement per page. */
  eventsAt: `SELECT seq, event_id AS id, json FROM events
    WHERE key IN (SELECT (:conv << 32) | value FROM json_each(:seqs))`,
  /** Append order is the key order within a conversation: a range scan of the primary key. */
  readAfter: `SELECT ts, seq, event_id AS id, json FROM events
    WHERE key > ((:conv << 32) | :afterSeq) AND key <= ((:conv << 32) | 4294967295)
    ORDER BY key LIMIT :limit`,
  /** The event holding the id's hash, if it has this id; else the id among the collisions. */
  positionOf: `SELECT e.ts, e.seq
    FROM event_ids AS i JOIN events AS e ON e.key = (i.conversation << 32) | i.seq
    WHERE i.conversation = :conv AND i.id_hash = :idHash AND e.event_id = :id
    UNION ALL
    SELECT e.ts, e.seq
    FROM event_id_collisions AS c JOIN events AS e ON e.key = (c.conversation << 32) | c.seq
    WHERE c.conversation = :conv AND c.event_id = :id`,
  getDocument: "SELECT value FROM documents WHERE key = ?",
  putDocument: `INSERT INTO documents (key, value) VALUES (:key, :value)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
  ping: "SELECT 1 AS ok",
  renameConversation: "UPDATE conversations SET id = :id, created_at = :now, updated_at = :now WHERE pk = :pk",
  stagedConversations: `SELECT pk FROM conversations WHERE id LIKE '${STAGING_PREFIX}%'`,
  /** Removing a staged conversation, a window of seqs at a time (FTS5 external content needs the old text). */
  discardFts: `INSERT INTO message_fts (message_fts, rowid, text)
    SELECT 'delete', key, text FROM message_texts WHERE key >= (:conv << 32) | :from AND key < (:conv << 32) | :to`,
  discardTexts: "DELETE FROM message_texts WHERE key >= (:conv << 32) | :from AND key < (:conv << 32) | :to",
  discardEvents: "DELETE FROM events WHERE key >= (:conv << 32) | :from AND key < (:conv << 32) | :to",
  discardIds: `DELETE FROM event_ids WHERE conversation = :conv AND id_hash IN
    (SELECT id_hash FROM event_ids WHERE conversation = :conv LIMIT :n)`,
  discardCollisions: "DELETE FROM event_id_collisions WHERE conversation = :conv",
  discardConversation: "DELETE FROM conversations WHERE pk = :conv",
  stagedNextSeq: "SELECT next_seq FROM conversations WHERE pk = :conv",
  setNextSeq: "UPDATE conversations SET next_seq = :seq WHERE pk = :conv",
  /** Body: how many FTS candidates this conversation has, counting no further than :k. */
  probe: `SELECT count(*) AS n FROM (
    SELECT rowid FROM message_fts
    WHERE message_fts MATCH :match AND rowid BETWEEN (:conv << 32) AND ((:conv << 32) | 4294967295)
    LIMIT :k)`,
} as const;

/**
 * Events are inserted INSERT_CHUNK rows per statement: per-statement work (binding setup, the
 * result object, VDBE start) is paid once per chunk (+35% replay ingest against one row per
 * statement; 16 to 200 rows measure the same). It takes both `OR FAIL` and the deferred foreign
 * keys (migrations.ts, version 2) to keep a multi-row insert free of a statement journal (with
 * either alone, each statement opens one); any failure still rolls the whole transaction back.
 */
const INSERT_CHUNK = 64;

/**
 * `rows` events; per row the parameters conversation, seq, ts, event_id, kind, source, json.
 * (Anonymous parameters: better-sqlite3 binds an array only to those.)
 */
function insertEventsSql(rows: number): string {
  const values = new Array<string>(rows).fill("((? << 32) | ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
  return `INSERT OR FAIL INTO events (key, conversation, seq, ts, event_id, kind, source, json) VALUES ${values}`;
}
const EVENT_PARAMETERS = 9;

/**
 * `rows` id hashes; per row the parameters conversation, id_hash, seq. A hash already held is
 * skipped (`changes` says how many went in): see SqliteStore.resolveHeldHashes.
 */
function insertEventIdsSql(rows: number): string {
  return `INSERT OR IGNORE INTO event_ids (conversation, id_hash, seq) VALUES ${new Array<string>(rows).fill("(?, ?, ?)").join(", ")}`;
}
const EVENT_ID_PARAMETERS = 3;

type Order = "asc" | "desc";

/** The bounds every search and count statement takes; see "Order and paging". */
const RANGE = "(ts, seq) > (:loTs, :loSeq) AND (ts, seq) < (:hiTs, :hiSeq)";
const E_RANGE = "(e.ts, e.seq) > (:loTs, :loSeq) AND (e.ts, e.seq) < (:hiTs, :hiSeq)";
const M_RANGE = "(m.ts, m.seq) > (:loTs, :loSeq) AND (m.ts, m.seq) < (:hiTs, :hiSeq)";

function orderBy(order: Order, prefix = ""): string {
  const dir = order === "asc" ? "ASC" : "DESC";
  return `ORDER BY ${prefix}ts ${dir}, ${prefix}seq ${dir}`;
}

function eventIndex(kind: boolean, source: boolean): string {
  if (kind && source) return "events_by_kind_source";
  if (kind) return "events_by_kind";
  if (source) return "events_by_source";
  return "events_by_time";
}

function equalities(kind: boolean, source: boolean, prefix = ""): string {
  return (kind ? ` AND ${prefix}kind = :kind` : "") + (source ? ` AND ${prefix}source = :source` : "");
}

const SEARCH_SQL = {
  /** A page without a body filter: `limit + 1` rows of one index range. */
  page: (kind: boolean, source: boolean, order: Order) =>
    `SELECT seq, ts, event_id AS id, json FROM events INDEXED BY ${eventIndex(kind, source)}
    WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE}
    ${orderBy(order)} LIMIT :n`,
  /**
   * The page of `page` as one row: its size, its positions and its JSON texts joined by `,` as a
   * BLOB (one buffer, no string per event). Aggregates see the rows in the order the LIMITed
   * subquery yields them, which SQLite does not promise: searchJson checks the positions' order
   * and, if they are not in it, runs pageJsonSorted, whose order is promised.
   */
  pageJson: (kind: boolean, source: boolean, order: Order) =>
    `SELECT count(*) AS n, group_concat(ts) AS ts, group_concat(seq) AS seq, CAST(group_concat(json, ',') AS BLOB) AS json
    FROM (SELECT ts, seq, json FROM events INDEXED BY ${eventIndex(kind, source)}
      WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE}
      ${orderBy(order)} LIMIT :n)`,
  /** pageJson with the order stated in each aggregate (a sort of the page: about 3 times slower). */
  pageJsonSorted: (kind: boolean, source: boolean, order: Order) =>
    `SELECT count(*) AS n, group_concat(ts, ',' ${orderBy(order)}) AS ts, group_concat(seq, ',' ${orderBy(order)}) AS seq,
      CAST(group_concat(json, ',' ${orderBy(order)}) AS BLOB) AS json
    FROM (SELECT ts, seq, json FROM events INDEXED BY ${eventIndex(kind, source)}
      WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE}
      ${orderBy(order)} LIMIT :n)`,
  /** Whether anything matches in the bounds (hasMore of a pageJson page). */
  any: (kind: boolean, source: boolean) =>
    `SELECT 1 AS one FROM events INDEXED BY ${eventIndex(kind, source)}
    WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE} LIMIT 1`,
  count: (kind: boolean, source: boolean) =>
    `SELECT count(*) AS n FROM events INDEXED BY ${eventIndex(kind, source)}
    WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE}`,
  /** Body, walk: the conversation's messages in order, each tested (index + text only). */
  walk: (source: boolean, order: Order) =>
    `SELECT e.seq, e.ts, instr(m.text, :needle) > 0 AS hit
    FROM events AS e INDEXED BY ${eventIndex(true, source)} JOIN message_texts AS m ON m.key = e.key
    WHERE e.conversation = :conv AND e.kind = :messageKind${equalities(false, source, "e.")} AND ${E_RANGE}
    ${orderBy(order, "e.")}`,
  walkCount: (source: boolean) =>
    `SELECT count(*) AS n
    FROM events AS e INDEXED BY ${eventIndex(true, source)} JOIN message_texts AS m ON m.key = e.key
    WHERE e.conversation = :conv AND e.kind = :messageKind${equalities(false, source, "e.")} AND ${E_RANGE}
      AND instr(m.text, :needle) > 0`,
  /** Body, from FTS: the candidates of this conversation (rowid range), confirmed, sorted. */
  fts: (source: boolean, order: Order) =>
    `SELECT m.seq, m.ts
    FROM message_fts AS f JOIN message_texts AS m ON m.key = f.rowid
    WHERE message_fts MATCH :match AND f.rowid BETWEEN (:conv << 32) AND ((:conv << 32) | 4294967295)
      ${equalities(false, source, "m.")} AND ${M_RANGE} AND instr(m.text, :needle) > 0
    ${orderBy(order, "m.")} LIMIT :n`,
  ftsCount: (source: boolean) =>
    `SELECT count(*) AS n
    FROM message_fts AS f JOIN message_texts AS m ON m.key = f.rowid
    WHERE message_fts MATCH :match AND f.rowid BETWEEN (:conv << 32) AND ((:conv << 32) | 4294967295)
      ${equalities(false, source, "m.")} AND ${M_RANGE} AND instr(m.text, :needle) > 0`,
} as const;

/**
 * The FTS5 query of a (lower-cased) body: up to FTS_TERMS of its distinct trigrams, spread over it,
 * each an FTS5 string (`"` doubled: nothing else is syntax), joined by AND. Undefined when the body
 * has fewer than 3 characters or a NUL (which would end the FTS query string early).
 */
export function ftsQuery(needle: string): string | undefined {
  const chars = [...needle];
  if (chars.length < 3 || needle.includes("\u0000")) return undefined;
  const trigrams = [...new Set(chars.slice(2).map((_, i) => chars.slice(i, i + 3).join("")))];
  const step = trigrams.length / Math.min(FTS_TERMS, trigrams.length);
  const chosen = Array.from({ length: Math.min(FTS_TERMS, trigrams.length) }, (_, i) => trigrams[Math.floor(i * step)]!);
  return chosen.map((trigram) => `"${trigram.replaceAll('"', '""')}"`).join(" AND ");
}

// ---------------------------------------------------------------------------------------------

interface ConversationRow {
  pk: number;
  id: string;
  status: ConversationLifecycleStatus;
  created_at: string;
  updated_at: string;
  event_count: number;
  repository: string | null;
  selected_branch: string | null;
  git_provider: ConversationRecord["gitProvider"];
  next_seq: number;
}

interface Bounds {
  loTs: number;
  loSeq: number;
  hiTs: number;
  hiSeq: number;
}

type PageRow = StoredEvent;
/** A pageJson row: the positions as comma-separated integers (NULL, like json, for no rows). */
interface JsonPageRow {
  n: number;
  ts: string | null;
  seq: string | null;
  json: Buffer | null;
}

const EMPTY_PAGE: JsonPage = Object.freeze({ json: new Uint8Array(0), count: 0, last: undefined, hasMore: false });

/** The limit and order of a query, checked (RangeError). */
function checkedPaging(query: SearchQuery): { limit: number; order: Order } {
  const { limit, order } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new RangeError(`limit must be an integer in 1..${MAX_LIMIT}, got ${limit}`);
  }
  if (order !== "asc" && order !== "desc") throw new RangeError(`order must be "asc" or "desc"`);
  return { limit, order };
}

/**
 * The last position of a pageJson row when its positions are strictly in `order` (so its JSON
 * texts are too: every aggregate of the row saw the rows in one order); undefined when they are not.
 */
function lastInOrder(row: JsonPageRow, order: Order): Position | undefined {
  const tsList = new IntegerList(row.ts!);
  const seqList = new IntegerList(row.seq!);
  let prevTs = 0;
  let prevSeq = 0;
  let count = 0;
  for (; !tsList.done && !seqList.done; count++) {
    const ts = tsList.next();
    const seq = seqList.next();
    if (count > 0 && (order === "asc" ? !before(prevTs, prevSeq, ts, seq) : !before(ts, seq, prevTs, prevSeq))) return undefined;
    prevTs = ts;
    prevSeq = seq;
  }
  return count === row.n && tsList.done && seqList.done ? { ts: prevTs, seq: prevSeq } : undefined;
}

/**
 * The integers of a `group_concat` list, read in order by a scan of the digits (a page's positions
 * in 4 µs, against 13 µs for split and Number), with Number for a value past 2^53, where the scan
 * would round differently from how SQLite's integers become numbers.
 */
class IntegerList {
  private at = 0;
  constructor(private readonly text: string) {}

  get done(): boolean {
    return this.at >= this.text.length;
  }

  next(): number {
    const { text } = this;
    const from = this.at;
    let i = from;
    const negative = text.charCodeAt(i) === 45; // "-"
    if (negative) i++;
    let value = 0;
    for (let c: number; i < text.length && (c = text.charCodeAt(i)) !== 44; i++) value = value * 10 + (c - 48);
    this.at = i + 1;
    if (value > Number.MAX_SAFE_INTEGER) return Number(text.slice(from, i));
    return negative ? -value : value;
  }
}

/** A SearchPage as a JsonPage. */
function joinPage(page: SearchPage): JsonPage {
  const last = page.resumeAfter ?? page.items[page.items.length - 1];
  return {
    json: Buffer.from(page.items.map((e) => e.json).join(",")),
    count: page.items.length,
    last: last && { ts: last.ts, seq: last.seq },
    hasMore: page.hasMore,
  };
}
interface WalkRow extends Position {
  hit: 0 | 1;
}

const before = (aTs: number, aSeq: number, bTs: number, bSeq: number) => aTs < bTs || (aTs === bTs && aSeq < bSeq);

function boundsOf(query: SearchQuery | SearchFilters, order: Order = "asc", after?: Position): Bounds {
  const b: Bounds = { loTs: -FAR, loSeq: 0, hiTs: FAR, hiSeq: 0 };
  if (query.timestampGte !== undefined) b.loTs = query.timestampGte;
  if (query.timestampLt !== undefined) b.hiTs = query.timestampLt;
  if (after) narrowAfter(b, order, after);
  return b;
}

/** Narrows `b` to the positions strictly after `p` in `order`. */
function narrowAfter(b: Bounds, order: Order, p: Position): void {
  if (order === "asc") {
    if (before(b.loTs, b.loSeq, p.ts, p.seq)) [b.loTs, b.loSeq] = [p.ts, p.seq];
  } else if (before(p.ts, p.seq, b.hiTs, b.hiSeq)) [b.hiTs, b.hiSeq] = [p.ts, p.seq];
}

const isEmpty = (b: Bounds) => !before(b.loTs, b.loSeq, b.hiTs, b.hiSeq);

/**
 * The hash of an event id that `event_ids` is keyed by (see migrations.ts, version 2): FNV-1a
 * with a final mix, as a signed 32-bit integer (4 bytes in a SQLite record); version 1 stored
 * these 32 bits followed by 16 more. Collisions cost a lookup in event_id_collisions: never
 * correctness.
 */
export function idHash(id: string): number {
  let a = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) a = Math.imul(a ^ id.charCodeAt(i), 0x01000193);
  a ^= a >>> 16;
  return a | 0;
}

/**
 * The integer codes of kind and source strings (table `names`, migrations.ts version 2). A code
 * never changes once assigned, so a code read is cached for good; `forget` drops the cache after
 * a failed write transaction, which may have assigned codes that were rolled back.
 */
class Names {
  private readonly codes = new Map<string, number>();

  constructor(
    private readonly find: Database.Statement,
    private readonly add: Database.Statement,
  ) {}

  /** The code of `name`, or undefined when no stored event ever had it. Reads only. */
  lookup(name: string): number | undefined {
    let code = this.codes.get(name);
    if (code === undefined) {
      code = (this.find.get(name) as { code: number } | undefined)?.code;
      if (code !== undefined) this.codes.set(name, code);
    }
    return code;
  }

  /** Inside a write transaction: the code of `name`, assigned on its first use. */
  intern(name: string): number {
    let code = this.lookup(name);
    if (code === undefined) {
      code = Number(this.add.run(name).lastInsertRowid);
      this.codes.set(name, code);
    }
    return code;
  }

  forget(): void {
    this.codes.clear();
  }
}

function toRecord(row: ConversationRow): ConversationRecord {
  return {
    id: row.id,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    eventCount: row.event_count,
    repository: row.repository,
    selectedBranch: row.selected_branch,
    gitProvider: row.git_provider,
  };
}

// ---------------------------------------------------------------------------------------------
// WAL checkpoints
// ---------------------------------------------------------------------------------------------

/** New databases: fewer, larger pages (fewer WAL frames, shallower trees; ingest +10% at 1M). */
const PAGE_SIZE = 8192;
/**
 * The connection's own checkpoint (in the committing write, waiting on fsync) runs when the WAL
 * passes this size. It copies the whole WAL on the request thread (hundreds of ms for 128 MB), so
 * while the background checkpointer works it is only a backstop (WAL_BACKSTOP_BYTES); when the
 * checkpointer fails, the writer checkpoints at WAL_AUTOCHECKPOINT_BYTES again.
 */
const WAL_AUTOCHECKPOINT_BYTES = 128 * 1024 * 1024;
const WAL_BACKSTOP_BYTES = 1024 * 1024 * 1024;
/** Event JSON committed between two requests to the background checkpointer. */
const CHECKPOINT_REQUEST_BYTES = 1024 * 1024;
/**
 * Commits between two requests, whatever their size. A commit of one small event still writes
 * about ten 8 KiB pages to the WAL (the event, its indexes, its id, its message text and FTS
 * entry), so counting JSON bytes alone let small appends grow the WAL by ~85 KB per commit to the
 * 1 GB backstop, where the writer checkpointed and truncated it on the request thread (200–500 ms,
 * found by the fuzzer's WebSocket floods). 64 commits keep each checkpoint to a few MB.
 */
const CHECKPOINT_REQUEST_COMMITS = 64;
/** WAL frames (8 KiB pages: 32 MB) past which the checkpointer starts the WAL over (RESTART). */
const WAL_RESTART_FRAMES = 4096;
/** How long the checkpointer waits for the writer before a RESTART; busy, it tries at the next request. */
const RESTART_BUSY_TIMEOUT_MS = 20;

/**
 * The worker's code (CommonJS, run with `eval`: no separate file to ship or bundle). Requests
 * that queued up while a checkpoint ran are served by one more checkpoint, not one each.
 */
const CHECKPOINT_WORKER = `
const { parentPort, receiveMessageOnPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("busy_timeout = " + workerData.busyTimeoutMs);
parentPort.on("message", (message) => {
  let closing = message === "close";
  for (let next; !closing && (next = receiveMessageOnPort(parentPort)); ) closing = next.message === "close";
  if (closing) {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [{ log, checkpointed }] = db.pragma("wal_checkpoint(PASSIVE)");
    // Under steady writes a PASSIVE checkpoint never ends level with the WAL, so the writer never
    // starts it over and it grows to the backstop. Once it is long, start it over from here: the
    // frames left are few, so the writer waits for them briefly, and the file never grows past
    // journal_size_limit (cutting it back is what cost the request thread).
    if (log >= workerData.restartFrames && checkpointed >= log - workerData.restartFrames / 4) db.pragma("wal_checkpoint(RESTART)");
  } catch {
    // Busy, or failed: the next request tries again, and the writer's backstop still bounds the WAL.
  }
});
`;

/**
 * Copies the WAL into the database on a worker thread with its own connection, so that ingest
 * does not wait for it. A checkpoint reads every new WAL frame, writes it to the database file
 * and fsyncs both; run by the committing connection (SQLite's wal_autocheckpoint) it was ~10% of
 * replay ingest at 1M events plus ~7% waiting on fsync (+20% without it). A PASSIVE checkpoint
 * runs alongside the writer and its readers (WAL allows it) and never blocks them; the WAL stays
 * durable across a crash at any point of it. The worker starts after CHECKPOINT_REQUEST_BYTES of
 * event JSON; the writer's wal_autocheckpoint remains as a backstop on the WAL's size.
 */
class BackgroundCheckpointer {
  private worker: Worker | undefined;
  private failed = false;
  private pendingBytes = 0;
  private pendingCommits = 0;

  /** @param onFailure called once when there will be no background checkpoints (the writer takes over) */
  constructor(
    private readonly file: string,
    private readonly onFailure: () => void,
  ) {}

  private fail(): void {
    if (this.failed) return;
    this.failed = true;
    this.onFailure();
  }

  /** After a committed write of `bytes` of event JSON. */
  committed(bytes: number): void {
    this.pendingBytes += bytes;
    this.pendingCommits++;
    if ((this.pendingBytes < CHECKPOINT_REQUEST_BYTES && this.pendingCommits < CHECKPOINT_REQUEST_COMMITS) || this.failed) return;
    this.pendingBytes = 0;
    this.pendingCommits = 0;
    try {
      this.worker ??= this.start();
      this.worker.postMessage("checkpoint");
    } catch {
      // No worker thread to be had: the write has committed all the same, and the writer's
      // wal_autocheckpoint does the work.
      this.fail();
    }
  }

  private start(): Worker {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    const worker = new Worker(CHECKPOINT_WORKER, { eval: true, workerData: { driver, file: this.file, restartFrames: WAL_RESTART_FRAMES, busyTimeoutMs: RESTART_BUSY_TIMEOUT_MS } });
    worker.unref(); // never keeps the process alive
    worker.on("error", () => {
      // Cannot open the file, say: leave checkpoints to the writer's wal_autocheckpoint.
      this.fail();
      this.worker = undefined;
    });
    return worker;
  }

  /** The worker closes its connection and ends; a checkpoint in progress finishes first. */
  close(): void {
    this.worker?.postMessage("close");
    this.worker = undefined;
    this.failed = true;
  }
}

class SqliteStore implements SqliteEventStore {
  readonly kind = "sqlite" as const;
  private readonly stmts: { [K in keyof typeof SQL]: Database.Statement };
  private readonly cache = new Map<string, Database.Statement>();
  private readonly inTransaction: Database.Transaction<<T>(fn: () => T) => T>;
  private readonly names: Names;
  /** Event JSON written by the write transaction in progress (for the checkpointer). */
  private bytesInTransaction = 0;

  private readonly ftsCandidates: number;
  private readonly scanBudget: number;
  unsortedPages = 0;

  constructor(
    private readonly db: Database.Database,
    tuning: SqliteStoreOptions["bodySearch"] = {},
    private readonly checkpointer?: BackgroundCheckpointer,
    private readonly sortedJsonPages = false,
    private readonly reads?: WorkerPool,
  ) {
    this.ftsCandidates = tuning.ftsCandidates ?? FTS_CANDIDATES;
    this.scanBudget = Math.max(1, tuning.scanBudget ?? SCAN_BUDGET);
    this.stmts = Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, db.prepare(sql)])) as typeof this.stmts;
    this.inTransaction = db.transaction(<T>(fn: () => T): T => fn());
    this.names = new Names(this.stmts.nameCode, this.stmts.addName);
  }

  /** One IMMEDIATE transaction (takes the write lock up front: no upgrade deadlock under WAL). */
  private write<T>(fn: () => T): T {
    this.bytesInTransaction = 0;
    let result: T;
    try {
      result = this.inTransaction.immediate(fn) as T;
    } catch (err) {
      this.names.forget(); // codes assigned in the rolled-back transaction are gone
      throw err;
    }
    this.checkpointer?.committed(this.bytesInTransaction);
    return result;
  }

  private statement(key: string, sql: () => string): Database.Statement {
    let s = this.cache.get(key);
    if (!s) {
      s = this.db.prepare(sql());
      this.cache.set(key, s);
    }
    return s;
  }

  private pkOf(conversationId: string): number | undefined {
    return (this.stmts.conversationPk.get(conversationId) as { pk: number } | undefined)?.pk;
  }

  // -- writes ----------------------------------------------------------------------------------

  createConversation(conversation: NewConversation, events: readonly EventToStore[]): ConversationRecord {
    return this.write(() => {
      if (this.pkOf(conversation.id) !== undefined) throw new ConversationExistsError(conversation.id);
      const now = new Date().toISOString();
      const { lastInsertRowid } = this.stmts.insertConversation.run({
        id: conversation.id,
        status: conversation.status,
        now,
        repository: conversation.repository ?? null,
        selectedBranch: conversation.selectedBranch ?? null,
        gitProvider: conversation.gitProvider ?? null,
      });
      const pk = Number(lastInsertRowid);
      if (pk > MAX_CONVERSATION_PK) throw new Error("conversation table is full (2^31 - 1 conversations)");
      this.insertEvents(pk, 1, events, now);
      return toRecord(this.stmts.conversationById.get(conversation.id) as ConversationRow);
    });
  }

  appendEvents(conversationId: string, events: readonly EventToStore[]): StoredEvent[] {
    return this.write(() => {
      const row = this.stmts.conversationById.get(conversationId) as ConversationRow | undefined;
      if (!row) throw new ConversationNotFoundError(conversationId);
      return this.insertEvents(row.pk, row.next_seq, events, new Date().toISOString());
    });
  }

  /** Inside a write transaction. */
  private insertEvents(conv: number, firstSeq: number, events: readonly EventToStore[], now: string): StoredEvent[] {
    // Every event is checked before the first row goes in (a failure also rolls back the names
    // interned here: see write).
    return this.insertPrepared(conv, firstSeq, events.map((entry, index) => prepareEvent(entry, index)), now);
  }

  /** Inside a write transaction. */
  private insertPrepared(conv: number, firstSeq: number, rows: readonly PreparedEvent[], now: string): StoredEvent[] {
    const count = rows.length;
    if (count === 0) return [];
    if (firstSeq + count - 1 > MAX_SEQ) throw new Error("conversation is full (2^32 - 1 events)");
    const stored: StoredEvent[] = new Array(count);
    const kinds: number[] = new Array(count);
    const sources: number[] = new Array(count);
    const hashes: number[] = new Array(count);
    for (let index = 0; index < count; index++) {
      const { id, json, ts, kind, source } = rows[index]!;
      stored[index] = { id, json, ts, seq: firstSeq + index };
      this.bytesInTransaction += json.length;
      kinds[index] = this.names.intern(kind);
      sources[index] = this.names.intern(source);
      hashes[index] = idHash(id);
    }

    for (let from = 0; from < count; from += INSERT_CHUNK) {
      const chunk = Math.min(INSERT_CHUNK, count - from);
      const eventValues: unknown[] = new Array(EVENT_PARAMETERS * chunk);
      const idValues: unknown[] = new Array(EVENT_ID_PARAMETERS * chunk);
      for (let j = 0, p = 0, q = 0; j < chunk; j++, p += EVENT_PARAMETERS, q += EVENT_ID_PARAMETERS) {
        const { id, json, ts, seq } = stored[from + j]!;
        eventValues[p] = eventValues[p + 2] = idValues[q] = conv;
        eventValues[p + 1] = eventValues[p + 3] = idValues[q + 2] = seq;
        eventValues[p + 4] = ts;
        eventValues[p + 5] = id;
        eventValues[p + 6] = kinds[from + j];
        eventValues[p + 7] = sources[from + j];
        eventValues[p + 8] = json;
        idValues[q + 1] = hashes[from + j];
      }
      this.statement(`insertEvents:${chunk}`, () => insertEventsSql(chunk)).run(eventValues);
      const { changes } = this.statement(`insertEventIds:${chunk}`, () => insertEventIdsSql(chunk)).run(idValues);
      if (changes < chunk) this.resolveHeldHashes(conv, stored, hashes, from, chunk);
    }
    for (let index = 0; index < count; index++) {
      const text = searchTextOf(rows[index]!);
      if (text === null) continue;
      const { seq, ts } = stored[index]!;
      this.stmts.insertMessageText.run({ conv, seq, ts, source: sources[index], text });
      this.stmts.indexMessageText.run({ conv, seq, text });
    }
    this.stmts.advanceConversation.run({ pk: conv, count, now });
    return stored;
  }

  /**
   * Some events of batch[from, from + rows) did not get their id hash into event_ids: an event
   * stored before (or earlier in the batch) holds it. For each, in batch order: the holder has the
   * same id, or the id is among the collisions already — a duplicate, DuplicateEventIdError (so the
   * first offending event of the batch is the one reported); otherwise the id is a collision and
   * is recorded as one.
   */
  private resolveHeldHashes(conv: number, batch: readonly StoredEvent[], hashes: readonly number[], from: number, rows: number): void {
    for (let index = from; index < from + rows; index++) {
      const { id, seq } = batch[index]!;
      const holder = (this.stmts.hashHolder.get({ conv, idHash: hashes[index] }) as { seq: number }).seq;
      if (holder === seq) continue;
      const held = (this.stmts.eventIdAt.get({ conv, seq: holder }) as { id: string }).id;
      if (held === id || this.stmts.addCollision.run({ conv, id, seq }).changes === 0) throw new DuplicateEventIdError(id, index);
    }
  }

  getConversation(id: string): ConversationRecord | undefined {
    const row = this.stmts.conversationById.get(id) as ConversationRow | undefined;
    return row && toRecord(row);
  }

  // -- staged creation (large replays) --------------------------------------------------------

  beginImport(conversation: NewConversation): ImportHandle {
    return this.write(() => {
      if (this.pkOf(conversation.id) !== undefined) throw new ConversationExistsError(conversation.id);
      const staging = `${STAGING_PREFIX}${randomUUID()}`;
      const { lastInsertRowid } = this.stmts.insertConversation.run({
        id: staging,
        status: conversation.status,
        now: new Date().toISOString(),
        repository: conversation.repository ?? null,
        selectedBranch: conversation.selectedBranch ?? null,
        gitProvider: conversation.gitProvider ?? null,
      });
      const pk = Number(lastInsertRowid);
      if (pk > MAX_CONVERSATION_PK) throw new Error("conversation table is full (2^31 - 1 conversations)");
      return new StagedImport(pk, staging, conversation.id);
    });
  }

  importRows(handle: ImportHandle, rows: readonly PreparedEvent[]): void {
    const staged = handle as StagedImport;
    this.write(() => this.insertPrepared(staged.pk, staged.written + 1, rows, new Date().toISOString()));
    staged.written += rows.length;
  }

  finishImport(handle: ImportHandle, events: readonly EventToStore[]): ConversationRecord {
    const staged = handle as StagedImport;
    return this.write(() => {
      const row = this.stmts.conversationById.get(staged.stagingId) as ConversationRow;
      const now = new Date().toISOString();
      this.insertEvents(staged.pk, row.next_seq, events, now);
      const id = staged.finalId;
      if (this.pkOf(id) !== undefined) throw new ConversationExistsError(id);
      this.stmts.renameConversation.run({ pk: staged.pk, id, now });
      return toRecord(this.stmts.conversationById.get(id) as ConversationRow);
    });
  }

  discardImport(handle: ImportHandle, maxRows: number): boolean {
    const staged = handle as StagedImport;
    return this.write(() => this.discardStaged(staged.pk, maxRows));
  }

  /** Inside a write transaction: removes up to ~maxRows rows of a staged conversation; true when it is gone. */
  private discardStaged(conv: number, maxRows: number): boolean {
    const n = Math.max(1, Math.floor(maxRows));
    const row = this.stmts.stagedNextSeq.get({ conv }) as { next_seq: number } | undefined;
    if (!row) return true;
    // Newest first: the window ends at next_seq, which each step moves down.
    const to = row.next_seq;
    const from = Math.max(1, to - n);
    const window = { conv, from, to };
    this.stmts.discardFts.run(window);
    this.stmts.discardTexts.run(window);
    this.stmts.discardEvents.run(window);
    this.stmts.discardIds.run({ conv, n });
    if (from > 1) {
      this.stmts.setNextSeq.run({ conv, seq: from });
      return false;
    }
    while (this.stmts.discardIds.run({ conv, n }).changes > 0);
    this.stmts.discardCollisions.run({ conv });
    this.stmts.discardConversation.run({ conv });
    return true;
  }

  /** Removes what staged creations of an earlier run left (a crash mid-import); at open. */
  removeStagedImports(): number {
    const staged = (this.stmts.stagedConversations.all() as { pk: number }[]).map((r) => r.pk);
    for (const pk of staged) while (!this.write(() => this.discardStaged(pk, 50_000)));
    return staged.length;
  }

  setStatus(conversationId: string, status: ConversationLifecycleStatus): ConversationRecord {
    const { changes } = this.stmts.setStatus.run({ id: conversationId, status, now: new Date().toISOString() });
    if (changes === 0) throw new ConversationNotFoundError(conversationId);
    return this.getConversation(conversationId)!;
  }

  // -- search ----------------------------------------------------------------------------------

  search(conversationId: string, query: SearchQuery): SearchPage {
    const { limit, order } = checkedPaging(query);
    const conv = this.pkOf(conversationId);
    const bounds = boundsOf(query, order, query.after);
    const none: SearchPage = { items: [], hasMore: false };
    const codes = this.codesOf(query);
    if (conv === undefined || isEmpty(bounds) || !codes) return none;
    if (query.body !== undefined) return this.searchBody(conv, query, bounds, codes);
    const kind = query.kind !== undefined;
    const source = query.source !== undefined;
    const stmt = this.statement(`page:${kind}:${source}:${order}`, () => SEARCH_SQL.page(kind, source, order));
    const rows = stmt.all({ conv, ...codes, ...bounds, n: limit + 1 }) as PageRow[];
    const hasMore = rows.length > limit;
    if (hasMore) rows.length = limit;
    return { items: rows, hasMore };
  }

  searchJson(conversationId: string, query: SearchQuery): JsonPage {
    const { limit, order } = checkedPaging(query);
    if (query.body !== undefined) return joinPage(this.search(conversationId, query));
    const conv = this.pkOf(conversationId);
    const bounds = boundsOf(query, order, query.after);
    const codes = this.codesOf(query);
    if (conv === undefined || isEmpty(bounds) || !codes) return EMPTY_PAGE;
    const kind = query.kind !== undefined;
    const source = query.source !== undefined;
    const params = { conv, ...codes, ...bounds, n: limit };
    const read = (sorted: boolean) =>
      this.statement(`pageJson:${sorted}:${kind}:${source}:${order}`, () => (sorted ? SEARCH_SQL.pageJsonSorted : SEARCH_SQL.pageJson)(kind, source, order)).get(params) as JsonPageRow;
    let row = read(this.sortedJsonPages);
    if (row.n === 0) return EMPTY_PAGE;
    let last = lastInOrder(row, order);
    if (!last && !this.sortedJsonPages) {
      this.unsortedPages++;
      row = read(true);
      last = lastInOrder(row, order);
    }
    if (!last) throw new Error("pageJsonSorted gave a page out of order");
    let hasMore = false;
    if (row.n === limit) {
      narrowAfter(bounds, order, last);
      hasMore = !isEmpty(bounds) && this.statement(`any:${kind}:${source}`, () => SEARCH_SQL.any(kind, source)).get({ conv, ...codes, ...bounds }) !== undefined;
    }
    return { json: row.json!, count: row.n, last, hasMore };
  }

  /**
   * The codes (see Names) that a query's statements bind: kind and source when filtered on, and
   * MessageEvent's for a body filter; undefined when one of them was never stored, so that nothing
   * can match (and when a body filter asks for another kind).
   */
  private codesOf(filters: SearchFilters): { kind?: number; source?: number; messageKind?: number } | undefined {
    const codes: { kind?: number; source?: number; messageKind?: number } = {};
    if (filters.body !== undefined) {
      if (filters.kind !== undefined && filters.kind !== "MessageEvent") return undefined;
      if ((codes.messageKind = this.names.lookup("MessageEvent")) === undefined) return undefined;
    } else if (filters.kind !== undefined && (codes.kind = this.names.lookup(filters.kind)) === undefined) return undefined;
    if (filters.source !== undefined && (codes.source = this.names.lookup(filters.source)) === undefined) return undefined;
    return codes;
  }

  private searchBody(conv: number, query: SearchQuery, bounds: Bounds, codes: { source?: number; messageKind?: number }): SearchPage {
    const { limit, order } = query;
    const needle = query.body!.toLowerCase();
    const match = ftsQuery(needle);
    const source = query.source !== undefined;
    const want = limit + 1;
    const params = { conv, ...codes, needle, match, ...bounds };
    const hits: Position[] = [];
    let resumeAfter: Position | undefined;

    if (match !== undefined && (this.stmts.probe.get({ conv, match, k: this.ftsCandidates + 1 }) as { n: number }).n <= this.ftsCandidates) {
      // Few candidates in the whole conversation: sorting them all is cheaper than any walk.
      const fts = this.statement(`fts:${source}:${order}`, () => SEARCH_SQL.fts(source, order));
      hits.push(...(fts.all({ ...params, n: want }) as Position[]));
    } else {
      // A frequent term (or 1–2 characters): walk the messages in order, at most scanBudget of them.
      const walk = this.statement(`walk:${source}:${order}`, () => SEARCH_SQL.walk(source, order));
      let walked = 0;
      for (const row of walk.iterate(params) as IterableIterator<WalkRow>) {
        if (row.hit && hits.push({ ts: row.ts, seq: row.seq }) === want) break;
        if (++walked >= this.scanBudget) {
          // Out of budget: a short page; the next one resumes after the last message tested.
          resumeAfter = { ts: row.ts, seq: row.seq };
          break;
        }
      }
    }

    const full = hits.length > limit;
    if (full) hits.length = limit;
    const rows = this.stmts.eventsAt.all({ conv, seqs: JSON.stringify(hits.map((h) => h.seq)) }) as { seq: number; id: string; json: string }[];
    const bySeq = new Map(rows.map((r) => [r.seq, r]));
    const items = hits.map(({ ts, seq }): StoredEvent => {
      const { id, json } = bySeq.get(seq)!;
      return { id, json, ts, seq };
    });
    if (full) return { items, hasMore: true };
    return resumeAfter ? { items, hasMore: true, resumeAfter } : { items, hasMore: false };
  }

  async countAsync(conversationId: string, filters: SearchFilters): Promise<number> {
    const unfiltered = Object.values(filters).every((value) => value === undefined);
    if (unfiltered) return this.getConversation(conversationId)?.eventCount ?? 0; // stored with the conversation
    if (!this.reads) return this.count(conversationId, filters);
    let count = 0;
    await this.reads.run({ op: "count", conversationId, filters }, (message) => void (count = message.count as number));
    return count;
  }

  async searchJsonAsync(conversationId: string, query: SearchQuery): Promise<JsonPage> {
    // Pages without a body filter are one index range: cheap, in place. A body filter may walk up
    // to SCAN_BUDGET messages: on a reader thread when there is one.
    if (query.body === undefined || !this.reads) return this.searchJson(conversationId, query);
    checkedPaging(query);
    let page: JsonPage = EMPTY_PAGE;
    await this.reads.run({ op: "searchJson", conversationId, query }, (message) => void (page = message.page as JsonPage));
    return page;
  }

  count(conversationId: string, filters: SearchFilters): number {
    const conv = this.pkOf(conversationId);
    const bounds = boundsOf(filters);
    const codes = this.codesOf(filters);
    if (conv === undefined || isEmpty(bounds) || !codes) return 0;
    const source = filters.source !== undefined;
    if (filters.body !== undefined) {
      const needle = filters.body.toLowerCase();
      const match = ftsQuery(needle);
      const params = { conv, ...codes, needle, match, ...bounds };
      const stmt = match !== undefined
        ? this.statement(`ftsCount:${source}`, () => SEARCH_SQL.ftsCount(source))
        : this.statement(`walkCount:${source}`, () => SEARCH_SQL.walkCount(source));
      return (stmt.get(params) as { n: number }).n;
    }
    const kind = filters.kind !== undefined;
    const stmt = this.statement(`count:${kind}:${source}`, () => SEARCH_SQL.count(kind, source));
    return (stmt.get({ conv, ...codes, ...bounds }) as { n: number }).n;
  }

  explain(conversationId: string, query: SearchQuery, what: "search" | "count" | "searchJson" = "search"): string[][] {
    const kind = query.kind !== undefined;
    const source = query.source !== undefined;
    const order = query.order;
    let sqls: string[];
    if (query.body === undefined) {
      if (what === "searchJson") sqls = [SEARCH_SQL.pageJson(kind, source, order), SEARCH_SQL.any(kind, source)];
      else sqls = [what === "search" ? SEARCH_SQL.page(kind, source, order) : SEARCH_SQL.count(kind, source)];
    } else {
      const fts = ftsQuery(query.body.toLowerCase()) !== undefined;
      if (what === "count") sqls = [fts ? SEARCH_SQL.ftsCount(source) : SEARCH_SQL.walkCount(source)];
      else sqls = fts ? [SQL.probe, SEARCH_SQL.walk(source, order), SEARCH_SQL.fts(source, order)] : [SEARCH_SQL.walk(source, order)];
    }
    const needle = (query.body ?? "").toLowerCase();
    const params = {
      conv: this.pkOf(conversationId) ?? 0,
      // The plan does not depend on the values: a name never stored explains as code 0.
      kind: query.kind === undefined ? undefined : (this.names.lookup(query.kind) ?? 0),
      source: query.source === undefined ? undefined : (this.names.lookup(query.source) ?? 0),
      messageKind: this.names.lookup("MessageEvent") ?? 0,
      needle,
      match: ftsQuery(needle) ?? '""',
      ...boundsOf(query, order, query.after),
      n: query.limit + 1,
      k: this.ftsCandidates + 1,
    };
    return sqls.map((sql) =>
      (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((r) => r.detail),
    );
  }

  positionOf(conversationId: string, eventId: string): Position | undefined {
    const conv = this.pkOf(conversationId);
    if (conv === undefined) return undefined;
    return this.stmts.positionOf.get({ conv, id: eventId, idHash: idHash(eventId) }) as Position | undefined;
  }

  readAfter(conversationId: string, afterSeq: number, limit: number): StoredEvent[] {
    const conv = this.pkOf(conversationId);
    if (conv === undefined) return [];
    const from = Math.max(0, Math.min(Math.floor(afterSeq), MAX_SEQ));
    return this.stmts.readAfter.all({ conv, afterSeq: from, limit: Math.max(0, Math.floor(limit)) }) as StoredEvent[];
  }

  // -- documents, lifecycle --------------------------------------------------------------------

  getDocument(key: string): string | undefined {
    return (this.stmts.getDocument.get(key) as { value: string } | undefined)?.value;
  }

  putDocument(key: string, value: string): void {
    this.stmts.putDocument.run({ key, value });
  }

  ping(): boolean {
    if (!this.db.open) return false;
    try {
      return this.stmts.ping.get() !== undefined;
    } catch {
      return false;
    }
  }

  close(): void {
    void this.reads?.close();
    this.checkpointer?.close();
    if (this.db.open) this.db.close();
  }
}

/**
 * Opens (creating it if needed) and migrates a store.
 * @throws SchemaTooNewError when the file was written by a newer schema version.
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteEventStore {
  if (options.readonly) return openReadOnly(options);
  if (options.file !== ":memory:" && options.file !== "") {
    // 0600 before SQLite opens it: SQLite gives the -wal and -shm files the database's own mode.
    privateFileSync(options.file);
    for (const suffix of ["-wal", "-shm", "-journal"]) privateIfExistsSync(options.file + suffix);
  }
  const db = new Database(options.file);
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    db.pragma("foreign_keys = ON");
    assertSchemaSupported(db); // before the first write
    db.pragma(`page_size = ${PAGE_SIZE}`); // a new database only: an existing one keeps its own
    db.pragma("journal_mode = WAL");
    // Durable across a process crash (a commit is in the WAL, which the OS has); a power loss may
    // lose the last commits, never consistency. Only checkpoints fsync.
    db.pragma("synchronous = NORMAL");
    db.pragma("temp_store = MEMORY");
    db.pragma("cache_size = -65536"); // 64 MiB per connection
    db.pragma("mmap_size = 268435456"); // reads through a memory map: no read() call per page on large stores
    // A large WAL between the writer's own checkpoints: event ids are random, so each commit
    // dirties pages all over event_ids, and a rarer checkpoint writes each of them once for many
    // commits. The background checkpointer copies it as it grows (see WAL_BACKSTOP_BYTES).
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    const autocheckpoint = (bytes: number) => db.pragma(`wal_autocheckpoint = ${Math.floor(bytes / pageSize)}`);
    autocheckpoint(db.memory ? WAL_AUTOCHECKPOINT_BYTES : WAL_BACKSTOP_BYTES);
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`); // the WAL file is cut back to this
    migrate(db);
    if (!db.memory) {
      // A WAL left by the last run is copied now, before any request could wait on it.
      try {
        db.pragma("wal_checkpoint(TRUNCATE)");
      } catch {
        // Another connection is busy with it: the background checkpointer will be.
      }
    }
    const inFile = db.memory ? undefined : new BackgroundCheckpointer(path.resolve(db.name), () => db.open && autocheckpoint(WAL_AUTOCHECKPOINT_BYTES));
    const threads = db.memory ? 0 : Math.max(0, Math.floor(options.readThreads ?? 0));
    const reads = threads > 0 ? new WorkerPool("read-worker", threads, { file: path.resolve(db.name), bodySearch: options.bodySearch }) : undefined;
    const store = new SqliteStore(db, options.bodySearch, inFile, options.sortedJsonPages, reads);
    store.removeStagedImports();
    return store;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** A read-only connection to an existing, current store (a reader thread's). */
function openReadOnly(options: SqliteStoreOptions): SqliteEventStore {
  const db = new Database(options.file, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    assertSchemaSupported(db);
    db.pragma("temp_store = MEMORY");
    db.pragma("cache_size = -65536");
    db.pragma("mmap_size = 268435456");
    return new SqliteStore(db, options.bodySearch, undefined, options.sortedJsonPages);
  } catch (err) {
    db.close();
    throw err;
  }
}
