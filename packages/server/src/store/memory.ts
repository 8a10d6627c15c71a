/**
 * An EventStore in memory: the contract of types.ts in plain TypeScript, with no Node built-in and
 * no native module, so that it runs in a browser (a mock in a Service Worker) as well as in Node.
 * Nothing survives the process.
 *
 * Same semantics as the SQLite store (the contract suite, test/store/contract, runs on both):
 * events are ordered by (timestamp as microseconds UTC, append seq); the body filter matches only
 * MessageEvents whose searchable text (the validator's `searchableText`), lower-cased, holds the
 * body lower-cased; kind and source compare the stored names (an event without a source has its
 * kind's default). A write checks every event before it changes anything, so a failing one leaves
 * nothing behind.
 *
 * Costs: a page scans the conversation's time order from its start position (a binary search) until
 * it has `limit + 1` matches, so a selective filter scans further; a count scans the range. Fine for
 * the sizes a mock holds (tens of thousands of events), not a database.
 */
import type { ConversationLifecycleStatus } from "@acs-toolkit/schema";
import { checkedPaging } from "./paging-check.js";
import { prepareEvent, searchTextOf, type PreparedEvent, type RowBatch } from "./prepare.js";
import {
  type AppendedBatch,
  type ConversationChanges,
  type ConversationListQuery,
  ConversationExistsError,
  ConversationNotFoundError,
  DuplicateEventIdError,
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
} from "./types.js";

/** An event as kept: its stored form and what the filters compare. */
interface Row extends StoredEvent {
  kind: string;
  source: string;
  /** The lower-cased searchable text of a MessageEvent; null for other kinds. */
  text: string | null;
  /** `json` as UTF-8, encoded when a page (searchJson) first holds the event (events never change). */
  bytes: Uint8Array | undefined;
}

const utf8 = new TextEncoder();
const COMMA = 0x2c;

interface Conversation {
  record: ConversationRecord;
  /** By seq - 1 (append order). */
  bySeq: Row[];
  /** In (ts, seq) order. */
  byTime: Row[];
  ids: Map<string, Row>;
}

class StagedImport implements ImportHandle {
  written = 0;
  constructor(
    readonly conversation: Conversation,
    readonly finalId: string,
  ) {}
}

const before = (a: Position, b: Position) => a.ts < b.ts || (a.ts === b.ts && a.seq < b.seq);

/** The index of the first row of `rows` (in time order) after `p` (strictly, or at it with `inclusive`). */
function firstAfter(rows: readonly Row[], p: Position, inclusive = false): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const row = rows[mid]!;
    if (before(row, p) || (!inclusive && row.ts === p.ts && row.seq === p.seq)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The filters as a test of one row (the time range is applied by the scan's bounds). */
function matcher(filters: SearchFilters): (row: Row) => boolean {
  const { kind, source } = filters;
  const body = filters.body?.toLowerCase();
  if (body !== undefined && kind !== undefined && kind !== "MessageEvent") return () => false;
  return (row) =>
    (kind === undefined || row.kind === kind) &&
    (source === undefined || row.source === source) &&
    (body === undefined || (row.text !== null && row.text.includes(body)));
}

/** Options of {@link MemoryEventStore}; none yet. */
export interface MemoryStoreOptions {
  /**
   * How appendBatch reads a RowBatch's rows. RowBatches come from the server's import thread, in
   * Node: pass `decodeRows` of `@acs-toolkit/server`'s row-batch module there (it needs `node:v8`,
   * which this browser-safe store does not import). Without it appendBatch rejects.
   */
  decodeRows?: (batch: RowBatch) => PreparedEvent[];
}

/** The in-memory EventStore (see the module comment). */
export class MemoryEventStore implements EventStore {
  readonly kind = "memory";

  constructor(private readonly options: MemoryStoreOptions = {}) {}

  private readonly conversations = new Map<string, Conversation>();
  private readonly documents = new Map<string, string>();
  private closed = false;

  // Each method runs whole before its Promise is made (as one transaction, in call order), and
  // reports a failure as a rejection, never a throw.
  private run<T>(fn: () => T): Promise<T> {
    try {
      if (this.closed) throw new Error("the store is closed");
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  createConversation(conversation: NewConversation, events: readonly EventToStore[]): Promise<ConversationRecord> {
    return this.run(() => {
      if (this.conversations.has(conversation.id)) throw new ConversationExistsError(conversation.id);
      const created = this.newConversation(conversation.id, conversation);
      this.append(created, events.map((entry, index) => prepareEvent(entry, index)), created.record.createdAt);
      this.conversations.set(conversation.id, created);
      return copyRecord(created.record);
    });
  }

  getConversation(id: string): Promise<ConversationRecord | undefined> {
    return this.run(() => {
      const found = this.conversations.get(id);
      return found && copyRecord(found.record);
    });
  }

  beginImport(conversation: NewConversation): Promise<ImportHandle> {
    return this.run(() => {
      if (this.conversations.has(conversation.id)) throw new ConversationExistsError(conversation.id);
      // Kept by the handle only: invisible to every read until finishImport.
      return new StagedImport(this.newConversation(conversation.id, conversation), conversation.id);
    });
  }

  importRows(handle: ImportHandle, rows: readonly PreparedEvent[]): Promise<void> {
    return this.run(() => {
      const staged = handle as StagedImport;
      this.append(staged.conversation, rows);
      staged.written += rows.length;
    });
  }

  finishImport(handle: ImportHandle, events: readonly EventToStore[]): Promise<ConversationRecord> {
    return this.run(() => {
      const staged = handle as StagedImport;
      const rows = events.map((entry, index) => prepareEvent(entry, index));
      if (this.conversations.has(staged.finalId)) throw new ConversationExistsError(staged.finalId);
      const conversation = staged.conversation;
      const now = new Date().toISOString();
      this.append(conversation, rows, now);
      conversation.record.createdAt = conversation.record.updatedAt = now;
      this.conversations.set(staged.finalId, conversation);
      return copyRecord(conversation.record);
    });
  }

  discardImport(handle: ImportHandle, maxRows: number): Promise<boolean> {
    return this.run(() => {
      const { conversation } = handle as StagedImport;
      const n = Math.max(1, Math.floor(maxRows));
      // Newest first, as the SQLite store removes them.
      const removed = conversation.bySeq.splice(Math.max(0, conversation.bySeq.length - n));
      for (const row of removed) conversation.ids.delete(row.id);
      const gone = new Set(removed);
      conversation.byTime = conversation.byTime.filter((row) => !gone.has(row));
      conversation.record.eventCount = conversation.bySeq.length;
      return conversation.bySeq.length === 0;
    });
  }

  appendBatch(conversationId: string, batch: RowBatch): Promise<AppendedBatch> {
    return this.run(() => {
      const conversation = this.conversations.get(conversationId);
      if (!conversation) throw new ConversationNotFoundError(conversationId);
      const firstSeq = conversation.bySeq.length + 1;
      if (!this.options.decodeRows) throw new Error("appendBatch needs the store's decodeRows option (MemoryStoreOptions)");
      const stored = this.append(conversation, this.options.decodeRows(batch));
      return { firstSeq, count: stored.length, eventCount: conversation.bySeq.length };
    });
  }

  appendEvents(conversationId: string, events: readonly EventToStore[]): Promise<StoredEvent[]> {
    return this.run(() => {
      const conversation = this.conversations.get(conversationId);
      if (!conversation) throw new ConversationNotFoundError(conversationId);
      return this.append(conversation, events.map((entry, index) => prepareEvent(entry, index)));
    });
  }

  setStatus(conversationId: string, status: ConversationLifecycleStatus): Promise<ConversationRecord> {
    return this.run(() => {
      const conversation = this.conversations.get(conversationId);
      if (!conversation) throw new ConversationNotFoundError(conversationId);
      conversation.record.status = status;
      conversation.record.updatedAt = new Date().toISOString();
      return copyRecord(conversation.record);
    });
  }

  updateConversation(conversationId: string, changes: ConversationChanges): Promise<ConversationRecord> {
    return this.run(() => {
      const conversation = this.conversations.get(conversationId);
      if (!conversation) throw new ConversationNotFoundError(conversationId);
      if (changes.title !== undefined) conversation.record.title = changes.title;
      if (changes.tags !== undefined) conversation.record.tags = { ...changes.tags };
      conversation.record.updatedAt = new Date().toISOString();
      return copyRecord(conversation.record);
    });
  }

  deleteConversation(conversationId: string): Promise<boolean> {
    return this.run(() => this.conversations.delete(conversationId));
  }

  /** Sorts every conversation for each page: fine for the few hundred a mock holds, not a database. */
  listConversations(query: ConversationListQuery): Promise<ConversationRecord[]> {
    return this.run(() => {
      const { by, order, from } = query;
      const sign = order === "asc" ? 1 : -1;
      const compare = (a: { key: string; id: string }, b: { key: string; id: string }) => sign * (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      const keyed = [...this.conversations.values()].map(({ record }) => ({ key: record[by], id: record.id, record }));
      return keyed
        .filter((entry) => from === undefined || compare(entry, from) >= 0)
        .sort(compare)
        .slice(0, Math.max(0, Math.floor(query.limit)))
        .map((entry) => copyRecord(entry.record));
    });
  }

  countConversations(): Promise<number> {
    return this.run(() => this.conversations.size);
  }

  search(conversationId: string, query: SearchQuery): Promise<SearchPage> {
    return this.run(() => this.page(conversationId, query));
  }

  searchJson(conversationId: string, query: SearchQuery): Promise<JsonPage> {
    return this.run(() => {
      const { rows, hasMore } = this.pageRows(conversationId, query);
      // One buffer for the page, as the endpoint sends it (Uint8Array: no Node Buffer), copied from
      // each event's UTF-8 kept since its first page: a page is not joined and encoded again on
      // every read (that was most of the store's part of a mock's event search, ~60 KB a page).
      let length = Math.max(0, rows.length - 1);
      for (const row of rows) length += (row.bytes ??= utf8.encode(row.json)).byteLength;
      const json = new Uint8Array(length);
      let at = 0;
      for (const [index, row] of rows.entries()) {
        if (index > 0) json[at++] = COMMA;
        json.set(row.bytes!, at);
        at += row.bytes!.byteLength;
      }
      const last = rows[rows.length - 1];
      return { json, count: rows.length, last: last && { ts: last.ts, seq: last.seq }, hasMore };
    });
  }

  count(conversationId: string, filters: SearchFilters): Promise<number> {
    return this.run(() => {
      const conversation = this.conversations.get(conversationId);
      if (!conversation) return 0;
      const matches = matcher(filters);
      let n = 0;
      for (const row of this.range(conversation, filters, "asc")) if (matches(row)) n++;
      return n;
    });
  }

  positionOf(conversationId: string, eventId: string): Promise<Position | undefined> {
    return this.run(() => {
      const row = this.conversations.get(conversationId)?.ids.get(eventId);
      return row && { ts: row.ts, seq: row.seq };
    });
  }

  readAfter(conversationId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return this.run(() => {
      const conversation = this.conversations.get(conversationId);
      if (!conversation) return [];
      const from = Math.max(0, Math.floor(afterSeq));
      return conversation.bySeq.slice(from, from + Math.max(0, Math.floor(limit))).map(stored);
    });
  }

  getDocument(key: string): Promise<string | undefined> {
    return this.run(() => this.documents.get(key));
  }

  putDocument(key: string, value: string): Promise<void> {
    return this.run(() => void this.documents.set(key, value));
  }

  ping(): Promise<boolean> {
    return Promise.resolve(!this.closed);
  }

  close(): Promise<void> {
    this.closed = true;
    this.conversations.clear();
    this.documents.clear();
    return Promise.resolve();
  }

  private newConversation(id: string, conversation: NewConversation): Conversation {
    const now = new Date().toISOString();
    return {
      record: {
        id,
        status: conversation.status,
        createdAt: now,
        updatedAt: now,
        eventCount: 0,
        repository: conversation.repository ?? null,
        selectedBranch: conversation.selectedBranch ?? null,
        gitProvider: conversation.gitProvider ?? null,
        title: null,
        tags: null,
      },
      bySeq: [],
      byTime: [],
      ids: new Map(),
    };
  }

  /**
   * Appends prepared rows, all or none: every id is checked (against the stored ones and the
   * batch's earlier ones, the first offender reported) before anything changes.
   */
  private append(conversation: Conversation, prepared: readonly PreparedEvent[], now = new Date().toISOString()): StoredEvent[] {
    if (prepared.length === 0) return [];
    const seen = new Set<string>();
    for (const [index, { id }] of prepared.entries()) {
      if (conversation.ids.has(id) || seen.has(id)) throw new DuplicateEventIdError(id, index);
      seen.add(id);
    }
    const first = conversation.bySeq.length + 1;
    const rows = prepared.map((p, index): Row => ({ id: p.id, json: p.json, ts: p.ts, seq: first + index, kind: p.kind, source: p.source, text: searchTextOf(p), bytes: undefined }));
    for (const row of rows) {
      conversation.bySeq.push(row);
      conversation.ids.set(row.id, row);
      // Appends mostly come in time order: the common case is a push.
      const at = firstAfter(conversation.byTime, row);
      if (at === conversation.byTime.length) conversation.byTime.push(row);
      else conversation.byTime.splice(at, 0, row);
    }
    conversation.record.eventCount = conversation.bySeq.length;
    conversation.record.updatedAt = now;
    return rows.map(stored);
  }

  /** The rows within the filters' time range and after the query's cursor, in `order`. */
  private *range(conversation: Conversation, query: SearchFilters & { after?: Position }, order: "asc" | "desc"): Generator<Row> {
    const rows = conversation.byTime;
    // [lo, hi): the time range, as the positions (ts, 0) on both sides (seqs start at 1).
    let lo = query.timestampGte === undefined ? 0 : firstAfter(rows, { ts: query.timestampGte, seq: 0 });
    let hi = query.timestampLt === undefined ? rows.length : firstAfter(rows, { ts: query.timestampLt, seq: 0 });
    if (query.after) {
      if (order === "asc") lo = Math.max(lo, firstAfter(rows, query.after));
      else hi = Math.min(hi, firstAfter(rows, query.after, true));
    }
    if (order === "asc") for (let i = lo; i < hi; i++) yield rows[i]!;
    else for (let i = hi - 1; i >= lo; i--) yield rows[i]!;
  }

  private page(conversationId: string, query: SearchQuery): SearchPage {
    const { rows, hasMore } = this.pageRows(conversationId, query);
    return { items: rows.map(stored), hasMore };
  }

  /** The store's own rows of a page (never handed out: {@link page} copies them). */
  private pageRows(conversationId: string, query: SearchQuery): { rows: Row[]; hasMore: boolean } {
    checkedPaging(query);
    const conversation = this.conversations.get(conversationId);
    if (!conversation) return { rows: [], hasMore: false };
    const matches = matcher(query);
    const rows: Row[] = [];
    for (const row of this.range(conversation, query, query.order)) {
      if (!matches(row)) continue;
      if (rows.length === query.limit) return { rows, hasMore: true };
      rows.push(row);
    }
    return { rows, hasMore: false };
  }
}

/** A record as handed out: a copy, its tags too (callers never hold the store's own objects). */
const copyRecord = (record: ConversationRecord): ConversationRecord => ({ ...record, tags: record.tags && { ...record.tags } });

/** The stored form of a row (a copy: callers never hold the store's own objects). */
const stored = ({ id, json, ts, seq }: Row): StoredEvent => ({ id, json, ts, seq });

/** A new, empty in-memory store. */
export function openMemoryStore(options: MemoryStoreOptions = {}): MemoryEventStore {
  return new MemoryEventStore(options);
}
