/** The SQLite store as the async EventStore contract: SqliteStore over a SqliteDatabase and its reader threads. */
import { MessageChannel } from "node:worker_threads";
import type { ConversationLifecycleStatus } from "@acs-toolkit/schema";
import { checkedPaging } from "../paging-check.js";
import type { PreparedEvent, RowBatch } from "../prepare.js";
import { decodeRows, transferableChunks } from "../row-batch.js";
import {
  ConversationNotFoundError,
  DuplicateEventIdError,
  type AppendedBatch,
  type BatchStream,
  type ConversationChanges,
  type ConversationListQuery,
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
import type { WorkerPool } from "../../threads/pool.js";
import { SqliteDatabase } from "./database.js";
import { EMPTY_PAGE } from "./paging.js";

/** Rows a step of a delete removes (one transaction each; about as long as a write of an import). */
const DELETE_STEP_ROWS = 2000;

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
 * threads when there are some (their cost grows with the matches, not the page), and the rows of
 * staged imports, which go to the import writer when there is one: writes made while it writes
 * wait their turn, in the order made.
 */
export class SqliteStore implements SqliteEventStore {
  readonly kind = "sqlite" as const;
  /** Writes started and not settled that later writes wait behind (see `inTurn`). */
  private writesAhead = 0;
  private lastWrite: Promise<unknown> = Promise.resolve();

  /**
   * @param reads reader threads (read-worker.ts)
   * @param importWriter the import writer thread (import-writer.ts): staged imports' rows
   *   are written there, on a connection of its own
   */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly reads?: WorkerPool,
    private readonly importWriter?: WorkerPool,
  ) {}

  /**
   * Runs a write in its turn. With no write in flight on the import writer (the usual case) it runs
   * at once, synchronously, like every other call; while one is, it waits behind it and every
   * write made before it, in order. So the two connections never meet at SQLite's write lock,
   * whose busy handler would sleep on this thread.
   */
  private inTurn<T>(write: () => T | Promise<T>): Promise<T> {
    let result: Promise<T>;
    if (this.writesAhead === 0) {
      let value: T | Promise<T>;
      try {
        value = write();
      } catch (error) {
        return Promise.reject(error as Error);
      }
      if (!(value instanceof Promise)) return Promise.resolve(value);
      result = value;
    } else {
      result = this.lastWrite.then(write);
    }
    this.writesAhead++;
    this.lastWrite = result.then(
      () => void this.writesAhead--,
      () => void this.writesAhead--,
    );
    return result;
  }

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
    return this.inTurn(() => this.db.createConversation(conversation, events));
  }
  getConversation(id: string): Promise<ConversationRecord | undefined> {
    return SqliteStore.settle(() => this.db.getConversation(id));
  }
  beginImport(conversation: NewConversation): Promise<ImportHandle> {
    return this.inTurn(() => this.db.beginImport(conversation));
  }
  importRows(handle: ImportHandle, rows: readonly PreparedEvent[]): Promise<void> {
    const writer = this.importWriter;
    if (!writer) return this.inTurn(() => this.db.importRows(handle, rows));
    return this.inTurn(async () => {
      const { pk, firstSeq } = this.db.stagedTarget(handle);
      let answer: { bytes?: number; duplicate?: { eventId: string; index: number } } = {};
      await writer.run({ op: "insert", pk, firstSeq, rows }, (message) => void (answer = message as typeof answer));
      if (answer.duplicate) throw new DuplicateEventIdError(answer.duplicate.eventId, answer.duplicate.index);
      this.db.importedElsewhere(handle, rows.length, answer.bytes ?? 0);
    });
  }
  finishImport(handle: ImportHandle, events: readonly EventToStore[]): Promise<ConversationRecord> {
    return this.inTurn(() => this.db.finishImport(handle, events));
  }
  discardImport(handle: ImportHandle, maxRows: number): Promise<boolean> {
    const writer = this.importWriter;
    if (!writer) return this.inTurn(() => this.db.discardImport(handle, maxRows));
    return this.inTurn(async () => {
      let gone = false;
      await writer.run({ op: "discard", pk: this.db.stagedTarget(handle).pk, maxRows }, (message) => void (gone = message.gone as boolean));
      return gone;
    });
  }
  appendBatch(conversationId: string, batch: RowBatch): Promise<AppendedBatch> {
    const writer = this.importWriter;
    if (!writer) {
      return this.inTurn(() => {
        const { firstSeq, eventCount } = this.db.appendRows(conversationId, decodeRows(batch));
        return { firstSeq, count: batch.count, eventCount };
      });
    }
    // The batch's one transaction runs on the import writer: its rows go there as the bytes they
    // came in (RowBatch), never decoded on this thread; other writes wait their turn meanwhile.
    return this.inTurn(async () => {
      type Answer = { firstSeq?: number; eventCount?: number; bytes?: number; notFound?: true; duplicate?: { eventId: string; index: number } };
      let answer: Answer = {};
      const count = batch.count; // the chunks move to the writer (not copied): unusable here after
      await writer.run({ op: "append", conversationId, batch }, (message) => void (answer = message as Answer), transferableChunks(batch));
      if (answer.notFound) throw new ConversationNotFoundError(conversationId);
      if (answer.duplicate) throw new DuplicateEventIdError(answer.duplicate.eventId, answer.duplicate.index);
      this.db.committedElsewhere(answer.bytes ?? 0);
      return { firstSeq: answer.firstSeq!, count, eventCount: answer.eventCount! };
    });
  }
  /**
   * With an import writer: the batch's transaction begins there now (in turn), and each chunk is
   * written as it is added, while the import thread still parses the batch's last lines; the
   * chunks go there as bytes, through a port of the job's own.
   */
  streamBatch(conversationId: string): BatchStream | undefined {
    const writer = this.importWriter;
    if (!writer) return undefined;
    const { port1, port2 } = new MessageChannel();
    let count = 0;
    type Answer = { firstSeq?: number; eventCount?: number; bytes?: number; notFound?: true; aborted?: true; duplicate?: { eventId: string; index: number } };
    const written = this.inTurn(async (): Promise<AppendedBatch | undefined> => {
      let answer: Answer = {};
      try {
        await writer.run({ op: "appendStream", conversationId, rows: port2 }, (message) => void (answer = message as Answer), [port2]);
      } finally {
        port1.close();
      }
      if (answer.notFound) throw new ConversationNotFoundError(conversationId);
      if (answer.duplicate) throw new DuplicateEventIdError(answer.duplicate.eventId, answer.duplicate.index);
      if (answer.aborted) return undefined;
      this.db.committedElsewhere(answer.bytes ?? 0);
      return { firstSeq: answer.firstSeq!, count, eventCount: answer.eventCount! };
    });
    written.catch(() => {}); // end or abort hands it on
    return {
      add: (chunk) => port1.postMessage(chunk, transferableChunks({ count: 0, chunks: [chunk] })),
      end: async (n) => {
        count = n;
        port1.postMessage({ end: n });
        const appended = await written;
        if (!appended) throw new Error("the import writer rolled an event batch back unasked");
        return appended;
      },
      abort: async () => {
        port1.postMessage({ abort: true });
        await written.catch(() => {});
      },
    };
  }
  appendEvents(conversationId: string, events: readonly EventToStore[]): Promise<StoredEvent[]> {
    return this.inTurn(() => this.db.appendEvents(conversationId, events));
  }
  setStatus(conversationId: string, status: ConversationLifecycleStatus): Promise<ConversationRecord> {
    return this.inTurn(() => this.db.setStatus(conversationId, status));
  }
  updateConversation(conversationId: string, changes: ConversationChanges): Promise<ConversationRecord> {
    return this.inTurn(() => this.db.updateConversation(conversationId, changes));
  }
  /**
   * Hidden in one transaction, then its rows removed DELETE_STEP_ROWS at a time, each step a write
   * in turn with the others and a task of its own: a conversation of a million events never holds
   * the store (nor this thread) for long.
   */
  async deleteConversation(conversationId: string): Promise<boolean> {
    const pk = await this.inTurn(() => this.db.hideConversation(conversationId));
    if (pk === undefined) return false;
    while (!(await this.inTurn(() => this.db.discardStagedRows(pk, DELETE_STEP_ROWS)))) await new Promise((resolve) => setImmediate(resolve));
    return true;
  }
  listConversations(query: ConversationListQuery): Promise<ConversationRecord[]> {
    return SqliteStore.settle(() => this.db.listConversations(query));
  }
  countConversations(): Promise<number> {
    return SqliteStore.settle(() => this.db.countConversations());
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
    return this.inTurn(() => this.db.putDocument(key, value));
  }
  ping(): Promise<boolean> {
    return Promise.resolve(this.db.ping());
  }
  explain(conversationId: string, query: SearchQuery, what?: "search" | "count" | "searchJson"): string[][] {
    return this.db.explain(conversationId, query, what);
  }

  async close(): Promise<void> {
    const reads = this.reads?.close();
    await this.lastWrite; // the import writer's transaction in flight, and the writes behind it
    const writes = this.importWriter?.close();
    this.db.close();
    await Promise.all([reads, writes]);
  }
}
