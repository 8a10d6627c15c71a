/**
 * `classify_error(code, detail)` of the OpenHands SDK (v1.40.0, `sdk:event/error_classification.py`,
 * unchanged at main; `openhands-versions.md` §1.3), as a pure function: what a client needs to tell
 * the user after a ConversationErrorEvent.
 *
 * The rules apply in order: exact codes first, then phrases in the case-folded detail, then generic
 * wrapper codes, else unknown. The reference table lists its phrases by example ("…"); the lists
 * below hold those examples and complete them with the wording the providers this package talks to
 * actually send (OpenAI, Anthropic, OpenAI-compatible servers), marked `ours`.
 */
import type { ErrorClassification } from "@acs-toolkit/schema";

type FailureKind = ErrorClassification["kind"];
type FailureAction = NonNullable<ErrorClassification["user_action"]>;

interface Outcome {
  kind: FailureKind;
  retryable: boolean;
  user_action: FailureAction;
}

const AUTH: Outcome = { kind: "auth", retryable: false, user_action: "settings" };
const QUOTA: Outcome = { kind: "quota", retryable: false, user_action: "settings" };
const RATE_LIMIT: Outcome = { kind: "rate_limit", retryable: true, user_action: "retry" };
const CONFIG: Outcome = { kind: "config", retryable: false, user_action: "settings" };
const TRANSIENT: Outcome = { kind: "transient", retryable: true, user_action: "retry" };
const AGENT_RETRY: Outcome = { kind: "agent_action", retryable: true, user_action: "retry" };
const AGENT_STOP: Outcome = { kind: "agent_action", retryable: false, user_action: "none" };
const INTERNAL: Outcome = { kind: "internal", retryable: false, user_action: "none" };
const UNKNOWN: Outcome = { kind: "unknown", retryable: false, user_action: "none" };

/** Exact codes, checked first. */
const BY_CODE: ReadonlyArray<readonly [readonly string[], Outcome]> = [
  [["LLMAuthenticationError", "ACPAuthRequired"], AUTH],
  [["LLMRateLimitError"], RATE_LIMIT],
  [["MaxBudgetReached"], QUOTA],
  [["LLMBadRequestError", "ACPInitError", "ACPSpawnError", "ACPPromptError", "NotFoundError", "LibTmuxException"], CONFIG],
  [["LLMContextWindowExceedError", "LLMMalformedConversationHistoryError"], AGENT_RETRY],
  [["MaxIterationsReached", "ConversationOwnershipLostError"], AGENT_STOP],
  [["KeyError", "AssertionError", "PydanticSerializationError", "AttributeError", "TypeError"], INTERNAL],
];

/** Phrases of the case-folded detail, checked in this order after the codes. */
const BY_PHRASE: ReadonlyArray<readonly [readonly (string | RegExp)[], Outcome]> = [
  [
    [
      "invalid api key",
      "unauthorized",
      "error code: 401",
      // ours
      "incorrect api key",
      "invalid x-api-key",
      "authentication",
      "api key not valid",
      "no api key",
      "permission denied",
      "error code: 403",
    ],
    AUTH,
  ],
  [
    [
      "daily quota",
      "insufficient balance",
      "budget has been exceeded",
      // ours
      "insufficient_quota",
      "exceeded your current quota",
      "credit balance is too low",
      "billing",
      "maximum budget",
    ],
    QUOTA,
  ],
  [["rate limit", /\b429\b/, /* ours */ "rate_limit", "too many requests"], RATE_LIMIT],
  [
    [
      "model not found",
      "invalid params",
      // ours
      "does not exist",
      "unknown llm provider",
      "no llm configured",
      "unsupported parameter",
      "invalid_request_error",
    ],
    CONFIG,
  ],
  [
    [
      "timeout",
      "connection error",
      "bad gateway",
      "error code: 5",
      // ours
      "timed out",
      "service unavailable",
      "overloaded",
      "econnreset",
      "econnrefused",
      "socket hang up",
      "internal server error",
    ],
    TRANSIENT,
  ],
  [["duplicate tool names", "surrogates not allowed", /* ours */ "maximum call stack"], INTERNAL],
];

/** Codes of exceptions that only wrap another failure: transient unless a phrase said otherwise. */
const GENERIC_WRAPPERS = new Set([
  "LLMTimeoutError",
  "HTTPStatusError",
  "OpenAIError",
  "APIError",
  // ours: the rest of the LLM client's wrappers
  "LLMServiceUnavailableError",
  "LLMNoResponseError",
  "APIConnectionError",
  "APIConnectionTimeoutError",
  "InternalServerError",
  "ServiceUnavailableError",
]);

const matches = (text: string, phrase: string | RegExp) => (typeof phrase === "string" ? text.includes(phrase) : phrase.test(text));

/**
 * The classification OpenHands gives a ConversationErrorEvent with this `code` and `detail`.
 *
 * @example
 * classifyError("LLMRateLimitError", "429 Too Many Requests")
 * // → { kind: "rate_limit", retryable: true, user_action: "retry", error_id: null }
 */
export function classifyError(code: string, detail: string): ErrorClassification {
  const outcome = outcomeOf(code, detail);
  return { ...outcome, error_id: null };
}

function outcomeOf(code: string, detail: string): Outcome {
  for (const [codes, outcome] of BY_CODE) if (codes.includes(code)) return outcome;
  const text = detail.toLowerCase();
  for (const [phrases, outcome] of BY_PHRASE) if (phrases.some((phrase) => matches(text, phrase))) return outcome;
  if (GENERIC_WRAPPERS.has(code)) return TRANSIENT;
  return UNKNOWN;
}

/**
 * The classifications OpenHands gives an AgentErrorEvent, which describes where an error surfaced
 * (the agent scaffold), not why (openhands-sdk/openhands/sdk/event/error_classification.py and
 * event/llm_convertible/observation.py): an expected failure the agent can correct (an unknown
 * tool, arguments that do not validate, a tool that refuses the action) is {@link AGENT_OUTCOME};
 * an unexpected exception and a tool cut off by a restart are {@link INTERNAL_FAILURE}; an event
 * recorded without one reads {@link UNCLASSIFIED}.
 */
export const AGENT_OUTCOME: ErrorClassification = { kind: "agent_action", retryable: true, user_action: "retry", error_id: null };
export const INTERNAL_FAILURE: ErrorClassification = { kind: "internal", retryable: false, user_action: "none", error_id: null };
export const UNCLASSIFIED: ErrorClassification = { kind: "unknown", retryable: false, user_action: "none", error_id: null };
