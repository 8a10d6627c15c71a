/**
 * The conversation service: creating conversations and recording their events, the one path by
 * which events enter the store (a replay, the initial user message, a runtime, a client's message),
 * so each is validated, stored in order and pushed to the bus. Transport-free: the reference
 * server's HTTP routes and live channel and the mock's browser handlers all drive this class.
 */
import type { AgentConversationState, ConversationCreateRequest, ConversationFullState, ConversationInfo, ConversationLifecycleStatus, ConversationStateUpdateEvent, Event, MessageEvent, UserMessage, ValidationError } from "@acs-toolkit/schema";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { pointerTokens, trajectoryEntries, validateEvent, type TrajectoryEntry } from "@acs-toolkit/validator";
import { findTooDeep, tooDeepError } from "../json/depth.js";
import { recordedTimestamp } from "../store/time.js";
import { requireConversation, ConversationExistsError, ConversationNotFoundError, DuplicateEventIdError, type AppendedBatch, type ConversationRecord, type EventStore, type EventToStore, type NewConversation, type StoredEvent } from "../store/types.js";
import type { PreparedEvent } from "../store/prepare.js";
import type { EventBus } from "./bus.js";
import { batchTooLarge, BatchTooLargeError, duplicateIdProblem, EventBatchParser } from "./event-batch.js";
import { HttpError, RequestValidationError, toValidationError } from "./errors.js";
import type { ConversationRuntime, RuntimeContext } from "./runtime.js";
import { ConversationStates, type StateConformance } from "./state.js";

const HEX_UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

/** A UUID given hyphenated or as 32 hex digits, as the canonical lower-case hyphenated form; undefined for anything else. */
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
    id: crypto.randomUUID(),
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

/**
 * Checks a user message a client sent (a `POST …/events` body, a live-channel frame) without a
 * compiled request validator: it must be an object with `role` "user", and the MessageEvent that
 * would record it must conform to the spec (the event validators of `@acs-toolkit/validator`, which
 * run in a browser). A problem's `loc` starts with `base` (`["body"]`, `["message"]`), an issue of
 * the event's `llm_message` at the same place in the message. The reference server checks the
 * message against SendMessageRequest with AJV instead.
 * @throws RequestValidationError
 */
export function checkUserMessage(message: unknown, base: Array<string | number> = ["body"]): asserts message is UserMessage {
  if (typeof message !== "object" || message === null || Array.isArray(message)) throw new RequestValidationError([{ loc: base, msg: "must be an object", type: "model_attributes_type" }]);
  const sent = message as Record<string, unknown>;
  if (sent.role !== "user") throw new RequestValidationError([{ loc: [...base, "role"], msg: `must be "user"`, type: "literal_error" }]);
  const result = validateEvent(userMessageEvent(messageProperties(message as UserMessage)));
  if (!result.ok) {
    throw new RequestValidationError(result.errors.map((issue) => ({ loc: [...base, ...pointerTokens(issue.pointer).slice(issue.pointer.startsWith("/llm_message") ? 1 : 0)], msg: issue.message, type: "value_error" })));
  }
}

/** The initial user message of a creation request, as a message (for a runtime that records it). */
function initialUserMessage(request: ConversationCreateRequest): UserMessage | undefined {
  if (!request.initial_user_msg) return undefined;
  return initialMessageEvent(request.initial_user_msg, request.image_urls).llm_message as UserMessage;
}

/** The initial user message of a creation request, to store with the conversation. */
export function initialMessage(text: string, imageUrls: string[] | null | undefined): EventToStore {
  const event = initialMessageEvent(text, imageUrls);
  return { event, json: JSON.stringify(event) };
}

function initialMessageEvent(text: string, imageUrls: string[] | null | undefined): MessageEvent {
  return userMessageEvent({
    role: "user",
    content: [
      { cache_prompt: false, type: "text", text },
      ...(imageUrls?.length ? [{ cache_prompt: false, type: "image" as const, image_urls: imageUrls }] : []),
    ],
    thinking_blocks: [],
  });
}

/** Events to store, each validated. @throws RequestValidationError (loc: body, index, …) */
function validated(events: readonly Event[], stampedAtRecording = false): EventToStore[] {
  return events.map((event, index) => {
    const result = validateEvent(event);
    if (!result.ok) throw new RequestValidationError(result.errors.map((issue) => toValidationError("body", [index], issue)));
    return stampedAtRecording ? { event, json: JSON.stringify(event), stampedAtRecording } : { event, json: JSON.stringify(event) };
  });
}

/** ConversationInfo (`GET /api/conversations/{id}`): the agent server's state, then the record's own fields. */
export function conversationInfo(record: ConversationRecord, state: AgentConversationState): ConversationInfo {
  return {
    ...state,
    conversation_id: record.id,
    status: record.status,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    event_count: record.eventCount,
    repository: record.repository,
    selected_branch: record.selectedBranch,
    git_provider: record.gitProvider,
    // What an update stored wins over what the conversation recorded.
    ...(record.title !== null && { title: record.title }),
    ...(record.tags !== null && { tags: record.tags }),
  };
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

/** Options of {@link ConversationCore}. */
export interface ConversationCoreOptions {
  /** How a recorded state value is checked against its property (default: JSON type and enum; the server's: AJV). */
  conforms?: StateConformance;
}

/**
 * The conversation service on any {@link EventStore} and {@link EventBus}, with a
 * {@link ConversationRuntime} driving conversations: `create`, `record` (validated; each
 * conversation's writes stored and published in call order), `sendMessage` / `deliverMessage`,
 * `setStatus`, the derived agent state (`states`, `info`, `fullState`) and `publishState`. It imports
 * no Node built-in: the reference server (`ConversationService`, which adds creation from a large
 * body on its import threads) and the mock's browser handlers share it.
 */
export class ConversationCore {
  /**
   * The write in progress per conversation (record, setStatus): the next one starts when it has
   * settled, so that events are stored and published in the order they were recorded, and a status
   * change reads and writes with nothing in between, whatever the store's latency.
   */
  private readonly writes = new Map<string, Promise<unknown>>();
  /** Client messages per conversation not yet recorded (deliverMessage), bounded by MAX_WAITING_MESSAGES. */
  private readonly waitingMessages = new Map<string, number>();
  private readonly conforms: StateConformance | undefined;

  constructor(
    protected readonly store: EventStore,
    protected readonly bus: EventBus,
    protected readonly runtime: ConversationRuntime,
    options: ConversationCoreOptions = {},
  ) {
    this.conforms = options.conforms;
  }

  /**
   * Creates a conversation from a `POST /api/conversations` body (already checked against the
   * spec): its `replay_json` and initial user message stored with it, then handed to the runtime.
   * `state`: fields of the agent's state the conversation starts with (`max_iterations`, …), stored
   * first as ConversationStateUpdateEvents, so that its state and its agent read them.
   * @throws RequestValidationError (422), HttpError 409
   */
  async create(request: ConversationCreateRequest, state: Readonly<Record<string, unknown>> = {}): Promise<ConversationRecord> {
    const conversation = this.newConversation(request);
    // Stamped as OpenHands stamps state updates over a log without a tree node yet: the first has no
    // parent, the next a new root (`__root__`, openhands-sdk conversation/state.py `_stamp_parent_id`).
    const events: EventToStore[] = Object.entries(state).map(([key, value], index) => {
      const event: Event = { id: crypto.randomUUID(), timestamp: recordedTimestamp(), source: "environment", ...(index > 0 && { parent_id: "__root__" }), key, value, kind: "ConversationStateUpdateEvent" };
      return { event, json: JSON.stringify(event) };
    });
    if (request.replay_json) events.push(...parseReplay(request.replay_json));
    const initial = this.runtime.takesInitialMessage?.(request) ? initialUserMessage(request) : undefined;
    if (request.initial_user_msg && !initial) events.push(initialMessage(request.initial_user_msg, request.image_urls));
    let record: ConversationRecord;
    try {
      record = await this.store.createConversation(conversation, events);
    } catch (error) {
      if (error instanceof ConversationExistsError) throw new HttpError(409, error.message);
      if (error instanceof DuplicateEventIdError) {
        const stateCount = Object.keys(state).length;
        const loc = error.index < events.length - (request.initial_user_msg && !initial ? 1 : 0) ? ["body", "replay_json", error.index - stateCount, "id"] : ["body", "initial_user_msg"];
        throw new RequestValidationError([{ loc, msg: `event id ${error.eventId} appears twice in the trajectory`, type: "value_error" }]);
      }
      throw error;
    }
    return this.started(record, initial);
  }

  /** The conversation a request creates. @throws RequestValidationError for a conversation_id that is not a UUID */
  protected newConversation(request: ConversationCreateRequest): NewConversation {
    let id: string = crypto.randomUUID();
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

  /** The initial user message that the runtime records itself for `request`, if it does. */
  protected takenInitialMessage(request: ConversationCreateRequest): UserMessage | undefined {
    return this.runtime.takesInitialMessage?.(request) ? initialUserMessage(request) : undefined;
  }

  /** Hands a new conversation to the runtime (with its initial message when the runtime records it). */
  protected started(record: ConversationRecord, initial?: UserMessage): ConversationRecord {
    // Nobody can be subscribed to a conversation that did not exist: nothing to publish yet.
    this.runtime.start(record, this.contextFor(record.id), initial);
    return record;
  }

  /**
   * Records events of a conversation: validated, stored in one transaction, pushed to subscribers.
   * Calls for one conversation are stored and published in the order they were made.
   * @throws RequestValidationError (an event the spec refuses: loc ["body", index, …]), ConversationNotFoundError
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

  /**
   * Appends an event batch (`POST …/events/batch`, JSONL bytes as they arrive) to a conversation,
   * all or nothing, parsed in this thread (the server's ConversationService parses it on its import
   * threads instead); then its live subscribers get the events.
   * @throws RequestValidationError (422, loc ["body", line, …]), HttpError 413, ConversationNotFoundError
   */
  async appendBatch(conversationId: string, body: AsyncIterable<Uint8Array>): Promise<AppendedBatch> {
    const parser = new EventBatchParser((rows: PreparedEvent[]) => rows);
    for await (const chunk of body) parser.push(chunk);
    let parsed: ReturnType<typeof parser.end>;
    try {
      parsed = parser.end();
    } catch (error) {
      throw error instanceof BatchTooLargeError ? batchTooLarge(error) : error;
    }
    if ("problems" in parsed) throw new RequestValidationError(parsed.problems);
    const { batch, lines } = parsed;
    const events = batch.chunks.flat().map((row): EventToStore => ({ event: JSON.parse(row.json) as Event, json: row.json }));
    return this.serially(conversationId, async () => {
      let stored: StoredEvent[];
      try {
        stored = await this.append(conversationId, events);
      } catch (error) {
        throw error instanceof DuplicateEventIdError ? duplicateIdProblem(error, lines) : error;
      }
      const { eventCount } = await requireConversation(this.store, conversationId);
      return { firstSeq: stored[0]?.seq ?? eventCount + 1, count: stored.length, eventCount };
    });
  }

  private async append(conversationId: string, toStore: readonly EventToStore[]): Promise<StoredEvent[]> {
    const stored = await this.store.appendEvents(conversationId, toStore);
    this.bus.publish(conversationId, stored);
    return stored;
  }

  /** Runs `write` once the conversation's write in progress (if any) has settled. */
  protected serially<T>(conversationId: string, write: () => Promise<T>): Promise<T> {
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
   * @throws ConversationNotFoundError, TooManyMessagesError
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
   * Deletes a conversation: its runtime stops whatever runs for it, then the store removes it with
   * its events, after the writes in progress (a write called later fails with
   * ConversationNotFoundError, as for any unknown conversation), and its live subscribers in this
   * process are told (they close).
   * @throws ConversationNotFoundError
   */
  async delete(conversationId: string): Promise<void> {
    await requireConversation(this.store, conversationId);
    await this.runtime.forget?.(conversationId);
    await this.serially(conversationId, async () => {
      if (!(await this.store.deleteConversation(conversationId))) throw new ConversationNotFoundError(conversationId);
    });
    this.bus.publishEnd(conversationId);
  }

  /**
   * Sets a conversation's status and records the change as a ConversationStateUpdateEvent (nothing
   * when it has that status already). @throws ConversationNotFoundError
   */
  setStatus(conversationId: string, status: ConversationLifecycleStatus, parentId?: string): Promise<ConversationRecord> {
    return this.serially(conversationId, async () => {
      const before = await requireConversation(this.store, conversationId);
      if (before.status === status) return before;
      const record = await this.store.setStatus(conversationId, status);
      const parent = parentId === undefined ? {} : { parent_id: parentId };
      const change: Event = { id: crypto.randomUUID(), timestamp: recordedTimestamp(), source: "environment", ...parent, key: "conversation_status", value: status, kind: "ConversationStateUpdateEvent" };
      await this.append(conversationId, validated([change], true));
      return record;
    });
  }

  /** The agent server's state of each conversation (execution status, stats, …), derived from what it recorded. */
  get states(): ConversationStates {
    return (this.recordedStates ??= this.createStates());
  }
  private recordedStates?: ConversationStates;

  /** The state deriver ({@link states}); the server's checks values with AJV. */
  protected createStates(): ConversationStates {
    return new ConversationStates(this.store, this.conforms);
  }

  /** What `GET /api/conversations/{id}` answers for a conversation: its record and its derived state. */
  async info(record: ConversationRecord): Promise<ConversationInfo> {
    return conversationInfo(record, await this.states.of(record));
  }

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
    return { id: crypto.randomUUID(), timestamp: recordedTimestamp(), source: "environment", key: "full_state", value, kind: "ConversationStateUpdateEvent" };
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
      setStatus: async (status, parentId) => void (await this.setStatus(conversationId, status, parentId)),
      publishState: () => this.publishState(conversationId),
    };
  }
}
