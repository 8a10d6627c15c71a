/**
 * Shapes that today's OpenHands puts on the wire but that `spec/` (and so `@acs-toolkit/schema`)
 * does not describe yet: they arrive with issue 14 ("Speak today's OpenHands"). Each is derived from
 * a generated type where one exists, and carries the release that introduced it
 * (`openhands-versions.md` §1.2, §1.3, §3.4). When issue 14's spec lands, replace each with the
 * generated type of the same name and delete this module; nothing else in the package changes.
 */
import type { ConversationErrorEvent, Event, EventSource, PauseEvent } from "@acs-toolkit/schema";

/** What failed, for a client deciding what to show (v1.40.0 `FailureKind`). */
export type FailureKind = "auth" | "quota" | "rate_limit" | "config" | "transient" | "agent_action" | "internal" | "unknown";

/** What the user can do about it (v1.40.0 `FailureAction`). */
export type FailureAction = "none" | "retry" | "settings";

/** `classification` of AgentErrorEvent and ConversationErrorEvent (v1.40.0 `ErrorClassification`). */
export interface ErrorClassification {
  kind: FailureKind;
  retryable: boolean;
  user_action: FailureAction;
  error_id: string | null;
}

/** ConversationErrorEvent as v1.40+ writes it: with its `classification`. */
export type ClassifiedConversationErrorEvent = ConversationErrorEvent & { classification?: ErrorClassification };

/** `/interrupt` cancelled the in-flight run (v1.23.0; same fields as PauseEvent, source user). */
export type InterruptEvent = Omit<PauseEvent, "kind"> & { kind: "InterruptEvent" };

/**
 * A chunk of a streamed LLM response (v1.18.1). Never stored: published to live subscribers only,
 * without `parent_id`. Empty strings are forwarded.
 */
export type StreamingDeltaEvent = Omit<PauseEvent, "kind" | "source"> & {
  source: EventSource;
  content: string | null;
  reasoning_content: string | null;
  kind: "StreamingDeltaEvent";
};

/**
 * The agent's `execution_status` (§3.4), carried by ConversationStateUpdateEvent key
 * `execution_status`. Terminal (per the SDK): finished, error, stuck.
 */
export const EXECUTION_STATUSES = ["idle", "running", "paused", "waiting_for_confirmation", "finished", "error", "stuck", "deleting"] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** What the runtime records: the spec's events plus InterruptEvent (until issue 14). */
export type RecordedEvent = Event | InterruptEvent;
