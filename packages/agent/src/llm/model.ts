/**
 * `llm_model` in LiteLLM's `provider/model` convention, resolved to an OpenAI-compatible endpoint.
 *
 * Every provider below documents an OpenAI-compatible chat-completions endpoint, so one client
 * speaks to all of them. `llm_base_url`, when set, wins: `openai/<any model>` + a base URL reaches
 * any OpenAI-compatible server (vLLM, Ollama, LiteLLM proxy, LM Studio…). A name without a provider
 * is an OpenAI model, as LiteLLM reads it.
 */
import { LlmError } from "./types.js";

/** Providers with a known OpenAI-compatible endpoint. */
export const PROVIDER_BASE_URLS: Readonly<Record<string, string>> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1/",
  openrouter: "https://openrouter.ai/api/v1",
  deepseek: "https://api.deepseek.com/v1",
  groq: "https://api.groq.com/openai/v1",
  mistral: "https://api.mistral.ai/v1",
  gemini: "https://generativelanguage.googleapis.com/v1beta/openai/",
  xai: "https://api.x.ai/v1",
};

export interface ResolvedModel {
  /** The provider prefix (`openai` when none was given). */
  provider: string;
  /** The model name sent to the endpoint (everything after the first `/`). */
  model: string;
  /** The endpoint's base URL. */
  baseUrl: string;
}

/**
 * The endpoint and model name for `llm_model`.
 * @throws LlmError `LLMBadRequestError` for an empty model or an unknown provider without base URL
 */
export function resolveModel(llmModel: string | null | undefined, baseUrl?: string | null): ResolvedModel {
  const name = llmModel?.trim();
  if (!name) throw new LlmError("LLMBadRequestError", "No LLM configured: set llm_model in the settings (for example openai/gpt-4o).");
  const slash = name.indexOf("/");
  const provider = slash > 0 ? name.slice(0, slash) : "openai";
  const model = slash > 0 ? name.slice(slash + 1) : name;
  if (!model) throw new LlmError("LLMBadRequestError", `llm_model "${name}" names no model after the provider.`);
  const url = baseUrl?.trim() || PROVIDER_BASE_URLS[provider];
  if (!url) {
    throw new LlmError(
      "LLMBadRequestError",
      `Unknown LLM provider "${provider}" in llm_model "${name}": set llm_base_url to its OpenAI-compatible endpoint, or use one of ${Object.keys(PROVIDER_BASE_URLS).join(", ")}.`,
    );
  }
  return { provider, model, baseUrl: url };
}

/**
 * Context windows (max input tokens, as LiteLLM's model map lists them) of common models, matched
 * by prefix of the model's own name (the part after the last `/`). OpenHands learns a model's
 * window from LiteLLM's model info (openhands-sdk/openhands/sdk/llm/llm.py
 * `effective_max_input_tokens`); it bounds the condenser's tokens and is `context_window` in the
 * stats. Pass `contextWindows` to the runtime for other models (a local model's configured window).
 */
export const DEFAULT_CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  "gpt-4o": 128_000,
  "gpt-4.1": 1_047_576,
  "gpt-5": 272_000,
  o1: 200_000,
  "o1-mini": 128_000,
  o3: 200_000,
  "o4-mini": 200_000,
  "claude-3-5": 200_000,
  "claude-3-7": 200_000,
  "claude-sonnet-4": 200_000,
  "claude-opus-4": 200_000,
  "claude-haiku-4": 200_000,
  "gemini-2.5": 1_048_576,
};

/** The context window of `llmModel` (`provider/model`): the entry with the longest prefix of its name, or undefined. */
export function contextWindowOf(llmModel: string | null | undefined, windows: Readonly<Record<string, number>>): number | undefined {
  const name = llmModel?.trim().split("/").at(-1) ?? "";
  let best: string | undefined;
  for (const prefix of Object.keys(windows)) {
    if (name.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix;
  }
  return best === undefined ? undefined : windows[best];
}
