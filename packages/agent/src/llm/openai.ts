/**
 * The default LLM: the official `openai` client against any OpenAI-compatible chat-completions
 * endpoint (see `model.ts` for how `llm_model` picks one).
 *
 * Why this client (README, "LLM client"): it hands back the provider's response as sent (the
 * response id, each tool call's id, name and raw `arguments` text, malformed JSON included, usage
 * with cached and reasoning tokens), it streams chunk by chunk, it takes an AbortSignal per request,
 * its typed errors carry status and headers, and it runs on Node 20 with no dependencies.
 *
 * Retries are ours, not the client's (`maxRetries: 0` there): the client sleeps through any
 * `Retry-After`, however long, and its sleep ignores the abort signal. Here 408, 409, 429, 5xx,
 * connection errors and timeouts are retried with exponential backoff, a `Retry-After` (or
 * `retry-after-ms`) is honoured up to `maxRetryAfterSeconds`, and an interrupt cancels a wait at once.
 */
import OpenAI from "openai";
import { resolveModel } from "./model.js";
import { LlmError, type ChatMessage, type ChatToolCall, type Llm, type LlmConfig, type LlmFactory, type LlmRequest, type LlmResponse, type LlmUsage } from "./types.js";

export interface OpenAiLlmOptions {
  /** Retries after the first attempt (default 4). */
  maxRetries?: number;
  /** Longest `Retry-After` honoured, in seconds (default 60); a longer one fails the call at once. */
  maxRetryAfterSeconds?: number;
  /** First backoff delay in milliseconds (default 500), doubled per retry up to `maxBackoffMs` (default 8,000). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Time limit of one attempt in milliseconds (default 600,000). */
  timeoutMs?: number;
  /** The fetch implementation (default the global one). */
  fetch?: typeof fetch;
}

type Params = OpenAI.Chat.Completions.ChatCompletionCreateParams;
type MessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** The runtime's default {@link LlmFactory}. */
export function openAiLlmFactory(options: OpenAiLlmOptions = {}): LlmFactory {
  return (config) => new OpenAiLlm(config, options);
}

class OpenAiLlm implements Llm {
  readonly model: string;
  private readonly client: OpenAI;
  private readonly apiModel: string;

  constructor(
    private readonly config: LlmConfig,
    private readonly options: OpenAiLlmOptions,
  ) {
    this.model = config.model;
    const resolved = resolveModel(config.model, config.baseUrl);
    this.apiModel = resolved.model;
    this.client = new OpenAI({
      // Local OpenAI-compatible servers often need no key; a real provider answers 401.
      apiKey: config.apiKey || "not-set",
      baseURL: resolved.baseUrl,
      maxRetries: 0,
      timeout: options.timeoutMs ?? 600_000,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async complete(request: LlmRequest): Promise<LlmResponse> {
    const started = performance.now();
    const maxRetries = this.options.maxRetries ?? 4;
    for (let attempt = 0; ; attempt++) {
      try {
        const response = this.config.stream ? await this.streamed(request) : await this.whole(request);
        return { ...response, latency_ms: performance.now() - started };
      } catch (error) {
        const failure = toLlmError(error, request.signal);
        const delay = attempt < maxRetries ? this.retryDelay(error, attempt) : undefined;
        if (delay === undefined) throw failure;
        await abortableSleep(delay, request.signal);
      }
    }
  }

  private params(request: LlmRequest): Omit<Params, "stream"> {
    return {
      model: this.apiModel,
      messages: request.messages.map(toMessageParam),
      ...(request.tools.length
        ? { tools: request.tools.map((tool) => ({ type: "function" as const, function: { name: tool.name, description: tool.description, parameters: tool.parameters } })) }
        : {}),
    };
  }

  private async whole(request: LlmRequest): Promise<Omit<LlmResponse, "latency_ms">> {
    const completion = await this.client.chat.completions.create({ ...this.params(request), stream: false }, { signal: request.signal });
    const message = completion.choices[0]?.message;
    const toolCalls: ChatToolCall[] = [];
    for (const call of message?.tool_calls ?? []) {
      if (call.type === "function") toolCalls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
    }
    return {
      id: completion.id,
      model: completion.model,
      content: message?.content ?? null,
      reasoning_content: reasoningOf(message),
      tool_calls: toolCalls,
      usage: usageOf(completion.usage),
    };
  }

  private async streamed(request: LlmRequest): Promise<Omit<LlmResponse, "latency_ms">> {
    const stream = await this.client.chat.completions.create(
      { ...this.params(request), stream: true, stream_options: { include_usage: true } },
      { signal: request.signal },
    );
    let id = "";
    let model = this.apiModel;
    let content: string | null = null;
    let reasoning: string | null = null;
    let usage: LlmUsage = usageOf(undefined);
    // Tool calls arrive in fragments keyed by index; arguments are concatenated as sent.
    const calls = new Map<number, ChatToolCall>();
    for await (const chunk of stream) {
      id ||= chunk.id;
      model = chunk.model || model;
      if (chunk.usage) usage = usageOf(chunk.usage);
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      const reasoningDelta = reasoningOf(delta);
      if (typeof delta.content === "string") content = (content ?? "") + delta.content;
      if (reasoningDelta !== null) reasoning = (reasoning ?? "") + reasoningDelta;
      if (typeof delta.content === "string" || reasoningDelta !== null) {
        request.onDelta?.({ content: typeof delta.content === "string" ? delta.content : null, reasoning_content: reasoningDelta });
      }
      for (const fragment of delta.tool_calls ?? []) {
        const call = calls.get(fragment.index) ?? { id: "", name: "", arguments: "" };
        if (fragment.id) call.id = fragment.id;
        if (fragment.function?.name) call.name += fragment.function.name;
        if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
        calls.set(fragment.index, call);
      }
    }
    const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
    return { id, model, content, reasoning_content: reasoning, tool_calls: toolCalls, usage };
  }

  /** Milliseconds to wait before retrying after `error`, or undefined when it is not retried. */
  private retryDelay(error: unknown, attempt: number): number | undefined {
    if (error instanceof OpenAI.APIUserAbortError) return undefined;
    const connection = error instanceof OpenAI.APIConnectionError;
    const status = error instanceof OpenAI.APIError ? error.status : undefined;
    const retryable = connection || status === 408 || status === 409 || status === 429 || (status !== undefined && status >= 500);
    if (!retryable) return undefined;
    const asked = error instanceof OpenAI.APIError ? retryAfterMs(error.headers) : undefined;
    if (asked !== undefined) return asked <= (this.options.maxRetryAfterSeconds ?? 60) * 1000 ? asked : undefined;
    const initial = this.options.initialBackoffMs ?? 500;
    const delay = Math.min(initial * 2 ** attempt, this.options.maxBackoffMs ?? 8_000);
    return delay * (1 - Math.random() * 0.25);
  }
}

/** What the server asked for in `retry-after-ms` or `Retry-After` (seconds or an HTTP date). */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const header = headers?.get("retry-after");
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(cancelled());
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled());
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

const cancelled = () => new LlmError("UserCancelledError", "The LLM call was cancelled.");

const CONTEXT_WINDOW = /context length|context window|maximum context|too many tokens|prompt is too long|input is too long/i;

/** The OpenHands name of a failure of the client (the `code` of a ConversationErrorEvent). */
export function toLlmError(error: unknown, signal?: AbortSignal): LlmError {
  if (error instanceof LlmError) return error;
  if (error instanceof OpenAI.APIUserAbortError || signal?.aborted) return cancelled();
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new LlmError("LLMTimeoutError", `Request timed out: ${error.message}`);
  if (error instanceof OpenAI.APIConnectionError) return new LlmError("APIConnectionError", `Connection error: ${error.cause instanceof Error ? error.cause.message : error.message}`);
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    const body = error.error as { message?: unknown } | undefined;
    const text = typeof body?.message === "string" ? body.message : error.message.replace(/^\d{3}\s*/, "");
    const detail = `Error code: ${status ?? "unknown"} - ${text}`;
    const code =
      status === 401 || status === 403
        ? "LLMAuthenticationError"
        : status === 429
          ? "LLMRateLimitError"
          : status === 404
            ? "NotFoundError"
            : status === 400 || status === 422
              ? CONTEXT_WINDOW.test(text)
                ? "LLMContextWindowExceedError"
                : "LLMBadRequestError"
              : status !== undefined && status >= 500
                ? "LLMServiceUnavailableError"
                : "APIError";
    return new LlmError(code, detail, status);
  }
  if (error instanceof Error) return new LlmError(error.name || "Error", error.message);
  return new LlmError("Error", String(error));
}

function toMessageParam(message: ChatMessage): MessageParam {
  switch (message.role) {
    case "assistant":
      // reasoning_content is not sent back: OpenAI rejects it and DeepSeek asks clients to drop it.
      return {
        role: "assistant",
        content: message.content,
        ...(message.tool_calls?.length
          ? { tool_calls: message.tool_calls.map((call) => ({ id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } })) }
          : {}),
      };
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
    default:
      return message;
  }
}

/** `reasoning_content`, which OpenAI-compatible reasoning models (DeepSeek, vLLM, LiteLLM) add. */
function reasoningOf(message: unknown): string | null {
  const value = (message as { reasoning_content?: unknown } | undefined)?.reasoning_content;
  return typeof value === "string" ? value : null;
}

function usageOf(usage: OpenAI.Completions.CompletionUsage | null | undefined): LlmUsage {
  const cost = (usage as { cost?: unknown } | null | undefined)?.cost;
  return {
    prompt_tokens: usage?.prompt_tokens ?? 0,
    completion_tokens: usage?.completion_tokens ?? 0,
    cache_read_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
    cache_write_tokens: 0,
    reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0,
    ...(typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? { cost } : {}),
  };
}
