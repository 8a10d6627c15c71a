/**
 * How many tokens the LLM reads of a view: what the condenser's token limit is compared with
 * (openhands-sdk/openhands/sdk/context/condenser/utils.py `get_total_token_count`: the view's
 * messages and the tools offered with them).
 *
 * The SDK counts with the model's tokenizer through LiteLLM; this runtime has none, so it
 * estimates: a token per {@link CHARS_PER_TOKEN} characters of what each event becomes in the
 * request, plus {@link TOKENS_PER_MESSAGE} for the message around it. An estimate is enough for a
 * limit that only decides when to summarise; a model that still overflows answers with a
 * context-window error, which asks for a condensation.
 */
import type { ChatTool } from "../llm/types.js";
import { observationText } from "./messages.js";
import type { ViewEvent } from "./view.js";

/** Characters per token: OpenAI's rule of thumb for English text; code and JSON run a little shorter. */
const CHARS_PER_TOKEN = 4;
/** The chat format's cost of one message (role and separators), as OpenAI documents it. */
const TOKENS_PER_MESSAGE = 4;

const texts = (parts: ReadonlyArray<object> | undefined) => (parts ?? []).map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("\n");

/** What the LLM reads of one event. */
function eventText(event: ViewEvent): string {
  switch (event.kind) {
    case "SystemPromptEvent":
      return `${event.system_prompt.text}\n\n${event.dynamic_context?.text ?? ""}`;
    case "MessageEvent":
      return `${texts(event.llm_message.content)}\n${texts(event.extended_content)}${event.llm_message.reasoning_content ?? ""}`;
    case "ActionEvent":
      return `${texts(event.thought)}${event.reasoning_content ?? ""}${event.tool_call.name}${event.tool_call.arguments}`;
    case "ObservationEvent":
      return `${observationText(event.observation)}\n${texts(event.extended_content)}`;
    case "AgentErrorEvent":
      return event.error;
    case "UserRejectObservation":
      return event.rejection_reason ?? "";
    case "CondensationSummaryEvent":
      return event.summary ?? "";
  }
}

const estimate = (text: string) => Math.ceil(text.length / CHARS_PER_TOKEN);

/** Counts tokens of events and tools, each event counted once (events are immutable once recorded). */
export class TokenCounter {
  private readonly byEvent = new WeakMap<ViewEvent, number>();
  private readonly byTools = new WeakMap<readonly ChatTool[], number>();

  /** Tokens of one event's message. */
  event(event: ViewEvent): number {
    let tokens = this.byEvent.get(event);
    if (tokens === undefined) this.byEvent.set(event, (tokens = estimate(eventText(event)) + TOKENS_PER_MESSAGE));
    return tokens;
  }

  /** Tokens of the tools' definitions. */
  tools(tools: readonly ChatTool[]): number {
    if (tools.length === 0) return 0;
    let tokens = this.byTools.get(tools);
    if (tokens === undefined) this.byTools.set(tools, (tokens = estimate(JSON.stringify(tools))));
    return tokens;
  }

  /** Tokens of a request holding `events` and offering `tools`. */
  total(events: readonly ViewEvent[], tools: readonly ChatTool[]): number {
    let sum = this.tools(tools);
    for (const event of events) sum += this.event(event);
    return sum;
  }
}
