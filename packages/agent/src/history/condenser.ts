/**
 * OpenHands' LLMSummarizingCondenser (the default condenser, `enable_default_condenser`), as
 * openhands-sdk/openhands/sdk/context/condenser/llm_summarizing_condenser.py runs it with the
 * settings' defaults (openhands-sdk/openhands/sdk/settings/model.py): the view is condensed when
 *
 * - a CondensationRequest is unhandled: down to half its size;
 * - it holds more than `maxSize` events (default 240): down to half that;
 * - it holds more tokens than the agent model's context window (its max input tokens), or than
 *   `maxTokens` when that is smaller: down to half the limit (tokens estimated, see `tokens.ts`);
 *
 * the strictest of these deciding. The events after the first `keepFirst` (default 2: the system
 * prompt and the first user message) are forgotten up to the tail that meets it, and an LLM summary
 * of them (and of the previous summary) takes their place at `summary_offset`. A condensation that
 * would forget less than a tenth of the view is not made (`minimum_progress`).
 *
 * The forgotten range never separates a tool call from its result, nor the calls of one response
 * (its bounds move forward to the next such boundary, the SDK's `manipulation_indices`), so the
 * history stays valid for the LLM.
 */
import type { ChatTool } from "../llm/types.js";
import type { View, ViewEvent } from "./view.js";
import { answeredCallId } from "./view.js";
import { observationText } from "./messages.js";
import { TokenCounter } from "./tokens.js";

export interface CondenserOptions {
  /** Events in the view above which it is condensed (default 240). */
  maxSize?: number;
  /** Events at the start that are always kept (default 2). */
  keepFirst?: number;
  /** Tokens above which the view is condensed, when smaller than the model's context window (default: that window). */
  maxTokens?: number;
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
/** The least part of the view a condensation forgets (`minimum_progress`). */
const MINIMUM_PROGRESS = 0.1;

export class SummarizingCondenser {
  readonly maxSize: number;
  readonly keepFirst: number;
  /** The token limit: the smaller of `maxTokens` and the agent model's context window; undefined when neither is known. */
  readonly maxTokens: number | undefined;
  private readonly tokens = new TokenCounter();

  /**
   * @param contextWindow the agent model's max input tokens, when known
   * @throws RangeError when `keepFirst` leaves no room for a tail (`keep_first` < `max_size // 2`)
   */
  constructor(options: CondenserOptions = {}, contextWindow?: number) {
    this.maxSize = options.maxSize ?? 240;
    this.keepFirst = options.keepFirst ?? 2;
    const limits = [options.maxTokens, contextWindow].filter((limit): limit is number => limit !== undefined);
    this.maxTokens = limits.length ? Math.min(...limits) : undefined;
    if (Math.floor(this.maxSize / 2) - this.keepFirst - 1 <= 0) {
      throw new RangeError("keep_first must be less than max_size // 2 to leave room for condensation");
    }
  }

  /** Whether the view must be condensed; `tools`: what the LLM is offered with it (they count as tokens). */
  shouldCondense(view: View, tools: readonly ChatTool[] = []): boolean {
    return view.unhandledCondensationRequest || view.events.length > this.maxSize || this.overTokens(view, tools) !== undefined;
  }

  /** What to forget and how to ask for the summary, or undefined when nothing (or too little) can be forgotten. */
  plan(view: View, tools: readonly ChatTool[] = []): CondensationPlan | undefined {
    const events = view.events;
    const tails: number[] = [];
    if (view.unhandledCondensationRequest) tails.push(Math.floor(events.length / 2) - this.keepFirst - 1);
    if (events.length > this.maxSize) tails.push(Math.floor(this.maxSize / 2) - this.keepFirst - 1);
    const excess = this.overTokens(view, tools);
    if (excess !== undefined) tails.push(this.tailWithin(events, excess));
    if (tails.length === 0) return undefined;
    const bounds = exchangeBounds(events);
    let start = this.keepFirst;
    let end = Math.min(events.length, Math.max(0, events.length - Math.min(...tails)));
    while (start < events.length && !bounds(start)) start++;
    while (end < events.length && !bounds(end)) end++;
    if (start >= end || end - start < events.length * MINIMUM_PROGRESS) return undefined;
    const forgotten = events.slice(start, end);
    // The view holds at most one summary; the new one replaces it, so it folds the old one in.
    const previous = events.find((event) => event.kind === "CondensationSummaryEvent");
    return {
      forgottenEventIds: forgotten.map((event) => event.id),
      summaryOffset: start,
      prompt: summaryPrompt(previous?.kind === "CondensationSummaryEvent" ? previous.summary : "", forgotten.filter((event) => event !== previous)),
    };
  }

  /** The tokens to remove to get down to half the limit, when the view is over it. */
  private overTokens(view: View, tools: readonly ChatTool[]): number | undefined {
    if (this.maxTokens === undefined) return undefined;
    const total = this.tokens.total(view.events, tools);
    return total > this.maxTokens ? total - Math.floor(this.maxTokens / 2) : undefined;
  }

  /**
   * How many events at the end of the view can stay when the events after the first `keepFirst`
   * must lose `excess` tokens (utils.py `get_suffix_length_for_token_reduction`): all but the
   * shortest run after them that holds more than `excess`.
   */
  private tailWithin(events: readonly ViewEvent[], excess: number): number {
    const candidates = events.slice(this.keepFirst);
    let removed = 0;
    for (const [index, event] of candidates.entries()) {
      removed += this.tokens.event(event);
      if (removed > excess) return candidates.length - (index + 1);
    }
    return 0;
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
