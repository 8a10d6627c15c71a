/**
 * Rules over an ordered trajectory, which no single event can break on its own: ids are unique,
 * every observation answers an earlier action, no tool call is answered twice, a condensation
 * forgets only events that exist, a parent is an earlier event, time never goes backwards, the
 * system prompt comes first.
 *
 * A trajectory whose first event is not a SystemPromptEvent is a fragment of a longer conversation
 * (a page export, a test fixture): a reference to an event it does not hold may name one recorded
 * before it, so it is a warning of its own (`sequence/reference-outside-fragment`), not an error.
 * State updates and pauses before the system prompt do not make a fragment: OpenHands records the
 * system prompt at the first message or run (`_ensure_agent_ready` in local_conversation.py), after
 * whatever was set or paused before it (a confirmation policy, a security analyzer, a PauseEvent of
 * an idle conversation), and neither refers to another event.
 *
 * {@link TrajectoryChecker} checks one event at a time and keeps only what later events can refer
 * to (every id, the tool calls still unanswered, a hash of the answered ones, in compact tables), so
 * a recording of any length streams through it.
 */
import { HashedStrings, IdIndex, LargeStringMap } from "./id-index.js";
import { instantMicros } from "@acs-toolkit/schema/search";
import { describeValue, type ValidationIssue } from "./issues.js";

/** The sequence rules, each with its code, its severity and what it asks. */
export const SEQUENCE_RULES = [
  { rule: "sequence/duplicate-id", severity: "error", summary: "every event id is unique in the trajectory" },
  {
    rule: "sequence/orphan-observation",
    severity: "error",
    summary: "every ObservationEvent, UserRejectObservation and AgentErrorEvent answers an earlier ActionEvent (action_id and tool_call_id)",
  },
  { rule: "sequence/tool-call-answered-twice", severity: "error", summary: "no tool call is answered by more than one observation, rejection or agent error" },
  {
    rule: "sequence/unknown-forgotten-id",
    severity: "error",
    summary: "every id in a Condensation's forgotten_event_ids names an earlier event, or is `<id>-summary` for an earlier event (a condensation's summary)",
  },
  { rule: "sequence/unknown-parent", severity: "error", summary: "every parent_id names an earlier event, or is `__root__`" },
  { rule: "sequence/timestamp-backwards", severity: "error", summary: "timestamps never go backwards (compared as instants; no offset means UTC)" },
  { rule: "sequence/system-prompt-not-first", severity: "warning", summary: "a SystemPromptEvent is the first event (after any state updates and pauses), and the only one" },
  {
    rule: "sequence/reference-outside-fragment",
    severity: "warning",
    summary:
      "in a fragment (a trajectory that does not start with a SystemPromptEvent), a reference that names no event of the fragment (an answered action or tool call, a forgotten id, a parent_id): it may name an event recorded before the fragment",
  },
] as const;

/** The code of a sequence rule (`sequence/duplicate-id`, …). */
export type SequenceRule = (typeof SEQUENCE_RULES)[number]["rule"];

/** What {@link TrajectoryChecker.check} found on one event. */
export interface SequenceResult {
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
}

/** The result of an event that breaks no rule (shared: nothing is allocated for it). */
export const NOTHING: SequenceResult = Object.freeze({ errors: Object.freeze([]) as unknown as ValidationIssue[], warnings: Object.freeze([]) as unknown as ValidationIssue[] });

/**
 * Checks the sequence rules ({@link SEQUENCE_RULES}) over the events of one trajectory, given in
 * order, one {@link TrajectoryChecker.check | check} call per event. It does not validate each
 * event against the schema (see `validateEvent`): it reads the fields it needs where they have the
 * right type and skips them otherwise.
 *
 * Memory: every id (a UUID or ULID takes about 27 bytes, off the JavaScript heap; other ids a Map
 * entry), the tool call id of each ActionEvent until it is answered, and a 12-byte hash of each
 * answered one; nothing else of an event is kept.
 *
 * @example
 * const checker = new TrajectoryChecker();
 * for (const [i, line] of lines.entries()) {
 *   const { errors } = checker.check(JSON.parse(line), i + 1);
 *   for (const e of errors) console.error(`line ${i + 1}: ${e.pointer} ${e.message} (${e.rule})`);
 * }
 */
export class TrajectoryChecker {
  private index = 0;
  /** Event id → where it is (see `position`). */
  private readonly ids = new IdIndex();
  /** tool_call_id of each ActionEvent not answered yet → where the action is. */
  private readonly pending = new LargeStringMap();
  /**
   * Answered tool calls → where the answer is, as 64-bit hashes (a few bytes each, off the heap):
   * only consulted for a call that is not pending, to tell a call answered twice from one never made.
   */
  private readonly answered = new HashedStrings();
  /** The instant (microseconds) of the last event with a readable timestamp, its text and where. */
  private previousMicros = -Infinity;
  private previousText = "";
  private previousAt = 0;

  /** Issues of the event being checked; undefined while it has none. */
  private result: SequenceResult | undefined;

  /** True once the first event is known not to be a SystemPromptEvent: the trajectory is a fragment. */
  private fragment = false;
  /** True while every event so far may precede the system prompt (a state update, a pause): which event comes first is still open. */
  private leading = true;

  /** Number of events checked so far. */
  get count(): number {
    return this.index;
  }

  /**
   * True when the trajectory is a fragment of a longer conversation: its first event (after any
   * state updates and pauses) is not a SystemPromptEvent. References to events it does not hold are
   * then warnings, not errors.
   */
  get isFragment(): boolean {
    return this.fragment;
  }

  /**
   * Checks the next event of the trajectory. `line` (1-based, for text input) is only used to name
   * earlier events in messages ("the event at line 12"); without it they are named by index.
   * Anything can be passed (a line that was not JSON as `undefined`): it takes its place in the
   * order and breaks no rule.
   */
  check(event: unknown, line?: number): SequenceResult {
    const index = this.index++;
    const opening = this.leading && !mayPrecedeSystemPrompt(event);
    if (opening) {
      this.leading = false;
      this.fragment = !isSystemPrompt(event);
    }
    if (typeof event !== "object" || event === null || Array.isArray(event)) return NOTHING;
    const at = line !== undefined && Number.isInteger(line) && line > 0 ? line * 2 + 1 : index * 2;
    this.result = undefined;
    try {
      const e = event as Record<string, unknown>;
      const kind = e.kind;

      if (opening && kind !== "SystemPromptEvent") {
        const what = typeof kind === "string" ? `${/^[AEIOU]/.test(kind) ? "an" : "a"} ${describeKind(kind)}` : "an event without a kind";
        this.warning(
          "sequence/system-prompt-not-first",
          "/kind",
          `${index === 0 ? "the trajectory starts with" : `after ${index} state update${index === 1 ? "" : "s"} or pause${index === 1 ? "" : "s"}, the trajectory goes on with`} ${what}, not a SystemPromptEvent: it is read as a fragment of a longer conversation, so references to events before it are warnings`,
        );
      } else if (!opening && kind === "SystemPromptEvent") {
        this.warning("sequence/system-prompt-not-first", "/kind", `a SystemPromptEvent should be the first event of the trajectory; this one comes after ${index} other${index === 1 ? "" : "s"}`);
      }

      const id = e.id;
      if (typeof id === "string") {
        const first = this.ids.add(id, at);
        if (first !== undefined) this.error("sequence/duplicate-id", "/id", `${describeValue(id)} is already the id of the event at ${position(first)}`);
      }

      if (kind === "ActionEvent") {
        if (typeof e.tool_call_id === "string") this.pending.set(e.tool_call_id, at);
      } else if (kind === "ObservationEvent" || kind === "UserRejectObservation") {
        this.checkAnswer(kind, e.tool_call_id, e.action_id, at);
      } else if (kind === "AgentErrorEvent") {
        this.checkAnswer(kind, e.tool_call_id, undefined, at);
      } else if (kind === "Condensation" && Array.isArray(e.forgotten_event_ids)) {
        const forgotten = e.forgotten_event_ids as unknown[];
        for (let i = 0; i < forgotten.length; i++) {
          const forgottenId = forgotten[i];
          if (typeof forgottenId !== "string") continue;
          if (forgottenId === id) this.error("sequence/unknown-forgotten-id", `/forgotten_event_ids/${i}`, `${describeValue(forgottenId)} is this condensation's own id`);
          else if (!this.knownForgotten(forgottenId)) this.unresolved("sequence/unknown-forgotten-id", `/forgotten_event_ids/${i}`, forgottenId);
        }
      }

      const parent = e.parent_id;
      if (typeof parent === "string" && parent !== ROOT_PARENT_ID && (parent === id || this.ids.get(parent) === undefined)) {
        if (parent === id) this.error("sequence/unknown-parent", "/parent_id", `${describeValue(parent)} is the event's own id`);
        else this.unresolved("sequence/unknown-parent", "/parent_id", parent);
      }

      const timestamp = e.timestamp;
      const micros = typeof timestamp === "string" ? instantMicros(timestamp) : undefined;
      if (micros !== undefined) {
        if (micros < this.previousMicros) {
          this.error(
            "sequence/timestamp-backwards",
            "/timestamp",
            `${describeValue(timestamp)} is earlier than ${describeValue(this.previousText)}, the timestamp of the event before it (at ${position(this.previousAt)})`,
          );
        }
        // Each event is compared with the one before it: one misplaced event is one error, not a flood.
        this.previousMicros = micros;
        this.previousText = timestamp as string;
        this.previousAt = at;
      }
    } catch {
      // A value whose getters throw (never JSON): validateEvent reports it; no sequence rule applies.
    }
    return this.result ?? NOTHING;
  }

  private error(rule: SequenceRule, pointer: string, message: string): void {
    this.result ??= { errors: [], warnings: [] };
    this.result.errors.push({ pointer, rule, message });
  }

  private warning(rule: SequenceRule, pointer: string, message: string): void {
    this.result ??= { errors: [], warnings: [] };
    this.result.warnings.push({ pointer, rule, message });
  }

  /**
   * A reference (`id`) to no earlier event: an error of `rule` in a whole trajectory, a warning in a
   * fragment, whose missing events may have been recorded before it.
   */
  private unresolved(rule: SequenceRule, pointer: string, id: string): void {
    if (this.fragment) this.warning("sequence/reference-outside-fragment", pointer, `${describeValue(id)} names no event of this fragment: it may name one recorded before it`);
    else this.error(rule, pointer, `${describeValue(id)} names no earlier event of the trajectory`);
  }

  /**
   * A forgotten id that names an earlier event, or `<id>-summary` for one: the summary of an earlier
   * condensation, which is in the view (and so can be forgotten) but never stored as an event.
   */
  private knownForgotten(forgottenId: string): boolean {
    if (this.ids.get(forgottenId) !== undefined) return true;
    return forgottenId.endsWith(SUMMARY_SUFFIX) && this.ids.get(forgottenId.slice(0, -SUMMARY_SUFFIX.length)) !== undefined;
  }

  /** An observation, a rejection (`actionId` given) or an agent error (`actionId` undefined). */
  private checkAnswer(kind: string, toolCallId: unknown, actionId: unknown, at: number): void {
    if (typeof toolCallId !== "string") return;
    const byAction = kind !== "AgentErrorEvent";
    const call = this.pending.get(toolCallId);
    const named = byAction && typeof actionId === "string" ? this.ids.get(actionId) : undefined;
    if (call === undefined) {
      const answer = this.answered.get(toolCallId);
      if (answer !== undefined) {
        this.error("sequence/tool-call-answered-twice", "/tool_call_id", `tool call ${describeValue(toolCallId)} was already answered, by the event at ${position(answer)}`);
      } else if (byAction && typeof actionId === "string" && named === undefined) {
        if (this.fragment) this.warning("sequence/reference-outside-fragment", "/action_id", `${describeValue(actionId)} names no event of this fragment: the ActionEvent this ${kind} answers may come before it`);
        else this.error("sequence/orphan-observation", "/action_id", `${describeValue(actionId)} names no earlier event: a ${kind} answers an earlier ActionEvent`);
      } else if (this.fragment && named === undefined) {
        this.warning("sequence/reference-outside-fragment", "/tool_call_id", `tool call ${describeValue(toolCallId)} was made by no ActionEvent of this fragment: it may be one recorded before it`);
      } else {
        this.error("sequence/orphan-observation", "/tool_call_id", `${describeValue(toolCallId)} is the tool call of no earlier ActionEvent: a ${kind} answers one`);
      }
      return;
    }
    if (byAction && typeof actionId === "string" && named !== call) {
      this.error(
        "sequence/orphan-observation",
        "/action_id",
        `${named === undefined ? `${describeValue(actionId)} names no earlier event` : `names the event at ${position(named)}`}: it should name the ActionEvent at ${position(call)}, which made tool call ${describeValue(toolCallId)}`,
      );
    }
    this.pending.delete(toolCallId);
    this.answered.add(toolCallId, at);
  }
}

/** The reserved parent of a new root (release 1.31.0): no event has this id. */
const ROOT_PARENT_ID = "__root__";

/** The suffix of a CondensationSummaryEvent's id after its condensation's id. */
const SUMMARY_SUFFIX = "-summary";

function kindIs(event: unknown, kind: string): boolean {
  try {
    return typeof event === "object" && event !== null && (event as { kind?: unknown }).kind === kind;
  } catch {
    return false; // a throwing getter: validateEvent reports it
  }
}

const mayPrecedeSystemPrompt = (event: unknown) => kindIs(event, "ConversationStateUpdateEvent") || kindIs(event, "PauseEvent");
const isSystemPrompt = (event: unknown) => kindIs(event, "SystemPromptEvent");

/** Where an earlier event is, from the number the checker stored: "line 12" or "index 11". */
function position(at: number): string {
  return at % 2 === 1 ? `line ${(at - 1) / 2}` : `index ${at / 2}`;
}

function describeKind(kind: string): string {
  return kind.length <= 60 ? kind : `${kind.slice(0, 60)}…`;
}

