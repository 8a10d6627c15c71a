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
 * pick the time index for `kind = ?` and filter).
 *
 * ## Body search
 * Only MessageEvents match. Their searchable text (text content + extended_content + reasoning
 * content, joined by a space as the reference joins them) is stored lower-cased (String#toLowerCase,
 * the equivalent of Python's str.lower()) in `message_texts`, with the message's seq, ts and
 * source, and indexed by an FTS5 trigram table (`message_fts`, external content) that a trigger
 * fills in the inserting transaction. A match is always confirmed with `instr(text, lower(body))`,
 * so the semantics are exactly `body.lower() in text.lower()`; FTS only narrows the candidates. The
 * body goes to FTS as one quoted phrase (`"` doubled), so `AND`, `NEAR(`, `*`, `:` are literal.
 *
 * The FTS rowid is `events.key = (conversation << 32) | seq`: `rowid BETWEEN conv<<32 AND
 * conv<<32|0xFFFFFFFF` restricts an FTS query to one conversation inside the full-text index, so
 * other conversations' messages cost nothing, and no query reads a candidate's events row.
 *
 * Two plans, because neither is good for every term at 1M events (37k messages):
 *  - FTS: every candidate of the conversation, confirmed, filtered, sorted; O(candidates) — cheap
 *    for a rare term, but a frequent term sorts most of the conversation's messages.
 *  - walk: the (conversation, kind='MessageEvent'[, source], ts, seq) index in query order, each
 *    message tested with instr (index + one text row, no events row), stopping at `limit + 1`
 *    hits — cheap for a frequent term, but a rare term walks every message.
 * A page first counts the conversation's FTS candidates, stopping at FTS_CANDIDATES + 1 (cheap:
 * the FTS iterator only). At most FTS_CANDIDATES: the FTS plan. More: the term is frequent, so it
 * walks — for at most WALK_BUDGET messages; if those hold fewer than `limit + 1` hits (a term
 * frequent elsewhere but sparse here, e.g. past a cursor or in a time range), the rest of the page
 * comes from the FTS plan, strictly after the last walked position. A page therefore costs at
 * most ~FTS_CANDIDATES candidates, or ~WALK_BUDGET walked messages plus the FTS plan; in the
 * common cases (a term either rare or evenly frequent) a fraction of a millisecond to a few ms,
 * whatever the conversation's size. The adversarial case (a term with many matches, all of them
 * far from the page) costs O(its matches); it is never a scan of the events.
 *
 * Queries of fewer than 3 characters (after lower-casing) cannot use trigrams: they walk the ordered
 * index testing `instr` on each message, in one statement that stops at `limit + 1` hits. That is
 * cheap when the 1–2 character string is common (it almost always is) and O(messages in the
 * conversation) when it is rare (~30 ms for 37k messages): the one documented exception to "a page
 * costs the same at any size". (Serving them from the index would need a trigram-prefix lookup
 * through an fts5vocab table, plus padding so that an occurrence at the very end of a text is the
 * prefix of some trigram; not done.)
 * `instr` on pre-lower-cased text is used rather than LIKE: it is an exact substring test with no
 * wildcard escaping, and SQLite's LIKE folds ASCII only.
 */
import Database from "better-sqlite3";
import { DEFAULT_EVENT_SOURCE, type ConversationLifecycleStatus, type MessageEvent } from "@acs-toolkit/schema";
import { assertSchemaSupported, migrate } from "./migrations.js";
import { eventTimeMicros } from "./time.js";
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
  type SearchQuery,
  type StoredEvent,
} from "./types.js";

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
  bodySearch?: { ftsCandidates?: number; walkBudget?: number };
}

export interface SqliteEventStore extends EventStore {
  readonly kind: "sqlite";
  /**
   * The EXPLAIN QUERY PLAN lines of every statement `search` (or `count`) would run for this
   * query, in order; for tests and diagnostics.
   */
  explain(conversationId: string, query: SearchQuery, what?: "search" | "count"): string[][];
}

/**
 * Body search (see the module comment): up to this many FTS candidates in a conversation, a page
 * is served by sorting them; beyond, by walking the messages in order.
 */
export const FTS_CANDIDATES = 1024;
/** Messages a walk tests before it hands the rest of the page over to FTS. */
export const WALK_BUDGET = 2048;

const MAX_LIMIT = 100;
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
  insertEvent: `INSERT INTO events (key, conversation, seq, ts, event_id, id_hash, kind, source, json)
    VALUES ((:conv << 32) | :seq, :conv, :seq, :ts, :id, :idHash, :kind, :source, :json)`,
  /** Stored ids whose hash is one of :hashes (a JSON array): the candidates for duplicates. */
  storedIdsByHash: `SELECT event_id AS id FROM events
    WHERE conversation = :conv AND id_hash IN (SELECT value FROM json_each(:hashes))`,
  /** The trigger message_texts_to_fts indexes the text in message_fts. */
  insertMessageText: `INSERT INTO message_texts (key, seq, ts, source, text)
    VALUES ((:conv << 32) | :seq, :seq, :ts, :source, :text)`,
  /** The events at the seqs of :seqs (a JSON array), in no particular order: one statement per page. */
  eventsAt: `SELECT seq, event_id AS id, json FROM events
    WHERE key IN (SELECT (:conv << 32) | value FROM json_each(:seqs))`,
  /** Append order is the key order within a conversation: a range scan of the primary key. */
  readAfter: `SELECT ts, seq, event_id AS id, json FROM events
    WHERE key > ((:conv << 32) | :afterSeq) AND key <= ((:conv << 32) | 4294967295)
    ORDER BY key LIMIT :limit`,
  positionOf: "SELECT ts, seq FROM events WHERE conversation = :conv AND id_hash = :idHash AND event_id = :id",
  getDocument: "SELECT value FROM documents WHERE key = ?",
  putDocument: `INSERT INTO documents (key, value) VALUES (:key, :value)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
  ping: "SELECT 1 AS ok",
  /** Body: how many FTS candidates this conversation has, counting no further than :k. */
  probe: `SELECT count(*) AS n FROM (
    SELECT rowid FROM message_fts
    WHERE message_fts MATCH :phrase AND rowid BETWEEN (:conv << 32) AND ((:conv << 32) | 4294967295)
    LIMIT :k)`,
} as const;

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
  count: (kind: boolean, source: boolean) =>
    `SELECT count(*) AS n FROM events INDEXED BY ${eventIndex(kind, source)}
    WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE}`,
  /** Body, walk: the conversation's messages in order, each tested (index + text only). */
  walk: (source: boolean, order: Order) =>
    `SELECT e.seq, e.ts, instr(m.text, :needle) > 0 AS hit
    FROM events AS e INDEXED BY ${eventIndex(true, source)} JOIN message_texts AS m ON m.key = e.key
    WHERE e.conversation = :conv AND e.kind = 'MessageEvent'${equalities(false, source, "e.")} AND ${E_RANGE}
    ${orderBy(order, "e.")}`,
  /** Body of 1–2 characters: the same walk with the test in SQL, stopping at :n hits. */
  walkHits: (source: boolean, order: Order) =>
    `SELECT e.seq, e.ts
    FROM events AS e INDEXED BY ${eventIndex(true, source)} JOIN message_texts AS m ON m.key = e.key
    WHERE e.conversation = :conv AND e.kind = 'MessageEvent'${equalities(false, source, "e.")} AND ${E_RANGE}
      AND instr(m.text, :needle) > 0
    ${orderBy(order, "e.")} LIMIT :n`,
  walkCount: (source: boolean) =>
    `SELECT count(*) AS n
    FROM events AS e INDEXED BY ${eventIndex(true, source)} JOIN message_texts AS m ON m.key = e.key
    WHERE e.conversation = :conv AND e.kind = 'MessageEvent'${equalities(false, source, "e.")} AND ${E_RANGE}
      AND instr(m.text, :needle) > 0`,
  /** Body, from FTS: the candidates of this conversation (rowid range), confirmed, sorted. */
  fts: (source: boolean, order: Order) =>
    `SELECT m.seq, m.ts
    FROM message_fts AS f JOIN message_texts AS m ON m.key = f.rowid
    WHERE message_fts MATCH :phrase AND f.rowid BETWEEN (:conv << 32) AND ((:conv << 32) | 4294967295)
      ${equalities(false, source, "m.")} AND ${M_RANGE} AND instr(m.text, :needle) > 0
    ${orderBy(order, "m.")} LIMIT :n`,
  ftsCount: (source: boolean) =>
    `SELECT count(*) AS n
    FROM message_fts AS f JOIN message_texts AS m ON m.key = f.rowid
    WHERE message_fts MATCH :phrase AND f.rowid BETWEEN (:conv << 32) AND ((:conv << 32) | 4294967295)
      ${equalities(false, source, "m.")} AND ${M_RANGE} AND instr(m.text, :needle) > 0`,
} as const;

/** An FTS5 string literal: the whole body as one phrase; `"` doubled, nothing else is syntax. */
function ftsPhrase(needle: string): string {
  return `"${needle.replaceAll('"', '""')}"`;
}

// ---------------------------------------------------------------------------------------------

/**
 * The text the body filter searches, before lower-casing: the message's text content, its
 * extended_content and its reasoning_content, joined by a space (as the reference joins them).
 */
export function messageSearchText(event: MessageEvent): string {
  const parts: string[] = [];
  const isText = (c: unknown): c is { text: string } => {
    const v = c as { type?: unknown; text?: unknown } | null;
    return v !== null && typeof v === "object" && (v.type ?? "text") === "text" && typeof v.text === "string";
  };
  for (const c of event.llm_message.content ?? []) if (isText(c)) parts.push(c.text);
  for (const c of event.extended_content ?? []) if (isText(c)) parts.push(c.text);
  const reasoning = event.llm_message.reasoning_content;
  if (typeof reasoning === "string" && reasoning !== "") parts.push(reasoning);
  return parts.join(" ");
}

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
 * 48 bits of hash of an event id, for the (conversation, id_hash) index (see migrations.ts); two
 * 32-bit FNV-1a-style lanes. Collisions only cost an extra row comparison: never correctness.
 */
export function idHash(id: string): number {
  let a = 0x811c9dc5;
  let b = 0x5bd1e995;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  a ^= a >>> 16;
  return (a >>> 0) * 0x10000 + (b >>> 16);
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

class SqliteStore implements SqliteEventStore {
  readonly kind = "sqlite" as const;
  private readonly stmts: { [K in keyof typeof SQL]: Database.Statement };
  private readonly cache = new Map<string, Database.Statement>();
  private readonly inTransaction: Database.Transaction<<T>(fn: () => T) => T>;

  private readonly ftsCandidates: number;
  private readonly walkBudget: number;

  constructor(
    private readonly db: Database.Database,
    tuning: SqliteStoreOptions["bodySearch"] = {},
  ) {
    this.ftsCandidates = tuning.ftsCandidates ?? FTS_CANDIDATES;
    this.walkBudget = Math.max(1, tuning.walkBudget ?? WALK_BUDGET);
    this.stmts = Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, db.prepare(sql)])) as typeof this.stmts;
    this.inTransaction = db.transaction(<T>(fn: () => T): T => fn());
  }

  /** One IMMEDIATE transaction (takes the write lock up front: no upgrade deadlock under WAL). */
  private write<T>(fn: () => T): T {
    return this.inTransaction.immediate(fn) as T;
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
    if (events.length === 0) return [];
    if (firstSeq + events.length - 1 > MAX_SEQ) throw new Error("conversation is full (2^32 - 1 events)");
    const rows = events.map(({ event, json }, index) => {
      const ts = eventTimeMicros(event.timestamp);
      if (ts === undefined) {
        throw new TypeError(`events[${index}]: timestamp ${JSON.stringify(event.timestamp)} is not an ISO-8601 date-time`);
      }
      const source = event.source ?? DEFAULT_EVENT_SOURCE[event.kind];
      if (!source) throw new TypeError(`events[${index}]: a ${event.kind} needs a source`);
      const seq = firstSeq + index;
      return { conv, seq, ts, id: event.id, idHash: idHash(event.id), kind: event.kind, source, json, event };
    });
    this.assertNoDuplicate(conv, rows);
    for (const row of rows) {
      this.stmts.insertEvent.run(row);
      if (row.event.kind === "MessageEvent") {
        const text = messageSearchText(row.event).toLowerCase();
        this.stmts.insertMessageText.run({ conv, seq: row.seq, ts: row.ts, source: row.source, text });
      }
    }
    this.stmts.advanceConversation.run({ pk: conv, count: events.length, now });
    return rows.map(({ id, json, ts, seq }) => ({ id, json, ts, seq }));
  }

  /**
   * Throws DuplicateEventIdError for the first event of the batch whose id is already stored or
   * appears earlier in the batch. One statement for the whole batch: the stored ids sharing a hash
   * with the batch (an index probe each), compared exactly.
   */
  private assertNoDuplicate(conv: number, rows: readonly { id: string; idHash: number }[]): void {
    const hashes = JSON.stringify(rows.map((r) => r.idHash));
    const stored = new Set((this.stmts.storedIdsByHash.all({ conv, hashes }) as { id: string }[]).map((r) => r.id));
    const seen = new Set<string>();
    rows.forEach(({ id }, index) => {
      if (stored.has(id) || seen.has(id)) throw new DuplicateEventIdError(id, index);
      seen.add(id);
    });
  }

  getConversation(id: string): ConversationRecord | undefined {
    const row = this.stmts.conversationById.get(id) as ConversationRow | undefined;
    return row && toRecord(row);
  }

  setStatus(conversationId: string, status: ConversationLifecycleStatus): ConversationRecord {
    const { changes } = this.stmts.setStatus.run({ id: conversationId, status, now: new Date().toISOString() });
    if (changes === 0) throw new ConversationNotFoundError(conversationId);
    return this.getConversation(conversationId)!;
  }

  // -- search ----------------------------------------------------------------------------------

  search(conversationId: string, query: SearchQuery): SearchPage {
    const { limit, order } = query;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      throw new RangeError(`limit must be an integer in 1..${MAX_LIMIT}, got ${limit}`);
    }
    if (order !== "asc" && order !== "desc") throw new RangeError(`order must be "asc" or "desc"`);
    const conv = this.pkOf(conversationId);
    const bounds = boundsOf(query, order, query.after);
    const none: SearchPage = { items: [], hasMore: false };
    if (conv === undefined || isEmpty(bounds)) return none;
    if (query.body !== undefined) {
      if (query.kind !== undefined && query.kind !== "MessageEvent") return none;
      return this.searchBody(conv, query, bounds);
    }
    const kind = query.kind !== undefined;
    const source = query.source !== undefined;
    const stmt = this.statement(`page:${kind}:${source}:${order}`, () => SEARCH_SQL.page(kind, source, order));
    const rows = stmt.all({ conv, kind: query.kind, source: query.source, ...bounds, n: limit + 1 }) as PageRow[];
    const hasMore = rows.length > limit;
    if (hasMore) rows.length = limit;
    return { items: rows, hasMore };
  }

  private searchBody(conv: number, query: SearchQuery, bounds: Bounds): SearchPage {
    const { limit, order } = query;
    const needle = query.body!.toLowerCase();
    const phrase = ftsPhrase(needle);
    const source = query.source !== undefined;
    const want = limit + 1;
    const useFts = canUseFts(needle);
    const params = { conv, source: query.source, needle, phrase, ...bounds };
    const hits: Position[] = [];

    const fromFts = (p: typeof params, n: number) => {
      const fts = this.statement(`fts:${source}:${order}`, () => SEARCH_SQL.fts(source, order));
      hits.push(...(fts.all({ ...p, n }) as Position[]));
    };

    if (!useFts) {
      // 1–2 characters: no trigram to look up; walk every message in order (see the module comment).
      const walk = this.statement(`walkHits:${source}:${order}`, () => SEARCH_SQL.walkHits(source, order));
      hits.push(...(walk.all({ ...params, n: want }) as Position[]));
    } else if ((this.stmts.probe.get({ conv, phrase, k: this.ftsCandidates + 1 }) as { n: number }).n <= this.ftsCandidates) {
      // Few candidates in the whole conversation: sorting them all is cheaper than any walk.
      fromFts(params, want);
    } else {
      // Many candidates: walk the messages in order, for at most walkBudget of them.
      const walk = this.statement(`walk:${source}:${order}`, () => SEARCH_SQL.walk(source, order));
      let walked = 0;
      let last: Position | undefined;
      let budgetSpent = false;
      for (const row of walk.iterate(params) as IterableIterator<WalkRow>) {
        last = row;
        if (row.hit && hits.push({ ts: row.ts, seq: row.seq }) === want) break;
        if (++walked >= this.walkBudget) {
          budgetSpent = true;
          break;
        }
      }
      if (budgetSpent && hits.length < want) {
        // Frequent elsewhere but sparse here: the rest of the page from FTS, after the walk.
        const rest = { ...params };
        narrowAfter(rest, order, last!);
        fromFts(rest, want - hits.length);
      }
    }

    const hasMore = hits.length > limit;
    if (hasMore) hits.length = limit;
    const rows = this.stmts.eventsAt.all({ conv, seqs: JSON.stringify(hits.map((h) => h.seq)) }) as { seq: number; id: string; json: string }[];
    const bySeq = new Map(rows.map((r) => [r.seq, r]));
    const items = hits.map(({ ts, seq }): StoredEvent => {
      const { id, json } = bySeq.get(seq)!;
      return { id, json, ts, seq };
    });
    return { items, hasMore };
  }

  count(conversationId: string, filters: SearchFilters): number {
    const conv = this.pkOf(conversationId);
    const bounds = boundsOf(filters);
    if (conv === undefined || isEmpty(bounds)) return 0;
    const source = filters.source !== undefined;
    if (filters.body !== undefined) {
      if (filters.kind !== undefined && filters.kind !== "MessageEvent") return 0;
      const needle = filters.body.toLowerCase();
      const params = { conv, source: filters.source, needle, phrase: ftsPhrase(needle), ...bounds };
      const stmt = canUseFts(needle)
        ? this.statement(`ftsCount:${source}`, () => SEARCH_SQL.ftsCount(source))
        : this.statement(`walkCount:${source}`, () => SEARCH_SQL.walkCount(source));
      return (stmt.get(params) as { n: number }).n;
    }
    const kind = filters.kind !== undefined;
    const stmt = this.statement(`count:${kind}:${source}`, () => SEARCH_SQL.count(kind, source));
    return (stmt.get({ conv, kind: filters.kind, source: filters.source, ...bounds }) as { n: number }).n;
  }

  explain(conversationId: string, query: SearchQuery, what: "search" | "count" = "search"): string[][] {
    const kind = query.kind !== undefined;
    const source = query.source !== undefined;
    const order = query.order;
    let sqls: string[];
    if (query.body === undefined) {
      sqls = [what === "search" ? SEARCH_SQL.page(kind, source, order) : SEARCH_SQL.count(kind, source)];
    } else {
      const fts = canUseFts(query.body.toLowerCase());
      if (what === "count") sqls = [fts ? SEARCH_SQL.ftsCount(source) : SEARCH_SQL.walkCount(source)];
      else sqls = fts ? [SQL.probe, SEARCH_SQL.walk(source, order), SEARCH_SQL.fts(source, order)] : [SEARCH_SQL.walkHits(source, order)];
    }
    const needle = (query.body ?? "").toLowerCase();
    const params = {
      conv: this.pkOf(conversationId) ?? 0,
      kind: query.kind,
      source: query.source,
      needle,
      phrase: ftsPhrase(needle),
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
    if (this.db.open) this.db.close();
  }
}

/** Trigram FTS needs 3 characters; NUL would end the FTS query string early. */
function canUseFts(needle: string): boolean {
  return [...needle].length >= 3 && !needle.includes("\u0000");
}

/**
 * Opens (creating it if needed) and migrates a store.
 * @throws SchemaTooNewError when the file was written by a newer schema version.
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteEventStore {
  const db = new Database(options.file);
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    db.pragma("foreign_keys = ON");
    assertSchemaSupported(db); // before the first write
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("temp_store = MEMORY");
    db.pragma("cache_size = -65536"); // 64 MiB per connection
    // Checkpoint every ~40 MB of WAL rather than 4 MB: event ids are random, so each commit dirties
    // pages all over the id index, and a rarer checkpoint writes each of them once for many commits
    // (+10% replay, +35% small appends at 1M events); the file is cut back to 64 MB afterwards.
    db.pragma("wal_autocheckpoint = 10000");
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    migrate(db);
    return new SqliteStore(db, options.bodySearch);
  } catch (err) {
    db.close();
    throw err;
  }
}
