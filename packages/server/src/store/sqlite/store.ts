/** The SQLite store as the async EventStore contract: SqliteStore over a SqliteDatabase and its reader threads. */
import type { ConversationLifecycleStatus } from "@acs-toolkit/schema";
import type { PreparedEvent } from "../prepare.js";
import type {
  ConversationRecord,
  EventStore,
  EventToStore,
  ImportHandle,
  JsonPage,
  NewConversation,
  Position,
  SearchFilters,
  SearchPage,
  SearchQuery,
  StoredEvent,
} from "../types.js";
import type { WorkerPool } from "../../workers/pool.js";
import { SqliteDatabase } from "./database.js";
import { EMPTY_PAGE, checkedPaging } from "./paging.js";

/** The SQLite store: the EventStore contract, and what its tests and diagnostics read. */
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
 * The EventStore over a SqliteDatabase. Every call runs synchronously, in the order made, before its
 * Promise is created (so the order of calls is the order of transactions, and a read made after a
 * write resolved sees it), except body and time-range counts and body-filtered pages, which go to the reader
 * threads when there are some: their cost grows with the matches, not the page.
 */
export class SqliteStore implements SqliteEventStore {
  readonly kind = "sqlite" as const;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly reads?: WorkerPool,
  ) {}

  get unsortedPages(): number {
    return this.db.unsortedPages;
  }

  // Each method calls the database synchronously and wraps the outcome (a throw becomes a rejection):
  // no await before the call, so no other call can come between.
  private static settle<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  createConversation(conversation: NewConversation, events: readonly EventToStore[]): Promise<ConversationRecord> {
    return SqliteStore.settle(() => this.db.createConversation(conversation, events));
  }
  getConversation(id: string): Promise<ConversationRecord | undefined> {
    return SqliteStore.settle(() => this.db.getConversation(id));
  }
  beginImport(conversation: NewConversation): Promise<ImportHandle> {
    return SqliteStore.settle(() => this.db.beginImport(conversation));
  }
  importRows(handle: ImportHandle, rows: readonly PreparedEvent[]): Promise<void> {
    return SqliteStore.settle(() => this.db.importRows(handle, rows));
  }
  finishImport(handle: ImportHandle, events: readonly EventToStore[]): Promise<ConversationRecord> {
    return SqliteStore.settle(() => this.db.finishImport(handle, events));
  }
  discardImport(handle: ImportHandle, maxRows: number): Promise<boolean> {
    return SqliteStore.settle(() => this.db.discardImport(handle, maxRows));
  }
  appendEvents(conversationId: string, events: readonly EventToStore[]): Promise<StoredEvent[]> {
    return SqliteStore.settle(() => this.db.appendEvents(conversationId, events));
  }
  setStatus(conversationId: string, status: ConversationLifecycleStatus): Promise<ConversationRecord> {
    return SqliteStore.settle(() => this.db.setStatus(conversationId, status));
  }
  search(conversationId: string, query: SearchQuery): Promise<SearchPage> {
    return SqliteStore.settle(() => this.db.search(conversationId, query));
  }

  searchJson(conversationId: string, query: SearchQuery): Promise<JsonPage> {
    // Pages without a body filter are one index range: cheap, in place. A body filter may walk up
    // to SCAN_BUDGET messages: on a reader thread when there is one.
    if (query.body === undefined || !this.reads) return SqliteStore.settle(() => this.db.searchJson(conversationId, query));
    const reads = this.reads;
    return (async () => {
      checkedPaging(query);
      let page: JsonPage = EMPTY_PAGE;
      await reads.run({ op: "searchJson", conversationId, query }, (message) => void (page = message.page as JsonPage));
      return page;
    })();
  }

  count(conversationId: string, filters: SearchFilters): Promise<number> {
    const unfiltered = Object.values(filters).every((value) => value === undefined);
    if (unfiltered) return SqliteStore.settle(() => this.db.getConversation(conversationId)?.eventCount ?? 0); // stored with the conversation
    // Kind and source alone add up the counters (a few rows): in place, no reader-thread hop.
    const counted = filters.body === undefined && !SqliteDatabase.timeRanged(filters);
    if (counted || !this.reads) return SqliteStore.settle(() => this.db.count(conversationId, filters));
    const reads = this.reads;
    return (async () => {
      let count = 0;
      await reads.run({ op: "count", conversationId, filters }, (message) => void (count = message.count as number));
      return count;
    })();
  }

  positionOf(conversationId: string, eventId: string): Promise<Position | undefined> {
    return SqliteStore.settle(() => this.db.positionOf(conversationId, eventId));
  }
  readAfter(conversationId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return SqliteStore.settle(() => this.db.readAfter(conversationId, afterSeq, limit));
  }
  getDocument(key: string): Promise<string | undefined> {
    return SqliteStore.settle(() => this.db.getDocument(key));
  }
  putDocument(key: string, value: string): Promise<void> {
    return SqliteStore.settle(() => this.db.putDocument(key, value));
  }
  ping(): Promise<boolean> {
    return Promise.resolve(this.db.ping());
  }
  explain(conversationId: string, query: SearchQuery, what?: "search" | "count" | "searchJson"): string[][] {
    return this.db.explain(conversationId, query, what);
  }

  async close(): Promise<void> {
    const reads = this.reads?.close();
    this.db.close();
    await reads;
  }
}
