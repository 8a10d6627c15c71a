/**
 * OpenHands' LLMSummarizingCondenser (the default condenser, `enable_default_condenser`): when the
 * view holds more than `maxSize` events (default 120), or a CondensationRequest is unhandled, the
 * events after the first `keepFirst` (default 4: the system prompt, the first user message, …) are
 * forgotten up to a tail that keeps the view at about half its limit (`maxSize / 2`; half the current
 * size for a request), and an LLM summary of them (and of the previous summary) takes their place
 * at `summary_offset = keepFirst`.
 *
 * One refinement: the forgotten range never separates a tool call from its result (its bounds move
 * forward until they fall between complete exchanges, and the summary goes where the range starts),
 * so the history stays valid for the LLM.
 */
import type { View, ViewEvent } from "./view.js";
import { answeredCallId } from "./view.js";
import { observationText } from "./messages.js";

export interface CondenserOptions {
  /** Events in the view above which it is condensed (default 120). */
  maxSize?: number;
  /** Events at the start that are always kept (default 4). */
  keepFirst?: number;
}

export interface CondensationPlan {
  /** Ids of the events to forget (the previous summary's `<id>-summary` included, when it is among them). */
  forgottenEventIds: string[];
  /** Where the summary goes in the condensed view: `keepFirst`, or later if an exchange straddled it. */
  summaryOffset: number;
  /** The prompt that asks the LLM for the new summary. */
  prompt: string;
}

/** Longest rendering of one event in the summary prompt. */
const EVENT_TEXT_LIMIT = 2_000;

export class SummarizingCondenser {
  readonly maxSize: number;
  readonly keepFirst: number;

  constructor(options: CondenserOptions = {}) {
    this.maxSize = options.maxSize ?? 120;
    this.keepFirst = options.keepFirst ?? 4;
  }

  shouldCondense(view: View): boolean {
    return view.unhandledCondensationRequest || view.events.length > this.maxSize;
  }

  /** What to forget and how to ask for the summary, or undefined when nothing can be forgotten. */
  plan(view: View): CondensationPlan | undefined {
    const events = view.events;
    const target = view.unhandledCondensationRequest ? Math.floor(events.length / 2) : Math.floor(this.maxSize / 2);
    const fromTail = Math.max(1, target - this.keepFirst - 1);
    const bounds = exchangeBounds(events);
    let start = this.keepFirst;
    let end = events.length - fromTail;
    while (start < events.length && !bounds(start)) start++;
    while (end < events.length && !bounds(end)) end++;
    if (start >= end) return undefined;
    const forgotten = events.slice(start, end);
    // The view holds at most one summary; the new one replaces it, so it folds the old one in.
    const previous = events.find((event) => event.kind === "CondensationSummaryEvent");
    return {
      forgottenEventIds: forgotten.map((event) => event.id),
      summaryOffset: start,
      prompt: summaryPrompt(previous?.kind === "CondensationSummaryEvent" ? previous.summary : "", forgotten.filter((event) => event !== previous)),
    };
  }
}

/**
 * A predicate: may the view be cut before index `i`? Not inside an exchange, which runs from a tool
 * call to the last of its results.
 */
function exchangeBounds(events: readonly ViewEvent[]): (i: number) => boolean {
  const callAt = new Map<string, number>();
  const blocked = new Array<boolean>(events.length + 1).fill(false);
  events.forEach((event, index) => {
    if (event.kind === "ActionEvent") callAt.set(event.tool_call_id, index);
    const answered = answeredCallId(event);
    const from = answered !== undefined ? callAt.get(answered) : undefined;
    if (from !== undefined) for (let cut = from + 1; cut <= index; cut++) blocked[cut] = true;
  });
  // Calls of one response stay together too.
  events.forEach((event, index) => {
    const previous = events[index - 1];
    if (event.kind === "ActionEvent" && previous?.kind === "ActionEvent" && previous.llm_response_id === event.llm_response_id) blocked[index] = true;
  });
  return (i) => !blocked[i];
}

function clip(text: string): string {
  return text.length > EVENT_TEXT_LIMIT ? `${text.slice(0, EVENT_TEXT_LIMIT)}…` : text;
}

/** One event as the summarising LLM reads it. */
function render(event: ViewEvent): string {
  switch (event.kind) {
    case "MessageEvent":
      return `${event.source}: ${(event.llm_message.content ?? []).map((part) => (part.type === "text" ? part.text : "[image]")).join("\n")}`;
    case "ActionEvent":
      return `agent calls ${event.tool_name}(${event.tool_call.arguments})`;
    case "ObservationEvent":
      return `result of ${event.tool_name}: ${observationText(event.observation)}`;
    case "AgentErrorEvent":
      return `error of ${event.tool_name}: ${event.error}`;
    case "UserRejectObservation":
      return `the user rejected ${event.tool_name}: ${event.rejection_reason ?? ""}`;
    case "CondensationSummaryEvent":
      return `summary: ${event.summary}`;
    case "SystemPromptEvent":
      return "system prompt";
  }
}

function summaryPrompt(previousSummary: string, forgotten: readonly ViewEvent[]): string {
  const events = forgotten.map((event) => `<EVENT id=${event.id}>\n${clip(render(event))}\n</EVENT>`).join("\n");
  return `You are maintaining a context-aware state summary for an interactive agent. You will be given a list of events corresponding to actions taken by the agent, and the most recent previous summary if one exists. Track:

USER_CONTEXT: (Preserve essential user requirements, goals, and clarifications in concise form)

COMPLETED: (Tasks completed so far, with brief results)
PENDING: (Tasks that still need to be done)
CURRENT_STATE: (Current variables, data structures, or relevant state)

For code-specific tasks, also include:
CODE_STATE: {File paths, function signatures, data structures}
TESTS: {Failing cases, error messages, outputs}
CHANGES: {Code edits, variable updates}
DEPS: {Dependencies, imports, external calls}
VERSION_CONTROL_STATUS: {Repository state, current branch, PR status, commit history}

PRIORITIZE:
1. Adapt tracking format to match the actual task type
2. Capture key user requirements and goals
3. Distinguish between completed and pending tasks
4. Keep all sections concise and relevant

SKIP: Tracking irrelevant details for the current task type

<PREVIOUS SUMMARY>
${previousSummary}
</PREVIOUS SUMMARY>

${events}

Now summarize the events using the rules above.`;
}
