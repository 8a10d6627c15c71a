/**
 * What the LLM sees of a conversation: OpenHands' `View.from_events`. The events that become
 * messages, minus those a Condensation forgot (and the condensation events themselves), with the
 * latest condensation's summary inserted at its `summary_offset` as a CondensationSummaryEvent
 * (id `<condensation id>-summary`, never stored). A CondensationRequest after the last Condensation
 * is unhandled: the condenser must run.
 */
import type {
  ActionEvent,
  AgentErrorEvent,
  CondensationSummaryEvent,
  MessageEvent,
  ObservationEvent,
  SystemPromptEvent,
  UserRejectObservation,
} from "@acs-toolkit/schema";
import type { RecordedEvent } from "../host.js";

/** An event that becomes (part of) a message to the LLM. */
export type ViewEvent = SystemPromptEvent | MessageEvent | ActionEvent | ObservationEvent | AgentErrorEvent | UserRejectObservation | CondensationSummaryEvent;

export interface View {
  events: ViewEvent[];
  /** A CondensationRequest came after the last Condensation. */
  unhandledCondensationRequest: boolean;
}

const CONVERTIBLE = new Set(["SystemPromptEvent", "MessageEvent", "ActionEvent", "ObservationEvent", "AgentErrorEvent", "UserRejectObservation"]);

export function viewOf(events: readonly RecordedEvent[]): View {
  const forgotten = new Set<string>();
  let summary: CondensationSummaryEvent | undefined;
  let summaryOffset = 0;
  let unhandledCondensationRequest = false;
  for (const event of events) {
    if (event.kind === "Condensation") {
      for (const id of event.forgotten_event_ids ?? []) forgotten.add(id);
      unhandledCondensationRequest = false;
      if (event.summary != null && event.summary_offset != null) {
        summary = { id: `${event.id}-summary`, timestamp: event.timestamp, source: "environment", summary: event.summary, kind: "CondensationSummaryEvent" };
        summaryOffset = event.summary_offset;
      }
    } else if (event.kind === "CondensationRequest") {
      unhandledCondensationRequest = true;
    }
  }
  const kept = events.filter((event): event is ViewEvent => CONVERTIBLE.has(event.kind) && !forgotten.has(event.id));
  // An older summary is itself forgotten by the condensation that replaced it (versions §2 #1).
  if (summary && !forgotten.has(summary.id)) kept.splice(Math.min(summaryOffset, kept.length), 0, summary);
  return { events: kept, unhandledCondensationRequest };
}

/** The tool call id an observation-like event answers, or undefined. */
export function answeredCallId(event: ViewEvent): string | undefined {
  return event.kind === "ObservationEvent" || event.kind === "AgentErrorEvent" || event.kind === "UserRejectObservation" ? event.tool_call_id : undefined;
}

/** ActionEvents of `events` that no observation, rejection or agent error answers yet, in order. */
export function unmatchedActions(events: readonly RecordedEvent[]): ActionEvent[] {
  const answered = new Set<string>();
  for (const event of events) {
    if (event.kind === "ObservationEvent" || event.kind === "AgentErrorEvent" || event.kind === "UserRejectObservation") answered.add(event.tool_call_id);
  }
  return events.filter((event): event is ActionEvent => event.kind === "ActionEvent" && event.action != null && !answered.has(event.tool_call_id));
}
