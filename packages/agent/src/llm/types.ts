/**
 * The LLM as the agent loop sees it: one chat completion with tools, in the OpenAI chat format
 * (which LiteLLM, and so OpenHands, speaks to every provider). The loop records tool calls exactly
 * as an `Llm` returns them, so an implementation must pass through ids, names and the raw
 * `arguments` text untouched, malformed JSON included.
 */

/** A text or image part of a user message. */
export type ChatContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

/** A tool call as the model sent it. `arguments` is the raw JSON text, never parsed here. */
export interface ChatToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A message of the conversation sent to the model. */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatContentPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[]; reasoning_content?: string | null }
  | { role: "tool"; tool_call_id: string; name: string; content: string };

/** A function the model may call, with its JSON Schema parameters. */
export interface ChatTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Token counts of one completion, as OpenHands' TokenUsage counts them. */
export interface LlmUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  /** Cost in USD when the provider reports it (OpenRouter, LiteLLM proxies); else computed from prices. */
  cost?: number;
}

export interface LlmRequest {
  messages: ChatMessage[];
  tools: ChatTool[];
  /** Aborts the call (interrupt); the promise then rejects with an `LlmError` of code `UserCancelledError`. */
  signal: AbortSignal;
  /** Called with each streamed chunk when the model streams. */
  onDelta?: (delta: { content: string | null; reasoning_content: string | null }) => void;
}

export interface LlmResponse {
  /** The provider's response id (`chatcmpl-…`); becomes `llm_response_id`. */
  id: string;
  /** The model that answered, as the provider names it. */
  model: string;
  content: string | null;
  reasoning_content: string | null;
  tool_calls: ChatToolCall[];
  usage: LlmUsage;
  /** Wall time of the call, retries included, in milliseconds. */
  latency_ms: number;
}

/** One configured model. */
export interface Llm {
  /** The model name as configured (`openai/gpt-4o`). */
  readonly model: string;
  complete(request: LlmRequest): Promise<LlmResponse>;
}

/** What an LLM factory gets from the settings. */
export interface LlmConfig {
  /** `provider/model` (LiteLLM convention). */
  model: string;
  apiKey: string | null;
  baseUrl: string | null;
  /** Which use the LLM serves (`agent`, `condenser`): the key of its metrics in `stats`. */
  usageId: string;
  /** Stream tokens (StreamingDeltaEvent). */
  stream: boolean;
}

/** Builds the LLM of a conversation from its settings; the runtime's LLM dependency. */
export type LlmFactory = (config: LlmConfig) => Llm;

/**
 * A failed LLM call, named as OpenHands names it (the `code` of the ConversationErrorEvent:
 * `LLMAuthenticationError`, `LLMRateLimitError`, `LLMBadRequestError`, `LLMContextWindowExceedError`,
 * `NotFoundError`, `LLMServiceUnavailableError`, `LLMTimeoutError`, `APIConnectionError`,
 * `UserCancelledError`…). `message` is the detail; it never holds the API key.
 */
export class LlmError extends Error {
  override readonly name = "LlmError";
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}
