/**
 * The agent that runs a conversation. The reference server ships the interface and the recording
 * path; an LLM-driven runtime comes later.
 *
 * Without a runtime (the default `recordingRuntime`) nothing runs a conversation: it is created
 * STOPPED, holding the events it was created with (its replayed recording and its initial user
 * message). A runtime reports changes through `setStatus`, each recorded as a
 * ConversationStateUpdateEvent with key `conversation_status`.
 */
import type { ConversationLifecycleStatus, Event, MessageEvent } from "@acs-toolkit/schema";
import type { ConversationRecord } from "./store/types.js";

export interface RuntimeContext {
  /** Records events into the conversation (validated, stored, pushed to subscribers). */
  record(events: Event[]): Promise<void>;
  /** Moves the conversation to a new status and records the change. */
  setStatus(status: ConversationLifecycleStatus): Promise<void>;
}

export interface ConversationRuntime {
  /** Status a new conversation starts in under this runtime. */
  readonly initialStatus: ConversationLifecycleStatus;
  /** Called once after a conversation is created and stored. */
  start(conversation: ConversationRecord, context: RuntimeContext): void;
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
