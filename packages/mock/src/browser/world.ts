/**
 * The mock's world for a browser page: the same scenarios, scripted agent and store contract as the
 * Node world (world.ts), without the reference server's Express app, which needs Node. Events live
 * in the server's `MemoryEventStore` (`@acs-toolkit/server/store`, no Node built-in, no native
 * module); what the server's `ConversationService` does for the mock (validate, store in order,
 * push to live subscribers, hand user messages to the agent) is restated here in a few lines.
 */
import type { AgentConversationState, ConversationCreateRequest, ConversationLifecycleStatus, Event, MessageEvent } from "@acs-toolkit/schema";
import { openMemoryStore, recordedTimestamp, requireConversation, type ConversationRecord, type EventStore, type StoredEvent } from "@acs-toolkit/server/store";
import { pointerTokens, validateEvent } from "@acs-toolkit/validator";
import type { RuntimeContext } from "@acs-toolkit/server";
import { DEFAULT_MOCK_KEY, DEFAULT_START } from "../defaults.js";
import { ScenarioStreamer, Scheduler, ScriptedAgent, type RuntimeLog, type Speed } from "../runtime.js";
import { BUILT_IN_SCENARIOS } from "../scenarios/builtin.js";
import type { Scenario } from "../scenarios/types.js";

/** Options of {@link createBrowserWorld}: those of the Node world that make sense in a page. */
export interface BrowserWorldOptions {
  /** Seed of scenario ids, texts, timings and the agent's ids. Default 1. */
  seed?: number;
  /** Pace of scenario streams and agent turns: a factor (1 = as recorded) or `instant`. Default `instant`. */
  speed?: Speed;
  /** Built-in scenario names (`happy`, `long`, `errors`, `condensation`, `confirmation`) and scenario objects. Default: every built-in. */
  scenarios?: Array<string | Scenario>;
  /** Time of the first event of built-in scenarios, ms since the epoch. Default 2026-02-05T11:24:45Z. */
  start?: number;
  /** Accepted X-Session-API-Key values. Default `["mock-session-key"]`. */
  keys?: string[];
  /** Event search, count and the live channel without a key (the interface declares none there). Default true. */
  publicRead?: boolean;
  /** Start streaming every scenario at once instead of when its first live client subscribes. */
  streamAtStart?: boolean;
  /** Where failures of the agent and of streams go. Default: `console.warn`. */
  log?: RuntimeLog;
}

/** A validation failure in the interface's 422 shape (`detail[].loc`, `msg`, `type`). */
export class BrowserValidationError extends Error {
  constructor(readonly detail: Array<{ loc: Array<string | number>; msg: string; type: string }>) {
    super(detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "));
  }
}

/** An answer other than 422, with the interface's `{"detail": string}` (409 for a conversation id taken). */
export class BrowserHttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** In-page fan-out of stored events to live connections; says when a conversation gets its first one. */
export class BrowserBus {
  private readonly listeners = new Map<string, Set<(events: readonly StoredEvent[]) => void>>();
  onSubscribe?: (conversationId: string) => void;

  subscribe(conversationId: string, listener: (events: readonly StoredEvent[]) => void): () => void {
    let set = this.listeners.get(conversationId);
    if (!set) this.listeners.set(conversationId, (set = new Set()));
    set.add(listener);
    this.onSubscribe?.(conversationId);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(conversationId);
    };
  }

  publish(conversationId: string, events: readonly StoredEvent[]): void {
    for (const listener of this.listeners.get(conversationId) ?? []) listener(events);
  }
}

/** The spec's defaults of AgentConversationState (spec/openapi: components/schemas/AgentConversationState). */
const STATE_DEFAULTS = {
  execution_status: "idle",
  stats: { usage_to_metrics: {} },
  confirmation_policy: { kind: "NeverConfirm" },
  max_iterations: 500,
  stuck_detection: true,
  activated_knowledge_skills: [],
  blocked_actions: {},
  blocked_messages: {},
  agent_state: {},
  tags: {},
  invoked_skills: [],
  title: null,
} as const;

/** The properties a recorded message keeps: the spec's Message's, but its deprecated ones (as the server, conversations.ts). */
const MESSAGE_PROPERTIES = ["role", "content", "tool_calls", "tool_call_id", "name", "reasoning_content", "thinking_blocks", "responses_reasoning_item"] as const;

/**
 * A user MessageEvent carrying `message` as the server records it (`run` and unknown properties
 * dropped), checked against the spec: a mistake is a 422 whose `loc` starts with `base` (`["body"]`,
 * `["message"]` on the live channel). @throws BrowserValidationError
 */
export function userMessageEvent(message: unknown, base: Array<string | number> = ["body"]): MessageEvent {
  if (typeof message !== "object" || message === null || Array.isArray(message)) throw new BrowserValidationError([{ loc: base, msg: "must be an object", type: "model_attributes_type" }]);
  const sent = message as Record<string, unknown>;
  if (sent.role !== "user") throw new BrowserValidationError([{ loc: [...base, "role"], msg: `must be "user"`, type: "literal_error" }]);
  const event = {
    id: crypto.randomUUID(),
    timestamp: recordedTimestamp(),
    source: "user",
    llm_message: Object.fromEntries(MESSAGE_PROPERTIES.filter((name) => sent[name] !== undefined).map((name) => [name, sent[name]])) as unknown as MessageEvent["llm_message"],
    llm_response_id: null,
    activated_skills: [],
    extended_content: [],
    sender: null,
    critic_result: null,
    kind: "MessageEvent",
  } as MessageEvent;
  const result = validateEvent(event);
  if (!result.ok) {
    // The event's issues under /llm_message are the message's own, at the same place in the body.
    throw new BrowserValidationError(result.errors.map((issue) => ({ loc: [...base, ...pointerTokens(issue.pointer).slice(issue.pointer.startsWith("/llm_message") ? 1 : 0)], msg: issue.message, type: "value_error" })));
  }
  return event;
}

/**
 * The browser world's conversation service: every write of a conversation in call order (the
 * server's `serially`), each event validated by the spec before it is stored, then published.
 */
export class BrowserConversations {
  private readonly writes = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: EventStore,
    private readonly bus: BrowserBus,
    private readonly agent: ScriptedAgent,
  ) {}

  /** Validates, stores and publishes `events`. @throws BrowserValidationError (an event the spec refuses) */
  record(conversationId: string, events: readonly Event[]): Promise<StoredEvent[]> {
    for (const [index, event] of events.entries()) {
      const result = validateEvent(event);
      if (!result.ok) return Promise.reject(new BrowserValidationError(result.errors.map((issue) => ({ loc: ["body", index, ...pointerTokens(issue.pointer)], msg: issue.message, type: "value_error" }))));
    }
    return this.serially(conversationId, () => this.append(conversationId, events));
  }

  private async append(conversationId: string, events: readonly Event[]): Promise<StoredEvent[]> {
    const stored = await this.store.appendEvents(conversationId, events.map((event) => ({ event, json: JSON.stringify(event) })));
    this.bus.publish(conversationId, stored);
    return stored;
  }

  private serially<T>(conversationId: string, write: () => Promise<T>): Promise<T> {
    const previous = this.writes.get(conversationId);
    const next = previous ? previous.then(write, write) : write();
    const settled = next.then(() => {}, () => {});
    this.writes.set(conversationId, settled);
    void settled.then(() => this.writes.get(conversationId) === settled && this.writes.delete(conversationId));
    return next;
  }

  /** Sets the status and records the change as the server does (a `conversation_status` state update). */
  setStatus(conversationId: string, status: ConversationLifecycleStatus): Promise<ConversationRecord> {
    return this.serially(conversationId, async () => {
      const before = await requireConversation(this.store, conversationId);
      if (before.status === status) return before;
      const record = await this.store.setStatus(conversationId, status);
      await this.append(conversationId, [{ id: crypto.randomUUID(), timestamp: recordedTimestamp(), source: "environment", key: "conversation_status", value: status, kind: "ConversationStateUpdateEvent" } as Event]);
      return record;
    });
  }

  contextFor(conversationId: string): RuntimeContext {
    return {
      record: async (events) => void (await this.record(conversationId, events)),
      setStatus: async (status) => void (await this.setStatus(conversationId, status)),
      // The server pushes a transient full_state after a control; the scripted agent has no controls.
      publishState: async () => {},
    };
  }

  /**
   * Creates a conversation (`STARTING`, with its initial user message if any) and starts the agent
   * on it. `replay_json` is not supported in the browser world. @throws BrowserValidationError, BrowserHttpError (409)
   */
  async create(request: ConversationCreateRequest): Promise<ConversationRecord> {
    const events: Event[] = [];
    if (request.initial_user_msg) {
      const content = [
        { cache_prompt: false, type: "text" as const, text: request.initial_user_msg },
        ...(request.image_urls?.length ? [{ cache_prompt: false, type: "image" as const, image_urls: request.image_urls }] : []),
      ];
      events.push(userMessageEvent({ role: "user", content, thinking_blocks: [] }, ["body", "initial_user_msg"]));
    }
    const id = request.conversation_id?.toLowerCase() ?? crypto.randomUUID();
    if (await this.store.getConversation(id)) throw new BrowserHttpError(409, `Conversation already exists: ${id}`);
    const record = await this.store.createConversation(
      { id, status: this.agent.initialStatus, repository: request.repository ?? null, selectedBranch: request.selected_branch ?? null, gitProvider: request.git_provider ?? null },
      events.map((event) => ({ event, json: JSON.stringify(event) })),
    );
    this.agent.start(record, this.contextFor(record.id));
    return record;
  }

  /** Records a user message and hands it to the agent (which answers when `run`). @throws BrowserValidationError (loc under `base`) */
  async sendMessage(conversationId: string, message: unknown, options: { run: boolean }, base: Array<string | number> = ["body"]): Promise<MessageEvent> {
    const event = userMessageEvent(message, base);
    await this.record(conversationId, [event]);
    this.agent.onUserMessage(await requireConversation(this.store, conversationId), event, this.contextFor(conversationId), options);
    return event;
  }

  /**
   * The agent server's state of a conversation (AgentConversationState): the spec's defaults,
   * overlaid by the recorded `full_state` and per-field state updates, as the server derives it
   * (agent-state.ts), for the properties that have a default.
   */
  async stateOf(record: ConversationRecord): Promise<AgentConversationState> {
    const state: Record<string, unknown> = { ...STATE_DEFAULTS };
    const apply = (key: string, value: unknown) => {
      const fallback = (STATE_DEFAULTS as Record<string, unknown>)[key];
      // Only values of the default's JSON type: a response always conforms to the spec.
      if (key in STATE_DEFAULTS && (fallback === null || typeof value === typeof fallback) && Array.isArray(value) === Array.isArray(fallback)) state[key] = value;
    };
    for (let after = 0; ; ) {
      const page = await this.store.readAfter(record.id, after, 500);
      for (const stored of page) {
        const event = JSON.parse(stored.json) as { kind: string; key?: unknown; value?: unknown };
        if (event.kind !== "ConversationStateUpdateEvent" || typeof event.key !== "string") continue;
        if (event.key === "full_state" && typeof event.value === "object" && event.value !== null) {
          for (const [key, value] of Object.entries(event.value)) apply(key, value);
        } else apply(event.key, event.value);
      }
      if (page.length < 500) break;
      after = page[page.length - 1]!.seq;
    }
    return { ...state, id: record.id } as AgentConversationState;
  }
}

/** The browser world: a store, the scenarios in it, the agent, the live bus. */
export interface BrowserWorld {
  store: EventStore;
  conversations: BrowserConversations;
  bus: BrowserBus;
  agent: ScriptedAgent;
  streamer: ScenarioStreamer;
  scenarios: Scenario[];
  keys: string[];
  publicRead: boolean;
  seed: number;
  speed: Speed;
  /** Resolves once every scenario's conversation is stored. */
  ready: Promise<void>;
  /** Cancels streams and agent turns. */
  close(): void;
}

/** Builds the browser world with its scenarios stored (and streaming, paced, once subscribed). */
export function createBrowserWorld(options: BrowserWorldOptions = {}): BrowserWorld {
  const seed = options.seed ?? 1;
  const speed = options.speed ?? "instant";
  const log: RuntimeLog = options.log ?? { warn: (details, message) => console.warn(`acs-mock: ${message}`, details) };
  const keys = options.keys?.length ? options.keys : [DEFAULT_MOCK_KEY];
  const start = options.start ?? DEFAULT_START;
  const store = openMemoryStore();
  const bus = new BrowserBus();
  const scheduler = new Scheduler();
  const agent = new ScriptedAgent({ seed, speed, scheduler, log });
  agent.store = store;
  const conversations = new BrowserConversations(store, bus, agent);
  const scenarios = (options.scenarios ?? Object.keys(BUILT_IN_SCENARIOS)).map((entry) => {
    if (typeof entry !== "string") return entry;
    const build = BUILT_IN_SCENARIOS[entry];
    if (!build) throw new Error(`unknown scenario "${entry}": the built-in ones are ${Object.keys(BUILT_IN_SCENARIOS).join(", ")}`);
    return build({ seed, start });
  });
  const seen = new Map<string, string>();
  for (const scenario of scenarios) {
    const other = seen.get(scenario.conversationId);
    if (other) throw new Error(`scenarios "${other}" and "${scenario.name}" have the same conversation_id ${scenario.conversationId}`);
    seen.set(scenario.conversationId, scenario.name);
  }
  const streamer = new ScenarioStreamer({ store, conversations, speed, scheduler, log });
  const ready = Promise.all(scenarios.map((scenario) => streamer.add(scenario))).then(() => {});
  ready.catch(() => {}); // the caller's to await
  bus.onSubscribe = (conversationId) => streamer.start(conversationId);
  if (options.streamAtStart) void ready.then(() => streamer.startAll());
  return {
    store,
    conversations,
    bus,
    agent,
    streamer,
    scenarios,
    keys,
    publicRead: options.publicRead ?? true,
    seed,
    speed,
    ready,
    close() {
      scheduler.close();
      void store.close();
    },
  };
}
