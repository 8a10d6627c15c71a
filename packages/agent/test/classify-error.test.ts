import { describe, expect, it } from "vitest";
import { classifyError } from "../src/index.js";

const AUTH = ["auth", false, "settings"];
const QUOTA = ["quota", false, "settings"];
const RATE = ["rate_limit", true, "retry"];
const CONFIG = ["config", false, "settings"];
const TRANSIENT = ["transient", true, "retry"];
const AGENT_RETRY = ["agent_action", true, "retry"];
const AGENT_STOP = ["agent_action", false, "none"];
const INTERNAL = ["internal", false, "none"];
const UNKNOWN = ["unknown", false, "none"];

// openhands-versions.md §1.3, row by row: [code, detail, expected].
const TABLE: Array<[string, string, unknown[]]> = [
  ["LLMAuthenticationError", "anything", AUTH],
  ["ACPAuthRequired", "", AUTH],
  ["LLMRateLimitError", "", RATE],
  ["MaxBudgetReached", "", QUOTA],
  ["LLMBadRequestError", "", CONFIG],
  ["ACPInitError", "", CONFIG],
  ["ACPSpawnError", "", CONFIG],
  ["ACPPromptError", "", CONFIG],
  ["NotFoundError", "", CONFIG],
  ["LibTmuxException", "", CONFIG],
  ["LLMContextWindowExceedError", "", AGENT_RETRY],
  ["LLMMalformedConversationHistoryError", "", AGENT_RETRY],
  ["MaxIterationsReached", "Agent reached maximum iterations limit (500).", AGENT_STOP],
  ["ConversationOwnershipLostError", "", AGENT_STOP],
  ["KeyError", "", INTERNAL],
  ["AssertionError", "", INTERNAL],
  ["PydanticSerializationError", "", INTERNAL],
  ["AttributeError", "", INTERNAL],
  ["TypeError", "", INTERNAL],
  // codes win over phrases
  ["MaxIterationsReached", "rate limit", AGENT_STOP],
  // phrases, case-folded
  ["RuntimeError", "Invalid API key supplied", AUTH],
  ["RuntimeError", "401 Unauthorized", AUTH],
  ["RuntimeError", "Error code: 401 - nope", AUTH],
  ["RuntimeError", "You exceeded your DAILY QUOTA", QUOTA],
  ["RuntimeError", "Insufficient balance", QUOTA],
  ["RuntimeError", "Budget has been exceeded!", QUOTA],
  ["RuntimeError", "Rate limit reached for gpt-4o", RATE],
  ["RuntimeError", "HTTP 429", RATE],
  ["RuntimeError", "model not found: gpt-9", CONFIG],
  ["RuntimeError", "Invalid params: temperature", CONFIG],
  ["RuntimeError", "Request timeout", TRANSIENT],
  ["RuntimeError", "Connection error.", TRANSIENT],
  ["RuntimeError", "502 Bad Gateway", TRANSIENT],
  ["RuntimeError", "Error code: 503 - overloaded", TRANSIENT],
  ["RuntimeError", "duplicate tool names in request", INTERNAL],
  ["RuntimeError", "surrogates not allowed", INTERNAL],
  // auth phrases come before the rate-limit ones
  ["RuntimeError", "unauthorized (rate limit)", AUTH],
  // generic wrappers: transient when no phrase decided
  ["LLMTimeoutError", "took too long", TRANSIENT],
  ["HTTPStatusError", "", TRANSIENT],
  ["OpenAIError", "", TRANSIENT],
  ["APIError", "", TRANSIENT],
  ["LLMServiceUnavailableError", "", TRANSIENT],
  ["APIConnectionError", "", TRANSIENT],
  // a wrapper with an auth phrase is auth
  ["APIError", "Invalid API key", AUTH],
  ["ValueError", "something else", UNKNOWN],
  ["", "", UNKNOWN],
];

describe("classifyError (classify_error of the SDK)", () => {
  it.each(TABLE)("%s / %j", (code, detail, [kind, retryable, action]) => {
    expect(classifyError(code, detail)).toEqual({ kind, retryable, user_action: action, error_id: null });
  });
});
