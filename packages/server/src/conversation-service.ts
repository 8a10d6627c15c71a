/**
 * The reference server's conversation service: the core's ({@link ConversationCore},
 * core/conversations.ts: create, record, messages, status, state) with what needs Node: creating a
 * conversation from a large body on the import threads (parsed and validated off the request
 * thread, written in measured chunks), and the AJV check of recorded state values.
 */
import { setImmediate as nextTask } from "node:timers/promises";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import type { ConversationCreateRequest, ValidationError } from "@acs-toolkit/schema";
import { ConversationCore, initialMessage } from "./core/conversations.js";
import type { EventBus } from "./core/bus.js";
import type { ConversationRuntime } from "./core/runtime.js";
import type { ConversationStates } from "./core/state.js";
import { HttpError } from "./core/errors.js";
import { batchTooLarge, duplicateIdProblem } from "./core/event-batch.js";
import { RequestValidationError } from "./validation/request-validators.js";
import { RecordedStates } from "./recorded-states.js";
import { ConversationExistsError, DuplicateEventIdError, type ConversationRecord, type EventStore, type ImportHandle } from "./store/types.js";
import type { PreparedEvent, RowBatch } from "./store/prepare.js";
import type { AppendedBatch, BatchStream } from "./store/types.js";
import { WorkerJobError, type WorkerPool } from "./threads/pool.js";


/** Events read back per page to publish a batch to live subscribers. */
const PUBLISH_PAGE = 500;

/** Rows removed per step when a staged import is discarded (each step one transaction). */
const DISCARD_ROWS = 2000;
/**
 * What one write of an import may take, ms: on the request thread (a store without an import
 * writer; the budget is 50 ms a request), or what other writes to the store wait behind it.
 */
const WRITE_TARGET_MS = 8;

/**
 * Rows per write at most, whatever the measured time allows: handing a write to the import
 * writer thread serializes its rows on the request thread (2,000 rows took 25 ms there).
 */
const MAX_WRITE_ROWS = 500;

/**
 * Writes rows as they come, in transactions sized to take about WRITE_TARGET_MS each (measured,
 * so that a slow disk or a busy machine means smaller ones), yielding to other requests between
 * them.
 */
class ChunkWriter {
  private readonly queue: PreparedEvent[][] = [];
  private size = 200;
  private running: Promise<void> | undefined;
  private failure: unknown;
  private stopped = false;

  /**
   * @param write writes rows in one transaction
   * @param written called as each array given to `add` has been written whole
   */
  constructor(
    private readonly write: (rows: PreparedEvent[]) => Promise<void>,
    private readonly written: () => void = () => {},
  ) {}

  add(rows: PreparedEvent[]): void {
    if (this.failure !== undefined) throw this.failure;
    this.queue.push(rows);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  /** Resolves once every row added is written. @throws what a write threw */
  async finished(): Promise<void> {
    while (this.running) await this.running;
    if (this.failure !== undefined) throw this.failure;
  }

  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
  }

  private async drain(): Promise<void> {
    try {
      for (let rows = this.queue.shift(); rows && !this.stopped; rows = this.queue.shift()) {
        for (let from = 0; from < rows.length && !this.stopped; ) {
          const part = rows.slice(from, from + this.size);
          const started = performance.now();
          await this.write(part);
          const ms = performance.now() - started;
          from += part.length;
          this.size = Math.max(20, Math.min(MAX_WRITE_ROWS, Math.round((part.length * WRITE_TARGET_MS) / Math.max(ms, 0.5))));
          await nextTask();
        }
        if (!this.stopped) this.written();
      }
    } catch (error) {
      this.failure = error;
      this.stop();
    }
  }
}

/**
 * The conversation service of the reference server: {@link ConversationCore} with
 * {@link ConversationService.createFromJson} (a creation body parsed on the import threads) and
 * recorded state values checked by AJV ({@link RecordedStates}).
 */
/**
 * Posts a request body to the import thread's `port` as it arrives, then waits for its `job`; a
 * body that fails mid-way (the client went away) ends the job first, then rethrows.
 */
async function streamBody(job: Promise<unknown>, body: AsyncIterable<Uint8Array>, port: MessagePort): Promise<void> {
  job.catch(() => {}); // awaited below, after the body is sent
  try {
    for await (const chunk of body) port.postMessage(chunk);
    port.postMessage({ end: true });
  } catch (error) {
    port.postMessage({ end: true, aborted: true });
    await job.catch(() => {});
    throw error;
  }
  await job;
}

export class ConversationService extends ConversationCore {
  /**
   * @param imports the import threads (workers/import-worker.ts) that createFromJson parses on
   */
  constructor(
    store: EventStore,
    bus: EventBus,
    runtime: ConversationRuntime,
    private readonly imports?: WorkerPool,
  ) {
    super(store, bus, runtime);
  }

  protected override createStates(): ConversationStates {
    return new RecordedStates(this.store);
  }

  /**
   * Creates a conversation from a `POST /api/conversations` body (UTF-8 JSON bytes) without holding
   * the calling thread: parsing and validation run on an import thread, and the events are written
   * in chunks of about 15 ms each into a staged conversation that appears whole at the end (or not
   * at all: a failure, or a crash, removes it). Answers as `create` does.
   * @throws RequestValidationError (422), HttpError 409
   */
  async createFromJson(body: AsyncIterable<Uint8Array>): Promise<ConversationRecord> {
    if (!this.imports) throw new Error("createFromJson needs the import threads (ConversationService's `imports`)");
    let request: ConversationCreateRequest | undefined;
    let handle: ImportHandle | undefined;
    let begun: Promise<ImportHandle> | undefined;
    // The body goes to the import thread as it arrives, chunk by chunk: even gathering tens of MB
    // into one buffer (a copy, page faults) would hold this thread too long. The same port tells it
    // each chunk of rows written, so that it never parses far ahead of the writes (import-worker.ts).
    const { port1: bodyPort, port2 } = new MessageChannel();
    const writer = new ChunkWriter(
      async (rows) => this.importRows((handle ??= await begun!), rows),
      () => bodyPort.postMessage({ written: 1 }),
    );
    try {
      const parsed = this.imports.run(
        { body: port2 },
        (message) => {
          if (message.request) {
            request = message.request as ConversationCreateRequest;
            // Rows queue behind it (ChunkWriter awaits it); its failure is the writer's failure.
            begun = this.store.beginImport(this.newConversation(request));
            begun.then((h) => (handle = h), () => {});
          }
          if (message.rows) writer.add(message.rows as PreparedEvent[]);
        },
        [port2],
      );
      await streamBody(parsed, body, bodyPort);
      await writer.finished();
      handle ??= await begun!; // a replay without events
      const taken = this.takenInitialMessage(request!);
      const initial = request!.initial_user_msg && !taken ? [initialMessage(request!.initial_user_msg, request!.image_urls)] : [];
      return this.started(await this.store.finishImport(handle, initial), taken);
    } catch (error) {
      writer.stop();
      await writer.finished().catch(() => {}); // no write of rows left in flight while discarding
      handle ??= await begun?.catch(() => undefined);
      if (handle) void this.discard(handle);
      if (error instanceof WorkerJobError && error.name === "RequestValidationError") throw new RequestValidationError(error.detail as ValidationError[]);
      if (error instanceof ConversationExistsError) throw new HttpError(409, error.message);
      throw error;
    } finally {
      bodyPort.close(); // the import thread stops waiting for written rows, if it still was
    }
  }

  /**
   * Appends an event batch (`POST …/events/batch`, JSONL bytes as they arrive) to a conversation,
   * all or nothing: the body streams to the import thread, which parses and validates each line
   * (core/event-batch.ts) and hands back the rows, encoded, a chunk at a time; the store writes
   * them in one transaction, in turn with the conversation's other writes; then its live
   * subscribers in this process get them, read back from the store in order.
   *
   * Parse and write overlap: once the whole body has arrived (so that no client, however slow,
   * holds the store's write lock) and the import thread has handed over rows (so that it is at work
   * on this batch and will finish without waiting on any write, whatever else it was doing before),
   * the transaction begins (store.streamBatch) and takes the chunks parsed so far, then each next
   * one, while the import thread parses the rest. A bad line anywhere rolls it back: the same 422.
   * @throws RequestValidationError (422, loc ["body", line, …]), HttpError 413, ConversationNotFoundError
   */
  override async appendBatch(conversationId: string, body: AsyncIterable<Uint8Array>): Promise<AppendedBatch> {
    if (!this.imports) return super.appendBatch(conversationId, body); // parsed in this thread
    const { port1: bodyPort, port2 } = new MessageChannel();
    /** Chunks of rows handed over before the write took them. */
    const early: Uint8Array[] = [];
    let stream: BatchStream | undefined;
    let parsed: { batch: RowBatch; lines: Int32Array } | undefined;
    let whole = false;
    let writing: Promise<AppendedBatch> | undefined;
    const job = this.imports.run(
      { op: "batch", body: port2 },
      (message) => {
        if (message.chunk) {
          if (stream) stream.add(message.chunk as Uint8Array);
          else early.push(message.chunk as Uint8Array);
          if (whole) writing ??= this.serially(conversationId, write);
        }
        if (message.batch) parsed = { batch: message.batch as RowBatch, lines: message.lines as Int32Array };
      },
      [port2],
    );
    job.catch(() => {}); // awaited below
    const write = async (): Promise<AppendedBatch> => {
      stream = this.store.streamBatch?.(conversationId);
      if (stream) for (const chunk of early.splice(0)) stream.add(chunk);
      try {
        await job;
      } catch (error) {
        await stream?.abort();
        throw error;
      }
      if (!parsed) {
        await stream?.abort();
        throw new Error("the import thread answered an event batch without its rows");
      }
      const { batch, lines } = parsed;
      let appended: AppendedBatch;
      try {
        if (stream) {
          for (const chunk of batch.chunks) stream.add(chunk);
          appended = await stream.end(batch.count);
        } else {
          appended = await this.store.appendBatch(conversationId, { count: batch.count, chunks: [...early, ...batch.chunks] });
        }
      } catch (error) {
        if (error instanceof DuplicateEventIdError) throw duplicateIdProblem(error, lines);
        throw error;
      }
      await this.publishStored(conversationId, appended);
      return appended;
    };
    try {
      try {
        for await (const chunk of body) bodyPort.postMessage(chunk);
        bodyPort.postMessage({ end: true });
      } catch (error) {
        bodyPort.postMessage({ end: true, aborted: true }); // nothing was written: the write waits for the whole body
        await job.catch(() => {});
        throw error;
      }
      whole = true;
      if (early.length > 0) writing ??= this.serially(conversationId, write);
      try {
        await job;
      } catch (error) {
        await writing?.catch(() => {}); // rolled back before the answer
        if (error instanceof WorkerJobError && error.name === "RequestValidationError") throw new RequestValidationError(error.detail as ValidationError[]);
        if (error instanceof WorkerJobError && error.name === "BatchTooLargeError") throw batchTooLarge(error);
        throw error;
      }
    } finally {
      bodyPort.close();
    }
    return (writing ??= this.serially(conversationId, write));
  }

  /** A batch's events to this process's subscribers of the conversation, read back in pages, in order. */
  private async publishStored(conversationId: string, { firstSeq, count }: AppendedBatch): Promise<void> {
    const last = firstSeq + count - 1;
    for (let after = firstSeq - 1; after < last && this.bus.hasSubscribers(conversationId); ) {
      const page = await this.store.readAfter(conversationId, after, Math.min(PUBLISH_PAGE, last - after));
      if (page.length === 0) break;
      this.bus.publish(conversationId, page);
      after = page[page.length - 1]!.seq;
    }
  }

  private async importRows(handle: ImportHandle, rows: PreparedEvent[]): Promise<void> {
    const offset = handle.written;
    try {
      await this.store.importRows(handle, rows);
    } catch (error) {
      if (error instanceof DuplicateEventIdError) {
        throw new RequestValidationError([{ loc: ["body", "replay_json", offset + error.index, "id"], msg: `event id ${error.eventId} appears twice in the trajectory`, type: "value_error" }]);
      }
      throw error;
    }
  }

  /** Removes a staged import a step at a time, yielding between steps. */
  private async discard(handle: ImportHandle): Promise<void> {
    try {
      while (!(await this.store.discardImport(handle, DISCARD_ROWS))) await nextTask();
    } catch {
      // Left for the next start (the store removes staged imports when it opens).
    }
  }

}
