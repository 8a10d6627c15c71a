/**
 * Token usage and cost per LLM use, in the `stats` shape of OpenHands (`openhands-versions.md` §3.3):
 * `{usage_to_metrics: {<usage id>: MetricsSnapshot}}`. The per-field ConversationStateUpdateEvent
 * `stats` carries the snapshot form (no per-call lists), which is what this module keeps, so that a
 * restarted conversation resumes its totals (and its budget) from the last recorded update.
 */
import type { LlmUsage } from "./types.js";

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Cached prompt tokens read (defaults to `input`). */
  cacheRead?: number;
  /** Prompt tokens written to the cache (defaults to `input`). */
  cacheWrite?: number;
}

/**
 * List prices (USD per million tokens, as published by OpenAI and Anthropic in 2025) of common
 * models, matched by prefix of the model name without provider. Pass `pricing` to the runtime for
 * other models or newer prices; a provider that reports `usage.cost` (OpenRouter, LiteLLM proxies)
 * is taken at its word. A model without a price costs 0, so `max_budget_per_task` cannot stop it: the
 * runtime warns once when a budget is set for such a model.
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  "gpt-4o-mini": { input: 0.15, output: 0.6, cacheRead: 0.075 },
  "gpt-4o": { input: 2.5, output: 10, cacheRead: 1.25 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6, cacheRead: 0.1 },
  "gpt-4.1": { input: 2, output: 8, cacheRead: 0.5 },
  "claude-sonnet-4": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  "claude-haiku-4-5": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  "claude-opus-4": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
};

/** The price of `model` (name without provider): the entry with the longest matching prefix. */
export function priceOf(model: string, prices: Readonly<Record<string, ModelPrice>>): ModelPrice | undefined {
  let best: string | undefined;
  for (const prefix of Object.keys(prices)) {
    if (model.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix;
  }
  return best === undefined ? undefined : prices[best];
}

/** Cost in USD of one completion. */
export function costOf(usage: LlmUsage, price: ModelPrice | undefined): number {
  if (usage.cost !== undefined) return usage.cost;
  if (!price) return 0;
  const uncached = Math.max(0, usage.prompt_tokens - usage.cache_read_tokens - usage.cache_write_tokens);
  const perToken =
    uncached * price.input +
    usage.cache_read_tokens * (price.cacheRead ?? price.input) +
    usage.cache_write_tokens * (price.cacheWrite ?? price.input) +
    usage.completion_tokens * price.output;
  return perToken / 1_000_000;
}

/** OpenHands' TokenUsage. */
export interface TokenUsage {
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  context_window: number;
  per_turn_token: number;
  response_id: string;
}

/** OpenHands' MetricsSnapshot. */
export interface MetricsSnapshot {
  model_name: string;
  accumulated_cost: number;
  max_budget_per_task: number | null;
  accumulated_token_usage: TokenUsage;
}

/** The `stats` value of a ConversationStateUpdateEvent (snapshot form). */
export interface ConversationStatsSnapshot {
  usage_to_metrics: Record<string, MetricsSnapshot>;
}

const emptyUsage = (model: string): TokenUsage => ({
  model,
  prompt_tokens: 0,
  completion_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  context_window: 0,
  per_turn_token: 0,
  response_id: "",
});

const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0);

/** Accumulated usage and cost of one conversation, per usage id. */
export class ConversationStats {
  private readonly metrics = new Map<string, MetricsSnapshot>();

  /** Totals as a recorded `stats` value left them (unreadable parts count as zero). */
  static fromSnapshot(value: unknown): ConversationStats {
    const stats = new ConversationStats();
    const byUsage = (value as ConversationStatsSnapshot | undefined)?.usage_to_metrics;
    if (typeof byUsage !== "object" || byUsage === null) return stats;
    for (const [usageId, snapshot] of Object.entries(byUsage)) {
      if (typeof snapshot !== "object" || snapshot === null) continue;
      const usage: Partial<TokenUsage> = snapshot.accumulated_token_usage ?? {};
      const model = typeof snapshot.model_name === "string" ? snapshot.model_name : "default";
      stats.metrics.set(usageId, {
        model_name: model,
        accumulated_cost: count(snapshot.accumulated_cost),
        max_budget_per_task: typeof snapshot.max_budget_per_task === "number" ? snapshot.max_budget_per_task : null,
        accumulated_token_usage: {
          ...emptyUsage(typeof usage.model === "string" ? usage.model : model),
          prompt_tokens: count(usage.prompt_tokens),
          completion_tokens: count(usage.completion_tokens),
          cache_read_tokens: count(usage.cache_read_tokens),
          cache_write_tokens: count(usage.cache_write_tokens),
          reasoning_tokens: count(usage.reasoning_tokens),
          context_window: count(usage.context_window),
          per_turn_token: count(usage.per_turn_token),
        },
      });
    }
    return stats;
  }

  /**
   * Adds one completion to `usageId`'s totals. `contextWindow`: the model's max input tokens (0 when
   * unknown); the totals keep the largest seen, as OpenHands' TokenUsage adds them.
   */
  add(usageId: string, model: string, usage: LlmUsage, cost: number, budget: number | null, contextWindow = 0): void {
    const current = this.metrics.get(usageId) ?? {
      model_name: model,
      accumulated_cost: 0,
      max_budget_per_task: budget,
      accumulated_token_usage: emptyUsage(model),
    };
    const total = current.accumulated_token_usage;
    this.metrics.set(usageId, {
      model_name: model,
      accumulated_cost: current.accumulated_cost + cost,
      max_budget_per_task: budget,
      accumulated_token_usage: {
        ...total,
        model,
        prompt_tokens: total.prompt_tokens + usage.prompt_tokens,
        completion_tokens: total.completion_tokens + usage.completion_tokens,
        cache_read_tokens: total.cache_read_tokens + usage.cache_read_tokens,
        cache_write_tokens: total.cache_write_tokens + usage.cache_write_tokens,
        reasoning_tokens: total.reasoning_tokens + usage.reasoning_tokens,
        context_window: Math.max(total.context_window, contextWindow),
        per_turn_token: usage.prompt_tokens + usage.completion_tokens,
      },
    });
  }

  /** Cost of every use together, in USD. */
  get totalCost(): number {
    let total = 0;
    for (const metrics of this.metrics.values()) total += metrics.accumulated_cost;
    return total;
  }

  snapshot(): ConversationStatsSnapshot {
    return { usage_to_metrics: Object.fromEntries([...this.metrics].map(([id, metrics]) => [id, structuredClone(metrics)])) };
  }
}
