/**
 * The storage contract of the reference server. The embedded SQLite store implements it; a
 * PostgreSQL store (a later issue) implements the same contract, so semantics live here.
 */
import type { ConversationLifecycleStatus, Event, EventKind, EventSource, ProviderType } from "@acs-toolkit/schema";
import type { PreparedEvent, RowBatch } from "./prepare.js";

/** An event ready to store: its parsed value and the exact JSON text that search returns. */
export interface EventToStore {
  event: Event;
  /** JSON text of the event, returned as is by search (byte for byte). */
  json: string;
  /**
   * The timestamp is the recording server's clock at the call, not the event's own. A store that
   * several server instances append to (PostgreSQL) moves it forward to the conversation's latest
   * timestamp when it is earlier (the instance stamped it before the database ordered the append),
   * so that the order by timestamp is the append order; the StoredEvent returned carries the JSON
   * as stored. A single-process store stamps in call order already and keeps it.
   */
  stampedAtRecording?: boolean;
}

/** Where an event stands in the one total order of a conversation: (timestamp, append order). */
export interface Position {
  /** The event's timestamp as microseconds since the epoch, UTC (see eventTimeMicros). */
  ts: number;
  /** Append order within the conversation, from 1. */
  seq: number;
}

export interface StoredEvent extends Position {
  id: string;
  json: string;
}

export interface ConversationRecord {
  /** Canonical id: lower-case hyphenated UUID. */
  id: string;
  status: ConversationLifecycleStatus;
  /** ISO-8601 with `Z`. */
  createdAt: string;
  updatedAt: string;
  eventCount: number;
  repository: string | null;
  selectedBranch: string | null;
  gitProvider: ProviderType | null;
  /** The title stored by an update (updateConversation); null: none, ConversationInfo shows what was recorded. */
  title: string | null;
  /** The tags stored by an update, all of them; null: none, ConversationInfo shows what was recorded. */
  tags: Record<string, string> | null;
}

/** What an update stores (updateConversation); an absent field stays as it was. */
export interface ConversationChanges {
  title?: string;
  tags?: Record<string, string>;
}

/** The keys conversations are listed by: creation or last change, then id. */
export type ConversationSortKey = "createdAt" | "updatedAt";

/** A page of the conversation listing (listConversations). */
export interface ConversationListQuery {
  by: ConversationSortKey;
  order: "asc" | "desc";
  /** At least 1. */
  limit: number;
  /**
   * The page starts AT this position, inclusive, in `order`: the sort key's value (`createdAt` or
   * `updatedAt` of a record) and the id that breaks ties.
   */
  from?: { key: string; id: string };
}

export interface NewConversation {
  id: string;
  status: ConversationLifecycleStatus;
  repository?: string | null;
  selectedBranch?: string | null;
  gitProvider?: ProviderType | null;
}

export interface SearchFilters {
  kind?: EventKind;
  source?: EventSource;
  /** Case-insensitive substring of a MessageEvent's text; any value excludes every other kind. */
  body?: string;
  /** Inclusive lower bound, microseconds UTC. */
  timestampGte?: number;
  /** Exclusive upper bound, microseconds UTC. */
  timestampLt?: number;
}

export interface SearchQuery extends SearchFilters {
  order: "asc" | "desc";
  /** 1..100 */
  limit: number;
  /** Resume strictly after this position (in `order`). */
  after?: Position;
}

export interface SearchPage {
  items: StoredEvent[];
  /**
   * True when the next page may hold more: at least one more event matches after the last item,
   * or (with `resumeAfter`) the page's scan budget ran out before the search was done.
   */
  hasMore: boolean;
  /**
   * Set when a body search spent its scan budget before filling the page: the page is shorter than
   * `limit` (possibly empty) and the next one resumes strictly after this position, not after the
   * last item. The pages together are exactly the matching events, in order, none twice.
   */
  resumeAfter?: Position;
}

/**
 * A page as the search endpoint sends it: the same events, in the same order, as {@link SearchPage}
 * for the same query, but as one UTF-8 buffer of their stored JSON texts joined by `,` (what goes
 * between the brackets of `items`), so that a page never becomes a JavaScript string on its way
 * out of the store.
 */
export interface JsonPage {
  /** The page's events, their stored JSON texts joined by `,`, UTF-8; empty for no events. */
  json: Uint8Array;
  /** How many events the page holds. */
  count: number;
  /**
   * The position a next-page cursor resumes after: where the page's last event stands, or a later
   * position when a body search's scan budget ended the page first (SearchPage.resumeAfter).
   */
  last: Position | undefined;
  /** True when the next page may hold more (see SearchPage.hasMore). */
  hasMore: boolean;
}

export class ConversationExistsError extends Error {
  constructor(readonly conversationId: string) {
    super(`Conversation already exists: ${conversationId}`);
  }
}

/** appendEvents or setStatus on a conversation that does not exist. */
export class ConversationNotFoundError extends Error {
  override readonly name = "ConversationNotFoundError";
  constructor(readonly conversationId: string) {
    super(`Conversation not found: ${conversationId}`);
  }
}

/**
 * The conversation with this id (a UUID in any case), or ConversationNotFoundError naming the id as
 * given; the HTTP layer answers that error with 404.
 */
export async function requireConversation(store: Pick<EventStore, "getConversation">, id: string): Promise<ConversationRecord> {
  const record = await store.getConversation(id.toLowerCase());
  if (!record) throw new ConversationNotFoundError(id);
  return record;
}

/**
 * The store cannot answer now: its database does not answer, a statement ran past its timeout, or
 * its connection was lost. The request may be retried; the HTTP layer answers 503 with `detail`.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
  constructor(
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
  }
}

export class DuplicateEventIdError extends Error {
  constructor(
    readonly eventId: string,
    /** Index of the offending event in the batch. */
    readonly index: number,
  ) {
    super(`event id ${eventId} is already in this conversation`);
  }
}

/**
 * A conversation being created in several transactions (a large replay): invisible to every read
 * until finishImport, removed by discardImport, and by the next open after a crash.
 */
export interface ImportHandle {
  /** Events written so far. */
  readonly written: number;
}

/** A batch being written as its rows come (EventStore.streamBatch). */
export interface BatchStream {
  /** The next chunk of rows (a RowBatch chunk); moved, not copied: unusable here afterwards. */
  add(chunk: Uint8Array): void;
  /**
   * Commits, once `count` rows were added.
   * @throws DuplicateEventIdError (index within the batch), ConversationNotFoundError
   */
  end(count: number): Promise<AppendedBatch>;
  /** Rolls back; resolves once nothing of the batch is held any more. */
  abort(): Promise<void>;
}

/** Where a batch went (EventStore.appendBatch). */
export interface AppendedBatch {
  /** The seq of the batch's first event (the next seq when it was empty). */
  firstSeq: number;
  count: number;
  /** The conversation's events after the batch. */
  eventCount: number;
}

/**
 * The storage contract. Every method returns a Promise, so that a store across a network
 * (PostgreSQL) can implement it; a method's errors are rejections. Writes are atomic: a rejected
 * write changed nothing. A store applies the writes of one conversation in the order they were
 * called, and a read called after a write resolved sees it.
 */
export interface EventStore {
  /** Which store this is, for /health and logs ("sqlite", "memory", "postgres"). */
  readonly kind: string;
  /**
   * Creates a conversation with its first events in one transaction: afterwards the conversation
   * exists with every event, or does not exist at all.
   * @throws ConversationExistsError, DuplicateEventIdError
   */
  createConversation(conversation: NewConversation, events: readonly EventToStore[]): Promise<ConversationRecord>;
  getConversation(id: string): Promise<ConversationRecord | undefined>;
  /**
   * Starts a staged creation (see ImportHandle). Each importRows is one transaction, so that no
   * single write holds the caller for long; finishImport makes the conversation appear, whole, in
   * one transaction.
   * @throws ConversationExistsError
   */
  beginImport(conversation: NewConversation): Promise<ImportHandle>;
  /** Writes rows of a staged creation (one transaction). @throws DuplicateEventIdError (index within `rows`) */
  importRows(handle: ImportHandle, rows: readonly PreparedEvent[]): Promise<void>;
  /** Appends `events` and makes the conversation visible. @throws ConversationExistsError (the id was taken meanwhile) */
  finishImport(handle: ImportHandle, events: readonly EventToStore[]): Promise<ConversationRecord>;
  /** Removes up to about `maxRows` rows of a staged creation (one transaction); true once all are gone. */
  discardImport(handle: ImportHandle, maxRows: number): Promise<boolean>;
  /**
   * Appends a batch of rows (an event batch, `POST …/events/batch`) after the conversation's events,
   * in order, in ONE transaction: afterwards every row is visible, or (a rejection) none ever was.
   * Returns the seq of the first row and how many there were (none: the seq the next would get).
   * Its events are not returned: readAfter gives them to whoever needs them (live subscribers).
   * @throws DuplicateEventIdError (index within the batch), ConversationNotFoundError
   */
  appendBatch(conversationId: string, batch: RowBatch): Promise<AppendedBatch>;
  /**
   * appendBatch with the rows given as they are parsed (optional: a store whose write runs on
   * another thread or in another process, SQLite's import writer or the PostgreSQL server, so that
   * the write overlaps the parse of the batch's last lines). The
   * transaction begins now, in turn with the store's other writes; it commits at `end`, or rolls
   * back at `abort` or on a failure: atomic like appendBatch. The caller calls it only once the
   * request's whole body has arrived (no client holds the write lock), and must call end or abort.
   * Undefined when the store has no such path.
   */
  streamBatch?(conversationId: string): BatchStream | undefined;
  /** Appends events in one transaction and returns them as stored. @throws DuplicateEventIdError, ConversationNotFoundError */
  appendEvents(conversationId: string, events: readonly EventToStore[]): Promise<StoredEvent[]>;
  /** @throws ConversationNotFoundError */
  setStatus(conversationId: string, status: ConversationLifecycleStatus): Promise<ConversationRecord>;
  /** Stores a title and tags (replacing the stored ones) and moves updatedAt. @throws ConversationNotFoundError */
  updateConversation(conversationId: string, changes: ConversationChanges): Promise<ConversationRecord>;
  /**
   * Removes a conversation with its events, counters and everything keyed by it; false when there
   * was none. It is gone from every read at once (in one transaction) and every later write to it
   * fails with ConversationNotFoundError; a store may free a long conversation's rows in several
   * transactions after that, before it resolves. The id may be created again afterwards.
   */
  deleteConversation(conversationId: string): Promise<boolean>;
  /**
   * Up to `limit` conversations in (sort key, id) order, or its exact reverse, from `from`
   * (inclusive); conversations being imported are never listed. Cost proportional to the page
   * (an index range).
   */
  listConversations(query: ConversationListQuery): Promise<ConversationRecord[]>;
  /** How many conversations there are (imports in progress not counted). */
  countConversations(): Promise<number>;
  /** One page in the total order (ts, seq), or its exact reverse; cost proportional to the page. */
  search(conversationId: string, query: SearchQuery): Promise<SearchPage>;
  /**
   * {@link search} as the bytes of the events' JSON texts: the same page, in one buffer. A
   * body-filtered page may scan many messages: a store runs it where it cannot hold up the
   * caller's thread (the SQLite store: on a reader thread when it has one).
   */
  searchJson(conversationId: string, query: SearchQuery): Promise<JsonPage>;
  /**
   * How many events match. Its cost grows with the matches (a body filter, a time range over a
   * long conversation): a store runs it where it cannot hold up the caller's thread.
   */
  count(conversationId: string, filters: SearchFilters): Promise<number>;
  /** The stored position of an event id in a conversation (for cursors and resume). */
  positionOf(conversationId: string, eventId: string): Promise<Position | undefined>;
  /**
   * Up to `limit` events in append order whose seq is greater than `afterSeq` (0 for all): the
   * order in which the live channel delivers and resumes. Cost proportional to the page.
   */
  readAfter(conversationId: string, afterSeq: number, limit: number): Promise<StoredEvent[]>;
  /** A small key-value space for account-scoped documents (settings, provider tokens). */
  getDocument(key: string): Promise<string | undefined>;
  putDocument(key: string, value: string): Promise<void>;
  /** True when the store answers (for /health); never rejects. */
  ping(): Promise<boolean>;
  /** Releases the store's resources; calls after it fail. */
  close(): Promise<void>;
}
