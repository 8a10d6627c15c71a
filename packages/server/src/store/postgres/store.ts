/**
 * The EventStore contract (../types.ts) on PostgreSQL, through `pg` (node-postgres): the most used
 * client, maintained with its pool, protocol and type packages by one author; a connection that dies
 * (a database restart) fails its query with an error the pool recovers from, where the `postgres`
 * client throws an uncatchable TypeError from a setImmediate for a backend terminated mid-write,
 * which ends the process. Every value is a query parameter; only the schema name is quoted into SQL.
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
import type pg from "pg";
import type { ConversationLifecycleStatus } from "@acs-toolkit/schema";
import { checkedPaging } from "../paging-check.js";
import { prepareEvent, type PreparedEvent, type RowBatch } from "../prepare.js";
import { decodeRows } from "../row-batch.js";
import {
  type AppendedBatch,
  type BatchStream,
  ConversationExistsError,
  ConversationNotFoundError,
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
import { ANALYZE_AFTER_ROWS, AnalyzeSchedule } from "./analyze-schedule.js";
import { APPEND_SQL, APPEND_STAMPED_SQL, INSERT_ROWS_SQL, ONE_STATEMENT_ROWS, RECORD_CONVERSATION_SQL, RECORD_COUNTS_SQL } from "./append-sql.js";
import { BatchCopy } from "./batch-copy.js";
import { packRows, tallyOf, type RowTally } from "./batch-rows.js";
import { BatchAbortedError, Inbox } from "./batch-stream.js";
import { inTransaction, isClient, unavailable, type Queryable } from "./connection.js";
import { toRecord, type ConversationRow } from "./conversation-row.js";
import { conversationRow, countConversationRows, documentValue, found, hideConversationRow, listConversationRows, putDocumentValue, setStatusRow, updateConversationRow, type RowQuery } from "./catalog.js";
import { checkBatchIds, idsOf, takenIds } from "./event-ids.js";
import { discardStagedRows, lockStaged, publishStaged, stageConversation, staleImports, type StagedImport } from "./import-staging.js";
import { restamped, stampsOf, type Stamp } from "./restamp.js";
import { BODY_SCAN_BUDGET, countEvents, eventPosition, eventsAfter, searchPage } from "./search.js";

/**
 * Rows from which an append writes its events with COPY (binary) instead of INSERT … SELECT FROM
 * unnest(…): a replay's batches. COPY inserts a heap page's rows with one WAL record (heap_multi_insert)
 * and skips the per-row executor of the INSERT; see BENCHMARKS.md for the figures.
 */
const COPY_MIN_ROWS = 1_000;
/** Rows per INSERT … SELECT FROM unnest(…): bounds one statement's parameter size. */
const INSERT_CHUNK = 5_000;
/** Rows a step of a delete removes (one transaction each). */
const DELETE_STEP_ROWS = 5_000;
/** Times appendEvents sends its one statement when another append came in between (see appendInOneStatement). */
const ONE_STATEMENT_ATTEMPTS = 3;

/** The channel appends notify on: `<schema>:<conversation id>:<first seq>:<last seq>` of the batch. */
export const NOTIFY_CHANNEL = "acs_events";

// The id condition's SQL, exported here too for the store's tests.
export { sameEvent } from "./event-ids.js";

/** The PostgreSQL EventStore (see the module comment); open it with openPostgresStore (open.ts). */
export class PostgresEventStore implements EventStore {
  readonly kind = "postgres";
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Per conversation, the tail of its writes from this instance: calls apply in the order made. */
  private readonly tails = new Map<string, Promise<unknown>>();
  /** This instance's own ANALYZEs (see ANALYZE_AFTER_ROWS). */
  private readonly analyze: AnalyzeSchedule;
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
    this.analyze = new AnalyzeSchedule(pool, firstAnalyzeAfterRows);
  }

  /** ANALYZEs started by this instance. */
  get analyzes(): number {
    return this.analyze.started;
  }
  /** Resolves once this instance's background ANALYZE, if any, has ended (benchmarks settle on it). */
  analyzed = (): Promise<void> => this.analyze.running ?? Promise.resolve();

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
  protected serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
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

  /** {@link query} for the catalog's functions (catalog.ts). */
  private readonly rowQuery: RowQuery = (text, values) => this.query(text, values);

  /** Runs `fn` in a transaction on one connection; after its commit, the ANALYZE its rows may have made due. @internal */
  protected transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, fn, () => this.analyze.startIfDue());
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

  /** appendEvents' transaction: (`fence`, fenced-store.ts,) lock the conversation's row, (restamp,) look up the batch's ids (under the lock), insert, notify. @internal */
  protected appendInTransaction(conversationId: string, events: readonly EventToStore[], prepared: PreparedEvent[], fence?: (tx: Queryable) => Promise<void>): Promise<StoredEvent[]> {
    const restamp = events.some((entry) => entry.stampedAtRecording);
    return this.transaction(async (tx) => {
      await fence?.(tx);
      // The row lock orders this append after any other instance's on the same conversation.
      const conv = (await tx.query<{ pk: number; next_seq: number }>("select pk, next_seq from conversations where id = $1 for update", [conversationId])).rows[0];
      if (!conv) throw new ConversationNotFoundError(conversationId);
      const rows = restamp ? await restamped(tx, conv.pk, events, prepared) : prepared;
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
          const lookup = takenIds(idCheckPool, conv.pk, idsOf(rows));
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
   * A live append (a few events) as one statement (APPEND_SQL), so one round trip and one commit:
   * lock the conversation's row, insert the rows after its next_seq, add to the counters, move
   * next_seq and notify; all or nothing. At ~0.5 ms a round trip, a transaction would spend more
   * in its nine round trips than in its commit.
   *
   * Events stamped at recording (`stamps`: per row, its JSON cut around the timestamp's value, or
   * null) are moved in the same statement (APPEND_STAMPED_SQL, restamped's rule).
   *
   * Event ids (no unique index, see event-ids.ts): the statement writes nothing when one of the
   * batch's ids is stored in the conversation ("taken": `conv` in the SQL is empty), or when another
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
    if (!stamps) values.push(tally.ordered, tally.first, tally.last);
    else
      values.push(
        stamps.map((s) => s?.pre ?? null),
        stamps.map((s) => s?.post ?? null),
      );
    // A named statement (two texts, one per variant): each connection of the pool parses and plans
    // it once, then binds. Planning is ~0.17 of a live append's ~0.3 ms of server time.
    const result = await this.pool.query<{ first: number; ok: boolean; fresh: boolean; moved_o: number[] | null; moved_ts: number[] | null; moved_json: string[] | null }>({
      name: stamps ? "acs-append-stamped" : "acs-append",
      text: stamps ? APPEND_STAMPED_SQL : APPEND_SQL,
      values,
    });
    const head = result.rows[0];
    if (head === undefined) throw new ConversationNotFoundError(conversationId);
    if (!head.ok) return head.fresh ? "taken" : "raced";
    const first = head.first;
    this.analyze.wrote(rows.length);
    this.analyze.startIfDue();
    const stored = rows.map((r, i): StoredEvent => ({ id: r.id, json: r.json, ts: r.ts, seq: first + i }));
    head.moved_o?.forEach((o, k) => {
      const row = stored[Number(o) - 1]!;
      row.ts = Number(head.moved_ts![k]);
      row.json = head.moved_json![k]!;
    });
    return stored;
  }

  /**
   * insertRows after takenIds, inside a transaction holding the conversation's row (FOR UPDATE, or a
   * staged import's). A replay's batch (a COPY) looks its ids up on the id-check pool while the COPY
   * runs, and the transaction fails (rolls back) when one is taken: on the same connection, before
   * the COPY, the lookup is 2.1-2.4 s of a 1M-event replay's ~21 s of store time. It sees what
   * takenIds on `tx` would: its statement starts after this transaction took the conversation's row,
   * which every write of the conversation takes first (any instance), so no other write of it
   * commits until this one does; its snapshot holds every event committed before, none of this
   * transaction's. Ids repeated within the batch are refused before the COPY.
   */
  private async insertChecked(tx: Queryable, conv: number, firstSeq: number, rows: readonly PreparedEvent[], now: string): Promise<StoredEvent[]> {
    const ids = idsOf(rows);
    if (!(rows.length >= this.copyMinRows && isClient(tx) && this.idCheckPool)) return this.insertRows(tx, conv, firstSeq, rows, await takenIds(tx, conv, ids), now);
    checkBatchIds(ids, []);
    const lookup = takenIds(this.idCheckPool, conv, ids);
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
        const values = [conv, firstSeq + from, chunk.map((r) => r.ts), chunk.map((r) => r.id), chunk.map((r) => r.kind), chunk.map((r) => r.source), texts.bodyLengths, texts.jsonLengths, texts.bytes, texts.offsets];
        await tx.query(INSERT_ROWS_SQL, values);
      }
    }
    await this.recordRows(tx, conv, tally, now);
    return rows.map((r, i) => ({ id: r.id, json: r.json, ts: r.ts, seq: firstSeq + i }));
  }

  /** After a batch's rows are written: what they add to the counters, and the conversation's next_seq, count and time order. */
  private async recordRows(tx: Queryable, conv: number, tally: RowTally, now: string): Promise<void> {
    this.analyze.wrote(tally.count);
    const c = tally.counters();
    await tx.query(RECORD_COUNTS_SQL, [conv, c.map((x) => x.kind), c.map((x) => x.source), c.map((x) => x.n)]);
    await tx.query(RECORD_CONVERSATION_SQL, [conv, tally.count, now, tally.ordered, tally.first, tally.last]);
  }

  getConversation(id: string): Promise<ConversationRecord | undefined> {
    return this.run(async () => {
      const row = await conversationRow(this.rowQuery, id);
      return row && toRecord(row);
    });
  }

  setStatus(conversationId: string, status: ConversationLifecycleStatus): Promise<ConversationRecord> {
    return this.serial(conversationId, async () => toRecord(found(await setStatusRow(this.rowQuery, conversationId, status), conversationId)));
  }

  updateConversation(conversationId: string, changes: ConversationChanges): Promise<ConversationRecord> {
    return this.serial(conversationId, async () => toRecord(found(await updateConversationRow(this.rowQuery, conversationId, changes), conversationId)));
  }

  /**
   * Hidden first (appends take the row by id under FOR UPDATE, so one in flight commits first and
   * its rows are removed with the rest), then its rows go DELETE_STEP_ROWS at a time. What a crash
   * leaves is removed as a stale import (removeStaleImports).
   */
  deleteConversation(conversationId: string): Promise<boolean> {
    return this.serial(conversationId, async () => {
      const pk = await hideConversationRow(this.rowQuery, conversationId);
      if (pk === undefined) return false;
      while (!(await this.discardStaged(pk, DELETE_STEP_ROWS)));
      return true;
    });
  }

  listConversations(query: ConversationListQuery): Promise<ConversationRecord[]> {
    return this.run(async () => (await listConversationRows(this.rowQuery, query)).map(toRecord));
  }

  countConversations(): Promise<number> {
    return this.run(() => countConversationRows(this.rowQuery));
  }

  // -- staged creation (import-staging.ts) ------------------------------------------------------

  beginImport(conversation: NewConversation): Promise<ImportHandle> {
    return this.run(() => stageConversation(this.pool, conversation));
  }

  importRows(handle: ImportHandle, rows: readonly PreparedEvent[]): Promise<void> {
    const staged = handle as StagedImport;
    return this.serial(`import:${staged.pk}`, async () => {
      await this.transaction(async (tx) => {
        const next = await lockStaged(tx, staged.pk);
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
        const next = await lockStaged(tx, staged.pk);
        if (next === undefined) throw new Error("the staged import is gone");
        const now = new Date().toISOString();
        await this.insertChecked(tx, staged.pk, next, rows, now);
        return publishStaged(tx, staged, now);
      });
    });
  }

  discardImport(handle: ImportHandle, maxRows: number): Promise<boolean> {
    const staged = handle as StagedImport;
    return this.serial(`import:${staged.pk}`, () => this.discardStaged(staged.pk, maxRows));
  }

  /** Removes up to ~maxRows rows of a staged conversation, newest first; true when it is gone. */
  private discardStaged(pk: number, maxRows: number): Promise<boolean> {
    return this.transaction((tx) => discardStagedRows(tx, pk, maxRows));
  }

  /** Removes staged imports untouched for an hour (their process died mid-import); at open. */
  async removeStaleImports(): Promise<number> {
    const stale = await staleImports(this.pool);
    for (const pk of stale) while (!(await this.discardStaged(pk, 50_000)));
    return stale.length;
  }

  // -- reads (search.ts) -------------------------------------------------------------------------

  search(conversationId: string, query: SearchQuery): Promise<SearchPage> {
    return this.run(async () => {
      checkedPaging(query);
      return searchPage(this.pool, conversationId, query, this.bodyScanBudget);
    });
  }

  searchJson(conversationId: string, query: SearchQuery): Promise<JsonPage> {
    return this.run(async () => {
      checkedPaging(query);
      const { items, hasMore, resumeAfter } = await searchPage(this.pool, conversationId, query, this.bodyScanBudget);
      const last = resumeAfter ?? items[items.length - 1];
      return { json: Buffer.from(items.map((e) => e.json).join(","), "utf8"), count: items.length, last: last && { ts: last.ts, seq: last.seq }, hasMore };
    });
  }

  count(conversationId: string, filters: SearchFilters): Promise<number> {
    return this.run(() => countEvents(this.pool, conversationId, filters));
  }

  positionOf(conversationId: string, eventId: string): Promise<Position | undefined> {
    return this.run(() => eventPosition(this.pool, conversationId, eventId));
  }

  readAfter(conversationId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return this.run(() => eventsAfter(this.pool, conversationId, afterSeq, limit));
  }

  getDocument(key: string): Promise<string | undefined> {
    return this.run(() => documentValue(this.rowQuery, key));
  }

  putDocument(key: string, value: string): Promise<void> {
    return this.run(() => putDocumentValue(this.rowQuery, key, value));
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
      this.analyze.stop();
      await Promise.all([...this.tails.values()]);
      await this.analyze.running; // the ANALYZE under way, if any
      await Promise.all([this.pool.end(), this.idCheckPool?.end()]);
    })();
    return this.closing;
  }
}
