/**
 * The model family and variant the system prompt is tailored to, detected from the model name as
 * OpenHands does (`openhands-sdk/openhands/sdk/llm/utils/model_prompt_spec.py`, v1.43.1): the first
 * family whose pattern occurs in the lower-cased name, then the first variant of that family.
 */

interface ModelPromptSpec {
  family: string | undefined;
  variant: string | undefined;
}

/** Family → substrings of the model name, in OpenHands' order (the first match wins). */
const FAMILY_PATTERNS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ["openai_gpt", ["gpt-", "o1", "o3", "o4"]],
  ["anthropic_claude", ["claude"]],
  ["google_gemini", ["gemini"]],
  ["meta_llama", ["llama"]],
  ["mistral", ["mistral"]],
  ["deepseek", ["deepseek"]],
  ["alibaba_qwen", ["qwen"]],
];

/** Variants of a family, the most specific first. */
const VARIANT_PATTERNS: Readonly<Record<string, ReadonlyArray<readonly [string, readonly string[]]>>> = {
  openai_gpt: [
    ["gpt-5-codex", ["gpt-5-codex", "gpt-5.1-codex", "gpt-5.2-codex", "gpt-5.3-codex", "gpt-5.5-codex"]],
    ["gpt-5", ["gpt-5", "gpt-5.1", "gpt-5.2", "gpt-5.4", "gpt-5.5"]],
  ],
};

const normalize = (name: string | undefined) => (name ?? "").trim().toLowerCase();

function matchFamily(name: string | undefined): string | undefined {
  const normalized = normalize(name);
  if (!normalized) return undefined;
  return FAMILY_PATTERNS.find(([, patterns]) => patterns.some((pattern) => normalized.includes(pattern)))?.[0];
}

/** The family and variant of `model` (LiteLLM's `provider/model`), or of its canonical name. */
export function modelPromptSpec(model: string, canonicalName?: string): ModelPromptSpec {
  const family = matchFamily(model) ?? (canonicalName ? matchFamily(canonicalName) : undefined);
  let variant: string | undefined;
  const candidate = normalize(canonicalName) || normalize(model);
  if (family && candidate) {
    variant = VARIANT_PATTERNS[family]?.find(([, substrings]) => substrings.some((substring) => candidate.includes(substring)))?.[0];
  }
  return { family, variant };
}
