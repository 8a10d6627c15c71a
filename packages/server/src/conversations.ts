/**
 * Creating conversations and recording their events: the one path by which events enter the store
 * (replay, the initial user message, a runtime), so each is validated, stored transactionally and
 * pushed to subscribers.
 */
import { randomUUID } from "node:crypto";
import { setImmediate as nextTask } from "node:timers/promises";
import type { ConversationCreateRequest, ConversationFullState, ConversationLifecycleStatus, ConversationStateUpdateEvent, Event, MessageEvent, UserMessage, ValidationError } from "@acs-toolkit/schema";
import { trajectoryEntries, validateEvent, type TrajectoryEntry } from "@acs-toolkit/validator";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import type { EventBus } from "./bus.js";
import { HttpError } from "./http/errors.js";
import { RequestValidationError, toValidationError } from "./http/validation.js";
import { findTooDeep, tooDeepError } from "./json/depth.js";
import { RecordedStates } from "./agent-state.js";
import type { ConversationRuntime, RuntimeContext } from "./runtime.js";
import { recordedTimestamp } from "./store/time.js";
import {
  requireConversation,
  ConversationExistsError,
  DuplicateEventIdError,
  type ConversationRecord,
  type EventStore,
  type EventToStore,
  type ImportHandle,
  type NewConversation,
  type StoredEvent,
} from "./store/types.js";
import type { PreparedEvent, RowBatch } from "./store/prepare.js";
import type { AppendedBatch } from "./store/types.js";
import { MessageChannel } from "node:worker_threads";
import { WorkerJobError, type WorkerPool } from "./workers/pool.js";

const HEX_UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

/** A UUID given hyphenated or as 32 hex digits, as the canonical lower-case hyphenated form. */
export function canonicalConversationId(id: string): string | undefined {
  if (!HEX_UUID.test(id)) return undefined;
  const hex = id.replace(/-/g, "").toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Problems of `replay_json` reported at most: enough to act on; a broken 1M-event recording must not build 1M errors. */
export const MAX_REPLAY_ERRORS = 50;

/**
 * One entry of `replay_json` (trajectoryEntries), the `index`-th: the event to store, or its
 * problems at ["body", "replay_json", index, ...pointer].
 */
export function checkReplayEntry(entry: TrajectoryEntry, index: number): EventToStore | ValidationError[] {
  const at = ["replay_json", index];
  if (entry.parseError !== undefined) {
    const where = entry.line !== undefined ? `line ${entry.line}` : "the text";
    return [{ loc: ["body", ...at], msg: `${where} is not valid JSON: ${entry.parseError}`, type: "json_invalid" }];
  }
  const deep = findTooDeep(entry.value);
  if (deep) return [tooDeepError(["body", ...at], deep)];
  const result = validateEvent(entry.value);
  if (result.ok) return { event: entry.value as Event, json: JSON.stringify(entry.value) };
  return result.errors.map((issue) => toValidationError("body", at, issue));
}

/**
 * Reads `replay_json` (a JSON array of events, JSONL or an EventPage) and validates every event.
 * @throws RequestValidationError with loc ["body", "replay_json", <event index>, ...pointer]
 */
export function parseReplay(text: string): EventToStore[] {
  const events: EventToStore[] = [];
  const errors: ValidationError[] = [];
  let index = 0;
  for (const entry of trajectoryEntries(text)) {
    const checked = checkReplayEntry(entry, index);
    if (Array.isArray(checked)) errors.push(...checked);
    else events.push(checked);
    if (errors.length >= MAX_REPLAY_ERRORS) break;
    index++;
  }
  if (errors.length) throw new RequestValidationError(errors);
  return events;
}

/** A user MessageEvent carrying `message`, with a fresh id and the current time. */
function userMessageEvent(message: MessageEvent["llm_message"]): MessageEvent {
  return {
    id: randomUUID(),
    timestamp: recordedTimestamp(),
    source: "user",
    llm_message: message,
    llm_response_id: null,
    activated_skills: [],
    extended_content: [],
    sender: null,
    critic_result: null,
    kind: "MessageEvent",
  };
}

/** The properties a recorded message keeps: those of the spec's Message, but its legacy ones. */
const MESSAGE_PROPERTIES = Object.entries(
  (openapiDocument.components as { schemas: Record<string, { properties: Record<string, { deprecated?: boolean }> }> }).schemas.Message!.properties,
).flatMap(([name, property]) => (property.deprecated ? [] : [name]));

function messageProperties(message: UserMessage): MessageEvent["llm_message"] {
  const sent = message as Record<string, unknown>;
  return Object.fromEntries(MESSAGE_PROPERTIES.filter((name) => sent[name] !== undefined).map((name) => [name, sent[name]])) as MessageEvent["llm_message"];
}

/** The initial user message of a creation request, as a message (for a runtime that records it). */
function initialUserMessage(request: ConversationCreateRequest): UserMessage | undefined {
  if (!request.initial_user_msg) return undefined;
  return initialMessageEvent(request.initial_user_msg, request.image_urls).llm_message as UserMessage;
}

function initialMessage(text: string, imageUrls: string[] | null | undefined): EventToStore {
  const event = initialMessageEvent(text, imageUrls);
  return { event, json: JSON.stringify(event) };
}

function initialMessageEvent(text: string, imageUrls: string[] | null | undefined): MessageEvent {
  const event = userMessageEvent({
    role: "user",
    content: [
      { cache_prompt: false, type: "text", text },
      ...(imageUrls?.length ? [{ cache_prompt: false, type: "image" as const, image_urls: imageUrls }] : []),
    ],
    thinking_blocks: [],
  });
  return event;
}

/** Events to store, each validated. @throws RequestValidationError (loc: body, index, …) */
function validated(events: readonly Event[], stampedAtRecording = false): EventToStore[] {
  return events.map((event, index) => {
    const result = validateEvent(event);
    if (!result.ok) throw new RequestValidationError(result.errors.map((issue) => toValidationError("body", [index], issue)));
    return stampedAtRecording ? { event, json: JSON.stringify(event), stampedAtRecording } : { event, json: JSON.stringify(event) };
  });
}

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
 * Client messages (`POST …/events`, live-channel frames) one conversation may have waiting to be
 * recorded: past it a message is refused (TooManyMessagesError: 429, or a `TooManyRequests` error
 * frame) instead of joining a queue that producers faster than the store would grow without bound.
 */
export const MAX_WAITING_MESSAGES = 256;

/** A client message refused for backpressure (see MAX_WAITING_MESSAGES): 429, nothing was stored. */
export class TooManyMessagesError extends HttpError {
  constructor(readonly limit: number) {
    super(429, `Too Many Requests: ${limit} messages to this conversation are waiting to be recorded; send this one again later`, { "Retry-After": "1" });
  }
}

export class ConversationService {
  /**
   * The write in progress per conversation (record, setStatus): the next one starts when it has
   * settled, so that events are stored and published in the order they were recorded, and a status
   * change reads and writes with nothing in between, whatever the store's latency.
   */
  private readonly writes = new Map<string, Promise<unknown>>();
  /** Client messages per conversation not yet recorded (deliverMessage), bounded by MAX_WAITING_MESSAGES. */
  private readonly waitingMessages = new Map<string, number>();

  /**
   * @param imports the import threads (workers/import-worker.ts) that createFromJson parses on
   */
  constructor(
    private readonly store: EventStore,
    private readonly bus: EventBus,
    private readonly runtime: ConversationRuntime,
    private readonly imports?: WorkerPool,
  ) {}

  /** @throws RequestValidationError (422), HttpError 409 */
  async create(request: ConversationCreateRequest): Promise<ConversationRecord> {
    const conversation = this.newConversation(request);
    const events = request.replay_json ? parseReplay(request.replay_json) : [];
    const initial = this.runtime.takesInitialMessage?.(request) ? initialUserMessage(request) : undefined;
    if (request.initial_user_msg && !initial) events.push(initialMessage(request.initial_user_msg, request.image_urls));
    let record: ConversationRecord;
    try {
      record = await this.store.createConversation(conversation, events);
    } catch (error) {
      if (error instanceof ConversationExistsError) throw new HttpError(409, error.message);
      if (error instanceof DuplicateEventIdError) {
        const loc = error.index < events.length - (request.initial_user_msg && !initial ? 1 : 0) ? ["body", "replay_json", error.index, "id"] : ["body", "initial_user_msg"];
        throw new RequestValidationError([{ loc, msg: `event id ${error.eventId} appears twice in the trajectory`, type: "value_error" }]);
      }
      throw error;
    }
    return this.started(record, initial);
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
      parsed.catch(() => {}); // awaited below, after the body is sent
      try {
        for await (const chunk of body) bodyPort.postMessage(chunk);
        bodyPort.postMessage({ end: true });
      } catch (error) {
        bodyPort.postMessage({ end: true, aborted: true });
        await parsed.catch(() => {});
        throw error;
      }
      await parsed;
      await writer.finished();
      handle ??= await begun!; // a replay without events
      const taken = this.runtime.takesInitialMessage?.(request!) ? initialUserMessage(request!) : undefined;
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
   * (workers/event-batch.ts) and hands back the rows, encoded; the store writes them in one
   * transaction (appendBatch), in turn with the conversation's other writes; then its live
   * subscribers in this process get them, read back from the store in order.
   * @throws RequestValidationError (422, loc ["body", line, …]), HttpError 413, ConversationNotFoundError
   */
  async appendBatch(conversationId: string, body: AsyncIterable<Uint8Array>): Promise<AppendedBatch> {
    if (!this.imports) throw new Error("appendBatch needs the import threads (ConversationService's `imports`)");
    const { port1: bodyPort, port2 } = new MessageChannel();
    let parsed: { batch: RowBatch; lines: Int32Array } | undefined;
    try {
      const job = this.imports.run(
        { op: "batch", body: port2 },
        (message) => {
          if (message.batch) parsed = { batch: message.batch as RowBatch, lines: message.lines as Int32Array };
        },
        [port2],
      );
      job.catch(() => {}); // awaited below, after the body is sent
      try {
        for await (const chunk of body) bodyPort.postMessage(chunk);
        bodyPort.postMessage({ end: true });
      } catch (error) {
        bodyPort.postMessage({ end: true, aborted: true });
        await job.catch(() => {});
        throw error;
      }
      await job;
    } catch (error) {
      if (error instanceof WorkerJobError && error.name === "RequestValidationError") throw new RequestValidationError(error.detail as ValidationError[]);
      if (error instanceof WorkerJobError && error.name === "BatchTooLargeError") throw new HttpError(413, error.message);
      throw error;
    } finally {
      bodyPort.close();
    }
    if (!parsed) throw new Error("the import thread answered an event batch without its rows");
    const { batch, lines } = parsed;
    return this.serially(conversationId, async () => {
      let appended: AppendedBatch;
      try {
        appended = await this.store.appendBatch(conversationId, batch);
      } catch (error) {
        if (error instanceof DuplicateEventIdError) {
          const line = lines[error.index] ?? error.index + 1;
          throw new RequestValidationError([{ loc: ["body", line, "id"], msg: `event id ${error.eventId} is already in this conversation (line ${line}); nothing of this batch was stored`, type: "value_error" }]);
        }
        throw error;
      }
      await this.publishStored(conversationId, appended);
      return appended;
    });
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

  /** The conversation a request creates. @throws RequestValidationError for a conversation_id that is not a UUID */
  private newConversation(request: ConversationCreateRequest): NewConversation {
    let id: string = randomUUID();
    if (request.conversation_id !== undefined && request.conversation_id !== null) {
      const canonical = canonicalConversationId(request.conversation_id);
      if (!canonical) {
        throw new RequestValidationError([{ loc: ["body", "conversation_id"], msg: "must be a UUID", type: "uuid_parsing" }]);
      }
      id = canonical;
    }
    return {
      id,
      status: this.runtime.initialStatusFor?.(request) ?? this.runtime.initialStatus,
      repository: request.repository ?? null,
      selectedBranch: request.selected_branch ?? null,
      gitProvider: request.git_provider ?? null,
    };
  }

  /** Hands a new conversation to the runtime (with its initial message when the runtime records it). */
  private started(record: ConversationRecord, initial?: UserMessage): ConversationRecord {
    // Nobody can be subscribed to a conversation that did not exist: nothing to publish yet.
    this.runtime.start(record, this.contextFor(record.id), initial);
    return record;
  }

  /**
   * Records events of a conversation: validated, stored in one transaction, pushed to subscribers.
   * Calls for one conversation are stored and published in the order they were made.
   */
  record(conversationId: string, events: readonly Event[], options: { stampedAtRecording?: boolean } = {}): Promise<StoredEvent[]> {
    let toStore: EventToStore[];
    try {
      toStore = validated(events, options.stampedAtRecording);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.serially(conversationId, () => this.append(conversationId, toStore));
  }

  private async append(conversationId: string, toStore: readonly EventToStore[]): Promise<StoredEvent[]> {
    const stored = await this.store.appendEvents(conversationId, toStore);
    this.bus.publish(conversationId, stored);
    return stored;
  }

  /** Runs `write` once the conversation's write in progress (if any) has settled. */
  private serially<T>(conversationId: string, write: () => Promise<T>): Promise<T> {
    const previous = this.writes.get(conversationId);
    const next = previous ? previous.then(write, write) : write();
    const settled = next.then(() => {}, () => {});
    this.writes.set(conversationId, settled);
    // The map holds only conversations with a write in progress.
    void settled.then(() => this.writes.get(conversationId) === settled && this.writes.delete(conversationId));
    return next;
  }

  /**
   * Records a user message (already validated as a SendMessageRequest or a UserMessage) as a user
   * MessageEvent holding the Message's own properties (`run` and unknown keys are dropped, as the
   * agent server drops them), pushes it to subscribers and hands it to the runtime, which runs the
   * agent on it when `options.run` is true (false by default, as the agent server's `run`).
   * @throws ConversationNotFoundError
   */
  async sendMessage(conversationId: string, message: UserMessage, options: { run: boolean } = { run: false }): Promise<MessageEvent> {
    let event = userMessageEvent(messageProperties(message));
    const [stored] = await this.record(conversationId, [event], { stampedAtRecording: true });
    // A store shared by several instances may have moved its timestamp (EventToStore.stampedAtRecording).
    if (stored && stored.json !== JSON.stringify(event)) event = JSON.parse(stored.json) as MessageEvent;
    if (this.runtime.onUserMessage) {
      this.runtime.onUserMessage(await requireConversation(this.store, conversationId), event, this.contextFor(conversationId), options);
    }
    return event;
  }

  /**
   * A user message from a client (`POST …/events`, a live-channel frame): {@link sendMessage}, unless
   * the runtime records messages itself (the agent: a message sent during a step is recorded when
   * the step ends, as the agent server's send_message waits for the step).
   * @throws ConversationNotFoundError
   */
  async deliverMessage(conversationId: string, message: UserMessage, options: { run: boolean }): Promise<MessageEvent> {
    const waiting = this.waitingMessages.get(conversationId) ?? 0;
    if (waiting >= MAX_WAITING_MESSAGES) throw new TooManyMessagesError(MAX_WAITING_MESSAGES);
    this.waitingMessages.set(conversationId, waiting + 1);
    try {
      if (!this.runtime.sendMessage) return await this.sendMessage(conversationId, message, options);
      const kept = { ...messageProperties(message), role: "user" } as UserMessage;
      return (await this.runtime.sendMessage(conversationId, kept, this.contextFor(conversationId), options)) ?? (await this.sendMessage(conversationId, kept, options));
    } finally {
      const left = this.waitingMessages.get(conversationId)! - 1;
      if (left === 0) this.waitingMessages.delete(conversationId);
      else this.waitingMessages.set(conversationId, left);
    }
  }

  /**
   * Sets a conversation's status and records the change as a ConversationStateUpdateEvent (nothing
   * when it has that status already). @throws ConversationNotFoundError
   */
  setStatus(conversationId: string, status: ConversationLifecycleStatus): Promise<ConversationRecord> {
    return this.serially(conversationId, async () => {
      const before = await requireConversation(this.store, conversationId);
      if (before.status === status) return before;
      const record = await this.store.setStatus(conversationId, status);
      await this.append(conversationId, validated([
      {
        id: randomUUID(),
        timestamp: recordedTimestamp(),
        source: "environment",
        key: "conversation_status",
        value: status,
        kind: "ConversationStateUpdateEvent",
      },
      ], true));
      return record;
    });
  }

  /** The agent server's state of each conversation (execution status, stats, …), derived from what it recorded. */
  get states(): RecordedStates {
    return (this.recordedStates ??= new RecordedStates(this.store));
  }
  private recordedStates?: RecordedStates;

  /** The `full_state` frame of a conversation (the live channel's first frame; not stored). */
  async fullState(conversation: ConversationRecord): Promise<ConversationStateUpdateEvent> {
    const last = conversation.eventCount > 0 ? (await this.store.readAfter(conversation.id, conversation.eventCount - 1, 1))[0] : undefined;
    const value: ConversationFullState = {
      conversation_id: conversation.id,
      conversation_status: conversation.status,
      created_at: conversation.createdAt,
      updated_at: conversation.updatedAt,
      event_count: conversation.eventCount,
      last_event_id: last?.id ?? null,
      ...(await this.states.of(conversation)),
    };
    return { id: randomUUID(), timestamp: recordedTimestamp(), source: "environment", key: "full_state", value, kind: "ConversationStateUpdateEvent" };
  }

  /**
   * Pushes the conversation's `full_state` to its live subscribers in this process, not stored,
   * after the writes in progress (as the agent server after run, pause and interrupt).
   */
  publishState(conversationId: string): Promise<void> {
    return this.serially(conversationId, async () => {
      const record = await this.store.getConversation(conversationId);
      if (record && this.bus.hasSubscribers(conversationId)) this.bus.publishTransient(conversationId, await this.fullState(record));
    });
  }

  /** What a runtime records through for one conversation. */
  contextFor(conversationId: string): RuntimeContext {
    return {
      record: async (events) => void (await this.record(conversationId, events)),
      setStatus: async (status) => void (await this.setStatus(conversationId, status)),
      publishState: () => this.publishState(conversationId),
    };
  }
}
