/**
 * The agent that runs a conversation: the recording path here, the LLM-driven agent of
 * `@acs-toolkit/agent` in `llm-agent-runtime.ts` (`--runtime agent`).
 *
 * Without a runtime (the default `recordingRuntime`) nothing runs a conversation: it is created
 * STOPPED, holding the events it was created with (its replayed recording and its initial user
 * message). A runtime reports changes through `setStatus`, each recorded as a
 * ConversationStateUpdateEvent with key `conversation_status`.
 */
import type { ConfirmationPolicy, ConfirmationResponseRequest, ConversationCreateRequest, SecurityAnalyzer, ConversationLifecycleStatus, Event, MessageEvent, UserMessage } from "@acs-toolkit/schema";
import type { ConversationRecord } from "../store/types.js";

/** The 400 of a control that no agent can answer (here, not in llm-agent-runtime.ts: importing that loads `@acs-toolkit/agent`). */
export const NO_AGENT_DETAIL = "No agent runs this conversation: it is a recording (created with replay_json), or the server runs without the agent runtime (--runtime agent)";

export interface RuntimeContext {
  /** Records events into the conversation (validated, stored, pushed to subscribers). */
  record(events: Event[]): Promise<void>;
  /** Moves the conversation to a new status and records the change (stamped with `parentId`, the agent's HEAD, when given). */
  setStatus(status: ConversationLifecycleStatus, parentId?: string): Promise<void>;
  /** Pushes the conversation's `full_state` to live subscribers, not stored (after run, pause, interrupt). */
  publishState(): Promise<void>;
}

/** The agent server's controls of a conversation (`POST …/run`, `…/pause`, `…/interrupt`, `…/events/respond_to_confirmation`, `…/confirmation_policy`, `…/security_analyzer`). */
export interface RuntimeControls {
  /** @throws HttpError 400 (no agent runs it), 409 (a run is active) */
  run(conversationId: string, context: RuntimeContext): Promise<void>;
  pause(conversationId: string, context: RuntimeContext): Promise<void>;
  interrupt(conversationId: string, context: RuntimeContext): Promise<void>;
  /** @throws HttpError 400 (no agent runs it) */
  respondToConfirmation(conversationId: string, response: ConfirmationResponseRequest, context: RuntimeContext): Promise<void>;
  /** @throws HttpError 400 (no agent runs it) */
  setConfirmationPolicy(conversationId: string, policy: ConfirmationPolicy, context: RuntimeContext): Promise<void>;
  /** @throws HttpError 400 (no agent runs it) */
  setSecurityAnalyzer(conversationId: string, analyzer: SecurityAnalyzer | null, context: RuntimeContext): Promise<void>;
}

export interface ConversationRuntime {
  /** Status a new conversation starts in under this runtime. */
  readonly initialStatus: ConversationLifecycleStatus;
  /** The status of the conversation `request` creates, when it depends on the request (default `initialStatus`). */
  initialStatusFor?(request: ConversationCreateRequest): ConversationLifecycleStatus;
  /**
   * Whether the runtime records the initial user message of the conversation `request` creates
   * itself (the agent records its SystemPromptEvent first); `start` then receives it. Default: the
   * service stores it with the conversation.
   */
  takesInitialMessage?(request: ConversationCreateRequest): boolean;
  /** Called once after a conversation is created and stored; `initial` when `takesInitialMessage` said so. */
  start(conversation: ConversationRecord, context: RuntimeContext, initial?: UserMessage): void;
  /**
   * A runtime that records user messages itself (an agent records a message that arrives during a
   * step when the step ends): resolves with the recorded MessageEvent, or undefined when it does not
   * run this conversation (the service then records it as usual and calls `onUserMessage`).
   */
  sendMessage?(conversationId: string, message: UserMessage, context: RuntimeContext, options: { run: boolean }): Promise<MessageEvent | undefined>;
  /** The controls; without them run and respond_to_confirmation answer 400, pause and interrupt change nothing. */
  readonly controls?: RuntimeControls;
  /**
   * Called when a conversation is about to be deleted (still stored): stops whatever runs for it
   * (its run interrupted, its shell stopped) and forgets it. Resolves once nothing of it runs.
   */
  forget?(conversationId: string): Promise<void>;
  /** Called once when the server has started (recovery after a crash). */
  open?(context: (conversationId: string) => RuntimeContext): Promise<void>;
  /** Called once when the server stops (runs are interrupted, shells stopped). */
  close?(): Promise<void>;
  /**
   * Called after a user message (sent over the live channel or `POST …/events`) is recorded and
   * pushed, so the agent can answer with `context.record`. `options.run` says whether to run the
   * agent on it: as on the OpenHands agent server, a message over HTTP runs it only with
   * `run: true`, one on the live channel always; a message that does not run waits for a run.
   */
  onUserMessage?(conversation: ConversationRecord, message: MessageEvent, context: RuntimeContext, options: { run: boolean }): void;
}

/** No agent: conversations are records only. */
export const recordingRuntime: ConversationRuntime = {
  initialStatus: "STOPPED",
  start() {},
};
