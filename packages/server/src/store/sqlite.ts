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
 * content, joined by a space as the reference does) is stored lower-cased (String#toLowerCase,
 * the equivalent of Python's str.lower()) in `message_texts`, indexed by an FTS5 trigram table
 * (`message_fts`, external content) filled by a trigger in the inserting transaction. A match is
 * always confirmed with `instr(text, lower(body)) > 0`, so the semantics are exactly
 * `body.lower() in text.lower()`; FTS only narrows the candidates.
 *
 * Neither plan alone is good for every term at 1M events:
 *  - walking the ordered (conversation, kind='MessageEvent', ts, seq) index and testing each
 *    message stops after `limit + 1` hits — cheap for a frequent term, but a rare term walks every
 *    message of the conversation;
 *  - driving from FTS costs O(matches) plus a sort of them — cheap for a rare term, but a frequent
 *    term sorts most messages of the conversation.
 * So a page first walks the ordered index for at most WALK_BUDGET messages; when that neither fills
 * the page nor reaches the end, the term is rare (fewer than limit+1 hits in WALK_BUDGET messages),
 * and the rest of the page comes from FTS, starting strictly after the last walked position. FTS
 * rowids are `events.key = (conversation << 32) | seq`, so `rowid BETWEEN conv<<32 AND
 * conv<<32|0xFFFFFFFF` restricts the FTS query to this conversation inside the full-text index:
 * other conversations' messages cost nothing. Worst case (a term just below the switch frequency):
 * WALK_BUDGET + (limit+1)·M/WALK_BUDGET rows for M messages in the conversation, never a scan of
 * the events themselves.
 *
 * Queries of fewer than 3 characters (after lower-casing) cannot use trigrams: they only walk the
 * ordered index testing `instr` on each message (no budget). That is cheap when the 1–2 character
 * string is common (it almost always is) and O(messages in the conversation) when it is rare.
 * `instr` on pre-lower-cased text is used rather than LIKE: it is an exact substring test with no
 * wildcard escaping, and SQLite's LIKE folds ASCII only.
 */
import Database from "better-sqlite3";
import { DEFAULT_EVENT_SOURCE, type ConversationLifecycleStatus, type MessageEvent } from "@acs-toolkit/schema";
import { assertSchemaSupported, migrate } from "./migrations.js";
import { eventTimeMicros } from "./time.js";
import {
  ConversationExistsError,
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
export class ConversationNotFoundError extends Error {
  constructor(readonly conversationId: string) {
    super(`Conversation not found: ${conversationId}`);
    this.name = "ConversationNotFoundError";
  }
}

export interface SqliteStoreOptions {
  /** Database file path; ":memory:" for a private in-memory database. */
  file: string;
  /** How long a writer waits for a lock held by another connection, ms. Default 5000. */
  busyTimeoutMs?: number;
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
  /** Inserts nothing (changes = 0) when the conversation already has this event id. */
  insertEvent: `INSERT INTO events (key, conversation, seq, ts, event_id, id_hash, kind, source, json)
    SELECT (:conv << 32) | :seq, :conv, :seq, :ts, :id, :idHash, :kind, :source, :json
    WHERE NOT EXISTS (SELECT 1 FROM events WHERE conversation = :conv AND id_hash = :idHash AND event_id = :id)`,
  /** The trigger message_texts_to_fts indexes the text in message_fts. */
  insertMessageText: `INSERT INTO message_texts (key, seq, ts, source, text)
    VALUES ((:conv << 32) | :seq, :seq, :ts, :source, :text)`,
  eventAt: "SELECT event_id AS id, json FROM events WHERE key = (:conv << 32) | :seq",
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

  constructor(private readonly db: Database.Database) {
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
    const stored: StoredEvent[] = [];
    if (events.length === 0) return stored;
    if (firstSeq + events.length - 1 > MAX_SEQ) throw new Error("conversation is full (2^32 - 1 events)");
    events.forEach(({ event, json }, index) => {
      const ts = eventTimeMicros(event.timestamp);
      if (ts === undefined) {
        throw new TypeError(`events[${index}]: timestamp ${JSON.stringify(event.timestamp)} is not an ISO-8601 date-time`);
      }
      const source = event.source ?? DEFAULT_EVENT_SOURCE[event.kind];
      if (!source) throw new TypeError(`events[${index}]: a ${event.kind} needs a source`);
      const seq = firstSeq + index;
      const params = { conv, seq, ts, id: event.id, idHash: idHash(event.id), kind: event.kind, source, json };
      if (this.stmts.insertEvent.run(params).changes === 0) throw new DuplicateEventIdError(event.id, index);
      if (event.kind === "MessageEvent") {
        this.stmts.insertMessageText.run({ conv, seq, ts, source, text: messageSearchText(event).toLowerCase() });
      }
      stored.push({ id: event.id, json, ts, seq });
    });
    this.stmts.advanceConversation.run({ pk: conv, count: events.length, now });
    return stored;
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

    if (useFts && (this.stmts.probe.get({ conv, phrase, k: FTS_CANDIDATES + 1 }) as { n: number }).n <= FTS_CANDIDATES) {
      // Few candidates in the whole conversation: sorting them all is cheaper than any walk.
      fromFts(params, want);
    } else {
      // Many candidates (or a 1–2 character body): walk the messages in order.
      const walk = this.statement(`walk:${source}:${order}`, () => SEARCH_SQL.walk(source, order));
      let walked = 0;
      let last: Position | undefined;
      let budgetSpent = false;
      for (const row of walk.iterate(params) as IterableIterator<WalkRow>) {
        last = row;
        if (row.hit && hits.push({ ts: row.ts, seq: row.seq }) === want) break;
        if (useFts && ++walked >= WALK_BUDGET) {
          budgetSpent = true;
          break;
        }
      }
      if (budgetSpent && hits.length < want) {
        // Many candidates, but sparse here: the rest of the page from FTS, after the walk.
        const rest = { ...params };
        narrowAfter(rest, order, last!);
        fromFts(rest, want - hits.length);
      }
    }

    const hasMore = hits.length > limit;
    if (hasMore) hits.length = limit;
    const items = hits.map(({ ts, seq }): StoredEvent => {
      const { id, json } = this.stmts.eventAt.get({ conv, seq }) as { id: string; json: string };
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
      else sqls = fts ? [SQL.probe, SEARCH_SQL.walk(source, order), SEARCH_SQL.fts(source, order)] : [SEARCH_SQL.walk(source, order)];
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
      k: FTS_CANDIDATES + 1,
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
    if (process.env.ACS_EXP_PAGE) db.pragma(`page_size = ${process.env.ACS_EXP_PAGE}`); // EXP-REMOVE
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("temp_store = MEMORY");
    db.pragma("cache_size = -65536"); // 64 MiB per connection
    migrate(db);
    for (const p of (process.env.ACS_EXP_PRAGMAS ?? "").split(";").filter(Boolean)) db.pragma(p); // EXP-REMOVE
    return new SqliteStore(db);
  } catch (err) {
    db.close();
    throw err;
  }
}
