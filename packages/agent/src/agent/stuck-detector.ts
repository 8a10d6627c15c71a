/**
 * OpenHands' StuckDetector (openhands-sdk/openhands/sdk/conversation/stuck_detector.py, used by
 * `_check_stuck_or_nudge` in conversation/impl/local_conversation.py): before each step, the last
 * events of the active branch since the last user message are checked for a loop:
 *
 * 1. the same action with the same observation, `actionObservation` (4) times;
 * 2. the same action failing (an AgentErrorEvent) more than `actionError` (3) times: at exactly
 *    `actionError` the agent is first nudged, once per streak, with a message telling it so;
 * 3. a monologue: `monologue` (3) agent messages in a row;
 * 4. two action–observation pairs alternating, `alternatingPattern` (6) of each.
 *
 * The SDK's fifth pattern (a loop of context-window errors) always answers no, so it is left out.
 * Events compare as the SDK's `_event_eq` compares them: by content, never by id.
 */
import type { ActionEvent, AgentErrorEvent, Event, MessageEvent } from "@acs-toolkit/schema";
import type { RecordedEvent } from "../host.js";

/** How many repetitions make each pattern (the SDK's `StuckDetectionThresholds`). */
export interface StuckThresholds {
  /** The same action and observation (default 4). */
  actionObservation: number;
  /** The same action failing, one repeat past it (default 3). */
  actionError: number;
  /** Agent messages in a row (default 3). */
  monologue: number;
  /** Actions and observations of an alternating pair (default 6). */
  alternatingPattern: number;
}

export const DEFAULT_STUCK_THRESHOLDS: Readonly<StuckThresholds> = { actionObservation: 4, actionError: 3, monologue: 3, alternatingPattern: 6 };

/** How many of the last events of the active branch are looked at (`MAX_EVENTS_TO_SCAN_FOR_STUCK_DETECTION`). */
export const STUCK_SCAN_WINDOW = 20;

/** What the check before a step found: a nudge to record, or a stuck agent. */
type StuckVerdict = { nudge: string } | "stuck" | undefined;

const isObservationLike = (event: Event) => event.kind === "ObservationEvent" || event.kind === "AgentErrorEvent" || event.kind === "UserRejectObservation";
const isUserMessage = (event: Event) => event.kind === "MessageEvent" && event.source === "user";

/** Structural equality of JSON values (pydantic compares models field by field, in any order). */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((item, index) => same(item, (b as unknown[])[index]));
  const left = Object.entries(a).filter(([, value]) => value != null);
  const right = Object.entries(b).filter(([, value]) => value != null);
  return left.length === right.length && left.every(([key, value]) => same(value, (b as Record<string, unknown>)[key]));
}

/** The SDK's `_event_eq`: the same kind and content, ids and response ids left out. */
function sameEvent(a: Event, b: Event): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "ActionEvent" && b.kind === "ActionEvent") {
    return a.source === b.source && same(a.thought, b.thought) && same(a.action, b.action) && a.tool_name === b.tool_name;
  }
  if (a.kind === "ObservationEvent" && b.kind === "ObservationEvent") return a.source === b.source && same(a.observation, b.observation) && a.tool_name === b.tool_name;
  if (a.kind === "AgentErrorEvent" && b.kind === "AgentErrorEvent") return a.source === b.source && a.error === b.error;
  if (a.kind === "MessageEvent" && b.kind === "MessageEvent") return a.source === b.source && same(a.llm_message, b.llm_message);
  return same(a, b);
}

/** The last `count` actions and observation-like events, most recent first. */
function lastActionsAndObservations(events: readonly Event[], count: number): { actions: Event[]; observations: Event[] } {
  const actions: Event[] = [];
  const observations: Event[] = [];
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.kind === "ActionEvent" && actions.length < count) actions.push(event);
    else if (isObservationLike(event) && observations.length < count) observations.push(event);
    if (actions.length >= count && observations.length >= count) break;
  }
  return { actions, observations };
}

const allSame = (events: readonly Event[]) => events.every((event) => sameEvent(events[0]!, event));

export class StuckDetector {
  private readonly thresholds: StuckThresholds;
  /** The AgentErrorEvent last nudged for: a streak that adds no new error is not nudged again. */
  private lastNudgedErrorId: string | undefined;

  constructor(thresholds: Partial<StuckThresholds> = {}) {
    this.thresholds = { ...DEFAULT_STUCK_THRESHOLDS, ...thresholds };
  }

  /**
   * The check before a step over `branch`, the last {@link STUCK_SCAN_WINDOW} events of the active
   * branch: a nudge first (the step then runs), else whether the agent is stuck.
   */
  check(branch: readonly RecordedEvent[]): StuckVerdict {
    const events = sinceLastUserMessage(branch);
    const nudge = this.actionErrorNudge(events);
    if (nudge) return { nudge };
    return this.isStuck(events) ? "stuck" : undefined;
  }

  private isStuck(events: readonly Event[]): boolean {
    const { actionObservation, actionError, monologue, alternatingPattern } = this.thresholds;
    if (events.length < Math.min(actionObservation, actionError, monologue)) return false;
    // One pair more than the action-error threshold tells a fresh streak from one already nudged.
    const { actions, observations } = lastActionsAndObservations(events, Math.max(actionObservation, actionError + 1));
    if (actions.length >= actionObservation && observations.length >= actionObservation) {
      if (allSame(actions.slice(0, actionObservation)) && allSame(observations.slice(0, actionObservation))) return true;
    }
    if (actionErrorStreak(actions, observations) > actionError) return true;
    if (isMonologue(events, monologue)) return true;
    return events.length >= alternatingPattern && isAlternating(events, alternatingPattern);
  }

  /** The SDK's `get_action_error_nudge`: once a streak first reaches the threshold, once per streak. */
  private actionErrorNudge(events: readonly Event[]): string | undefined {
    const threshold = this.thresholds.actionError;
    const { actions, observations } = lastActionsAndObservations(events, threshold + 1);
    if (actionErrorStreak(actions, observations) !== threshold) return undefined;
    const action = actions[0] as ActionEvent;
    const error = observations[0] as AgentErrorEvent;
    if (error.id === this.lastNudgedErrorId) return undefined;
    this.lastNudgedErrorId = error.id;
    return (
      `You've called \`${action.tool_name}\` with the same arguments ${threshold} times in a row and gotten the same error each time: ${error.error}. ` +
      "Repeating the exact same call again will not work — review the error message and either correct the arguments or try a different approach."
    );
  }
}

/** The events after the last user message (all of them without one). */
function sinceLastUserMessage(events: readonly RecordedEvent[]): readonly Event[] {
  for (let index = events.length - 1; index >= 0; index--) if (isUserMessage(events[index]!)) return events.slice(index + 1);
  return events;
}

/** The length of the trailing run of one action answered by an AgentErrorEvent each time. */
function actionErrorStreak(actions: readonly Event[], observations: readonly Event[]): number {
  let streak = 0;
  for (let index = 0; index < Math.min(actions.length, observations.length); index++) {
    if (!sameEvent(actions[0]!, actions[index]!) || observations[index]!.kind !== "AgentErrorEvent") break;
    streak++;
  }
  return streak;
}

/** `threshold` agent messages in a row at the end (a condensation summary does not break them). */
function isMonologue(events: readonly Event[], threshold: number): boolean {
  if (events.length < threshold) return false;
  let messages = 0;
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.kind === "MessageEvent") {
      if ((event as MessageEvent).source === "agent") messages++;
      else if (event.source === "user") break;
    } else if (event.kind !== "CondensationSummaryEvent") break;
  }
  return messages >= threshold;
}

/** The last `threshold` actions and observations (or errors) repeat every second one: A, B, A, B, … */
function isAlternating(events: readonly Event[], threshold: number): boolean {
  const actions: Event[] = [];
  const observations: Event[] = [];
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.kind === "ActionEvent" && actions.length < threshold) actions.push(event);
    else if ((event.kind === "ObservationEvent" || event.kind === "AgentErrorEvent") && observations.length < threshold) observations.push(event);
    if (actions.length === threshold && observations.length === threshold) break;
  }
  if (actions.length !== threshold || observations.length !== threshold) return false;
  for (let index = 0; index < threshold - 2; index++) {
    if (!sameEvent(actions[index]!, actions[index + 2]!) || !sameEvent(observations[index]!, observations[index + 2]!)) return false;
  }
  return true;
}
