/**
 * The SQLite store's database, synchronous (better-sqlite3 is): conversations and their records,
 * writes in IMMEDIATE transactions (ingest.ts inserts the rows), staged imports, and searches (an
 * index range per page, paging.ts; body filters, body-search.ts). SqliteStore (store.ts) wraps it
 * in the async EventStore contract; the reader threads call it directly.
 */
import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import type { ConversationLifecycleStatus } from "@acs-toolkit/schema";
import { checkedPaging } from "../paging-check.js";
import { prepareEvent, type PreparedEvent } from "../prepare.js";
import {
  ConversationExistsError,
  ConversationNotFoundError,
  DuplicateEventIdError,
  type ConversationChanges,
  type ConversationListQuery,
  type ConversationRecord,
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
import { BodySearch, ftsQuery, type BodySearchTuning } from "./body-search.js";
import type { BackgroundCheckpointer } from "./checkpointer.js";
import { idHash, insertRows, type IngestTarget } from "./ingest.js";
import { Names } from "./names.js";
import { EMPTY_PAGE, boundsOf, isEmpty, joinPage, lastInOrder, narrowAfter, type JsonPageRow } from "./paging.js";
import { listConversationsSql, MAX_SEQ, SEARCH_SQL, SQL, STAGING_PREFIX, Statements } from "./statements.js";

const MAX_CONVERSATION_PK = 2 ** 31 - 1;

/** An event batch's open transaction (SqliteDatabase.openRows). */
export interface RowsInTransaction {
  /** Inserts the next rows. @throws DuplicateEventIdError (index within the batch), after rolling back */
  add(rows: readonly PreparedEvent[]): void;
  commit(): { firstSeq: number; eventCount: number; bytes: number };
  /** Nothing of the batch stays (a no-op once committed or rolled back). */
  rollback(): void;
}

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
  title: string | null;
  /** A JSON object's text. */
  tags: string | null;
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
    title: row.title,
    tags: row.tags === null ? null : (JSON.parse(row.tags) as Record<string, string>),
  };
}

/**
 * The store's database, synchronously (better-sqlite3 is): what the async SqliteStore and the
 * reader threads call.
 */
export class SqliteDatabase {
  private readonly statements: Statements;
  private readonly stmts: Statements["fixed"];
  private readonly inTransaction: Database.Transaction<<T>(fn: () => T) => T>;
  private readonly names: Names;
  private readonly bodySearch: BodySearch;
  /** What the write transaction in progress inserts with (its `bytes`: event JSON, for the checkpointer). */
  private readonly ingest: IngestTarget;
  unsortedPages = 0;

  constructor(
    private readonly db: Database.Database,
    tuning: BodySearchTuning = {},
    private readonly checkpointer?: BackgroundCheckpointer,
    private readonly sortedJsonPages = false,
  ) {
    this.statements = new Statements(db);
    this.stmts = this.statements.fixed;
    this.inTransaction = db.transaction(<T>(fn: () => T): T => fn());
    this.names = new Names(this.stmts.nameCode, this.stmts.addName);
    this.bodySearch = new BodySearch(this.statements, tuning);
    this.ingest = { statements: this.statements, names: this.names, bytes: 0 };
  }

  /** One IMMEDIATE transaction (takes the write lock up front: no upgrade deadlock under WAL). */
  private write<T>(fn: () => T): T {
    this.ingest.bytes = 0;
    let result: T;
    try {
      result = this.inTransaction.immediate(fn) as T;
    } catch (err) {
      this.names.forget(); // codes assigned in the rolled-back transaction are gone
      throw err;
    }
    this.checkpointer?.committed(this.ingest.bytes);
    return result;
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

  /**
   * An event batch (appendBatch): `rows` after the conversation's events, in one transaction; on
   * the import writer's connection when the store has one. The seq of the first row, the
   * conversation's count after, and the bytes of event JSON written (for the checkpointer).
   */
  appendRows(conversationId: string, rows: readonly PreparedEvent[]): { firstSeq: number; eventCount: number; bytes: number } {
    const batch = this.openRows(conversationId);
    batch.add(rows);
    return batch.commit();
  }

  /**
   * An event batch written chunk by chunk as its rows come (the import writer's side of
   * SqliteStore.streamBatch): BEGIN IMMEDIATE now, each chunk inserted when added, one COMMIT (or
   * ROLLBACK) at the end, so it is as atomic as appendRows.
   * @throws ConversationNotFoundError (nothing is left open)
   */
  openRows(conversationId: string): RowsInTransaction {
    this.ingest.bytes = 0;
    this.statements.get("begin", () => "BEGIN IMMEDIATE").run();
    const row = this.stmts.conversationById.get(conversationId) as ConversationRow | undefined;
    if (!row) {
      this.statements.get("rollback", () => "ROLLBACK").run();
      throw new ConversationNotFoundError(conversationId);
    }
    const now = new Date().toISOString();
    let added = 0;
    let open = true;
    const rollback = () => {
      if (!open) return;
      open = false;
      if (this.db.inTransaction) this.statements.get("rollback", () => "ROLLBACK").run();
      this.names.forget(); // codes assigned in the rolled-back transaction are gone
    };
    return {
      add: (rows) => {
        try {
          // Each chunk moves the conversation's counters on (insertRows), all in this transaction.
          insertRows(this.ingest, row.pk, row.next_seq + added, rows, now);
        } catch (error) {
          rollback();
          if (error instanceof DuplicateEventIdError) throw new DuplicateEventIdError(error.eventId, added + error.index);
          throw error;
        }
        added += rows.length;
      },
      commit: () => {
        try {
          this.statements.get("commit", () => "COMMIT").run();
        } catch (error) {
          rollback();
          throw error;
        }
        open = false;
        this.checkpointer?.committed(this.ingest.bytes);
        return { firstSeq: row.next_seq, eventCount: row.event_count + added, bytes: this.ingest.bytes };
      },
      rollback,
    };
  }

  /** After a batch (`bytes` of event JSON) was committed on another connection (the import writer). */
  committedElsewhere(bytes: number): void {
    this.checkpointer?.committed(bytes);
  }

  /** Inside a write transaction. */
  private insertEvents(conv: number, firstSeq: number, events: readonly EventToStore[], now: string): StoredEvent[] {
    // Every event is checked before the first row goes in (a failure also rolls back the names
    // interned here: see write).
    return insertRows(this.ingest, conv, firstSeq, events.map((entry, index) => prepareEvent(entry, index)), now);
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
    this.insertStagedRows(staged.pk, staged.written + 1, rows);
    staged.written += rows.length;
  }

  /** Where a staged import's next rows go, for a write on another connection (the import writer). */
  stagedTarget(handle: ImportHandle): { pk: number; firstSeq: number } {
    const staged = handle as StagedImport;
    return { pk: staged.pk, firstSeq: staged.written + 1 };
  }

  /** After `rows` rows (`bytes` of event JSON) of a staged import were committed on another connection. */
  importedElsewhere(handle: ImportHandle, rows: number, bytes: number): void {
    (handle as StagedImport).written += rows;
    this.checkpointer?.committed(bytes);
  }

  /**
   * The import writer's side of importRows (import-writer.ts): rows of the staged
   * conversation `pk` from `firstSeq`, one transaction; the bytes of event JSON written.
   */
  insertStagedRows(pk: number, firstSeq: number, rows: readonly PreparedEvent[]): number {
    this.write(() => insertRows(this.ingest, pk, firstSeq, rows, new Date().toISOString()));
    return this.ingest.bytes;
  }

  /** The import writer's side of discardImport. */
  discardStagedRows(pk: number, maxRows: number): boolean {
    return this.write(() => this.discardStaged(pk, maxRows));
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
    return this.discardStagedRows((handle as StagedImport).pk, maxRows);
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
    this.stmts.discardCounts.run({ conv });
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

  updateConversation(conversationId: string, changes: ConversationChanges): ConversationRecord {
    const { changes: updated } = this.stmts.updateConversation.run({
      id: conversationId,
      setTitle: changes.title === undefined ? 0 : 1,
      title: changes.title ?? null,
      setTags: changes.tags === undefined ? 0 : 1,
      tags: changes.tags === undefined ? null : JSON.stringify(changes.tags),
      now: new Date().toISOString(),
    });
    if (updated === 0) throw new ConversationNotFoundError(conversationId);
    return this.getConversation(conversationId)!;
  }

  /**
   * The first step of a delete: renames the conversation a staged one, so that no read finds it
   * and every write to it fails from now on (discardStagedRows then removes its rows, and the next
   * open whatever a crash left). Its pk, or undefined when there is no such conversation.
   */
  hideConversation(conversationId: string): number | undefined {
    const row = this.write(() => this.stmts.hideConversation.get({ id: conversationId, staging: `${STAGING_PREFIX}${randomUUID()}` })) as { pk: number } | undefined;
    return row?.pk;
  }

  listConversations(query: ConversationListQuery): ConversationRecord[] {
    const column = query.by === "createdAt" ? "created_at" : "updated_at";
    const from = query.from !== undefined;
    const stmt = this.statements.get(`conversations:${column}:${query.order}:${from}`, () => listConversationsSql(column, query.order, from));
    const rows = stmt.all({ n: Math.max(0, Math.floor(query.limit)), ...(query.from && { key: query.from.key, id: query.from.id }) }) as ConversationRow[];
    return rows.map(toRecord);
  }

  countConversations(): number {
    return (this.stmts.countConversations.get() as { n: number }).n;
  }

  // -- search ----------------------------------------------------------------------------------

  search(conversationId: string, query: SearchQuery): SearchPage {
    const { limit, order } = checkedPaging(query);
    const conv = this.pkOf(conversationId);
    const bounds = boundsOf(query, order, query.after);
    const none: SearchPage = { items: [], hasMore: false };
    const codes = this.codesOf(query);
    if (conv === undefined || isEmpty(bounds) || !codes) return none;
    if (query.body !== undefined) return this.bodySearch.page(conv, query, bounds, codes);
    const kind = query.kind !== undefined;
    const source = query.source !== undefined;
    const stmt = this.statements.get(`page:${kind}:${source}:${order}`, () => SEARCH_SQL.page(kind, source, order));
    const rows = stmt.all({ conv, ...codes, ...bounds, n: limit + 1 }) as StoredEvent[];
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
      this.statements.get(`pageJson:${sorted}:${kind}:${source}:${order}`, () => (sorted ? SEARCH_SQL.pageJsonSorted : SEARCH_SQL.pageJson)(kind, source, order)).get(params) as JsonPageRow;
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
      hasMore = !isEmpty(bounds) && this.statements.get(`any:${kind}:${source}`, () => SEARCH_SQL.any(kind, source)).get({ conv, ...codes, ...bounds }) !== undefined;
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

  /** Whether `count` must look at events' times (else the counters answer). */
  static timeRanged(filters: SearchFilters): boolean {
    return filters.timestampGte !== undefined || filters.timestampLt !== undefined;
  }

  /**
   * Without a body or time range the counters answer (a few rows); a time range alone in a
   * conversation whose timestamps never decrease is two lookups on the time index; a time range
   * with kind or source, or in a conversation out of time order, counts the range on its index
   * (O(events in the range)); a body: BodySearch.count. The server runs counts off the request thread.
   */
  count(conversationId: string, filters: SearchFilters): number {
    const conv = this.pkOf(conversationId);
    const bounds = boundsOf(filters);
    const codes = this.codesOf(filters);
    if (conv === undefined || isEmpty(bounds) || !codes) return 0;
    const source = filters.source !== undefined;
    if (filters.body !== undefined) return this.bodySearch.count(conv, filters, bounds, codes);
    const kind = filters.kind !== undefined;
    if (!SqliteDatabase.timeRanged(filters)) {
      return (this.statements.get(`counted:${kind}:${source}`, () => SEARCH_SQL.counted(kind, source)).get({ conv, ...codes }) as { n: number }).n;
    }
    if (!kind && !source && (this.stmts.tsOrdered.get(conv) as { ordered: number }).ordered === 1) {
      // Timestamps never decrease in append order (migrations.ts, version 4): the events in a time
      // range are the seqs between its first and its last, found on the time index in O(log n).
      const first = this.stmts.firstSeqIn.get({ conv, ...bounds }) as { seq: number } | undefined;
      return first ? (this.stmts.lastSeqIn.get({ conv, ...bounds }) as { seq: number }).seq - first.seq + 1 : 0;
    }
    const stmt = this.statements.get(`count:${kind}:${source}`, () => SEARCH_SQL.count(kind, source));
    return (stmt.get({ conv, ...codes, ...bounds }) as { n: number }).n;
  }

  explain(conversationId: string, query: SearchQuery, what: "search" | "count" | "searchJson" = "search"): string[][] {
    const kind = query.kind !== undefined;
    const source = query.source !== undefined;
    const order = query.order;
    let sqls: string[];
    if (query.body === undefined) {
      if (what === "searchJson") sqls = [SEARCH_SQL.pageJson(kind, source, order), SEARCH_SQL.any(kind, source)];
      else if (what === "search") sqls = [SEARCH_SQL.page(kind, source, order)];
      else sqls = [SqliteDatabase.timeRanged(query) ? SEARCH_SQL.count(kind, source) : SEARCH_SQL.counted(kind, source)];
    } else {
      const fts = this.bodySearch.ftsMatch(query.body.toLowerCase()) !== undefined;
      if (what === "count") sqls = [ftsQuery(query.body.toLowerCase()) !== undefined ? SEARCH_SQL.ftsCount(source) : SEARCH_SQL.walkCount(source)];
      else if (!fts) sqls = [SEARCH_SQL.walk(source, order)];
      else sqls = [SQL.probe, SEARCH_SQL.walk(source, order), SEARCH_SQL.fts(source, order), SEARCH_SQL.ftsOrdered(source, order), SQL.firstSeqIn, SQL.lastSeqIn];
    }
    const needle = (query.body ?? "").toLowerCase();
    const params = {
      conv: this.pkOf(conversationId) ?? 0,
      // The plan does not depend on the values: a name never stored explains as code 0.
      kind: query.kind === undefined ? undefined : (this.names.lookup(query.kind) ?? 0),
      source: query.source === undefined ? undefined : (this.names.lookup(query.source) ?? 0),
      messageKind: this.names.lookup("MessageEvent") ?? 0,
      needle,
      match: this.bodySearch.ftsMatch(needle) || '""',
      fromSeq: 1,
      toSeq: 2,
      ...boundsOf(query, order, query.after),
      n: query.limit + 1,
      k: this.bodySearch.ftsCandidates + 1,
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
    this.checkpointer?.close();
    if (this.db.open) this.db.close();
  }
}
