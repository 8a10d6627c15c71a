/**
 * The host interface: what a server gives the agent runtime for one conversation. The reference
 * server implements it over its conversation service (store, bus, settings, uploads); the test kit's
 * `MemoryHost` implements it in memory. Nothing else of the server is visible to the agent.
 */
import type { ConversationLifecycleStatus, Event, ExecutionStatus, Settings, StreamingDeltaEvent } from "@acs-toolkit/schema";
import { openapiDocument } from "@acs-toolkit/schema/documents";

/** What the runtime records and reads back: the spec's `Event` (it never records the live-only kinds, StreamingDeltaEvent and ServerErrorEvent). */
export type RecordedEvent = Event;

/** The `execution_status` values (spec: ExecutionStatus), in the spec's order. Terminal (per the SDK): finished, error, stuck. */
export const EXECUTION_STATUSES: readonly ExecutionStatus[] = (openapiDocument.components as { schemas: { ExecutionStatus: { enum: ExecutionStatus[] } } }).schemas.ExecutionStatus.enum;

/**
 * The settings the agent reads, as the interface's `Settings` carries them, with every secret in
 * clear (the host decrypts; the runtime never logs or records them). Read when a conversation opens
 * and again at the start of every run, so a changed model or limit applies from the next run.
 *
 * - `llm_model`: LiteLLM's `provider/model` (`openai/gpt-4o`, `anthropic/claude-sonnet-4-5-…`, or
 *   `openai/<any>` with `llm_base_url` for any OpenAI-compatible endpoint).
 * - `max_iterations`: steps per run (default 500); `max_budget_per_task`: USD per conversation.
 * - `confirmation_mode`, `security_analyzer` (`"llm"`: the actions' `security_risk` argument counts,
 *   and only risky actions are confirmed), `enable_default_condenser` (default true), `mcp_config`
 *   (read at open).
 * - `secrets_store.custom_secrets` and `secrets_store.provider_tokens`: given to the terminal as
 *   environment variables, masked in every observation.
 */
export type AgentSettings = Pick<
  Settings,
  | "llm_model"
  | "llm_api_key"
  | "llm_base_url"
  | "max_iterations"
  | "confirmation_mode"
  | "security_analyzer"
  | "enable_default_condenser"
  | "mcp_config"
  | "max_budget_per_task"
  | "secrets_store"
>;

/**
 * One conversation as the host serves it to the runtime.
 *
 * Contract:
 * - Events reach the store only through `record`, in the order given, each batch whole; after
 *   {@link AgentRuntime.open} the runtime is the conversation's only writer (user messages go
 *   through `AgentConversation.sendMessage`, or are announced with `userMessageRecorded`).
 * - `record` validates, stores and pushes to live subscribers, and resolves once stored. If it
 *   rejects, the run stops in status `error` (events must never be lost silently).
 * - Events are the spec's `Event`s (`RecordedEvent`), never of a live-only kind.
 * - `publish` is for transient events (StreamingDeltaEvent): pushed to live subscribers, never
 *   stored, never throws.
 */
export interface ConversationHost {
  /** The conversation's id (canonical UUID). */
  readonly conversationId: string;
  /**
   * Absolute path of the conversation's own workspace directory. It exists; uploads land here; the
   * terminal starts here and the file editor works only inside it.
   */
  readonly workspaceDir: string;
  /**
   * A private directory on disk for the commands' `/tmp` (created when missing, never served).
   * Without one, `/tmp` is a bounded tmpfs in memory.
   */
  readonly tmpDir?: string;
  /** Stores events in order and pushes them to subscribers; resolves once they are stored. */
  record(events: readonly RecordedEvent[]): Promise<void>;
  /** Pushes a transient event to live subscribers; never stored. */
  publish(event: StreamingDeltaEvent): void;
  /** Every stored event of the conversation, in append order (read when the conversation opens). */
  readEvents(): Promise<readonly RecordedEvent[]>;
  /** The effective settings, secrets in clear. */
  settings(): Promise<AgentSettings>;
  /**
   * The conversation's lifecycle status changed (see {@link lifecycleStatusOf}). A host that records
   * the change as a ConversationStateUpdateEvent ({@link recordsStatusEvents}) stamps it with
   * `parentId` (the tree's HEAD, as every event the agent records; absent for the first event of a log).
   */
  setStatus(status: ConversationLifecycleStatus, parentId?: string): Promise<void>;
  /** Whether {@link setStatus} records an event in the conversation (the reference server does); default false. */
  readonly recordsStatusEvents?: boolean;
  /**
   * Called when a run has ended and after a pause or an interrupt, once what they recorded is
   * stored: where the agent server publishes its `full_state` to live subscribers (not stored;
   * openhands-versions §3.2). Optional; never throws.
   */
  stateSettled?(): void;
}

/**
 * The interface's lifecycle status for the agent's execution status. The lifecycle says whether the
 * conversation's runtime is up (as the OpenHands app server's `conversation_status` says whether its
 * sandbox runs); `execution_status` says what the agent does.
 *
 * | lifecycle | when |
 * | --- | --- |
 * | STARTING | while {@link AgentRuntime.open} sets the conversation up (tools, MCP servers, system prompt) |
 * | RUNNING | open, in `idle`, `running`, `paused`, `waiting_for_confirmation` or `finished` |
 * | ERROR | open, in `error` or `stuck` (the run loop died, a limit was reached, a restart interrupted a run) |
 * | STOPPED | closed ({@link AgentConversation.close}), or `deleting` |
 */
export function lifecycleStatusOf(status: ExecutionStatus): ConversationLifecycleStatus {
  switch (status) {
    case "error":
    case "stuck":
      return "ERROR";
    case "deleting":
      return "STOPPED";
    default:
      return "RUNNING";
  }
}
