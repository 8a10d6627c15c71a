/**
 * The system prompt as OpenHands assembles it (software-agent-sdk v1.43.1, `context/prompts/`:
 * `presets.py` for the sections and their order, `registry.py` for the assembly,
 * `sections/static.py` for the guards): each section that applies renders its text, blank ones
 * are dropped, and the rest are joined by a blank line, in two blocks: the static prompt
 * (`SystemPromptEvent.system_prompt`, the same for every conversation of a model) and the dynamic
 * context (`SystemPromptEvent.dynamic_context`, this conversation's repository context, skills,
 * secrets and date).
 *
 * The SDK's Windows wording (`terminal` → `execute_powershell`) is left out: commands run on Linux.
 */
import { DYNAMIC_SECTIONS, type DynamicPromptInputs } from "./dynamic-sections.js";
import { modelPromptSpec } from "./model-prompt-spec.js";
import * as text from "./static-sections.js";

export type { DynamicPromptInputs } from "./dynamic-sections.js";

/** What shapes the static prompt: the agent's settings as OpenHands' `system_prompt_kwargs` carry them. */
interface StaticPromptOptions {
  /** The model (LiteLLM's `provider/model`): its family and variant select the `<IMPORTANT>` guidance. */
  model: string;
  /** The model's canonical name, when the provider's differs. */
  canonicalModel?: string;
  /** Replaces the default identity line (OpenHands reads it from `~/.openhands/SOUL.md`). */
  soul?: string;
  /** Persistent memory (`load_memory`): the two-tier `<MEMORY>` guidance instead of AGENTS.md's. */
  memoryEnabled?: boolean;
  /** `<SECURITY_RISK_ASSESSMENT>`; OpenHands' Agent sets `llm_security_analyzer` true unless told otherwise. */
  llmSecurityAnalyzer?: boolean;
  /** The risk tiers of a CLI (default, as the template's `cli_mode | default(true)`) or of a sandbox. */
  cliMode?: boolean;
  /** `<BROWSER_TOOLS>`, when a browser tool is offered. */
  enableBrowser?: boolean;
  /** `undefined`: the built-in `<SECURITY>` policy; a string: a custom policy inside `<SECURITY>`; `null`: none. */
  securityPolicy?: string | null;
}

type StaticSection = (options: StaticPromptOptions) => string | undefined;

const always =
  (body: string): StaticSection =>
  () =>
    body;

/** The static sections of the `default` preset, in OpenHands' order. */
const STATIC_SECTIONS: readonly StaticSection[] = [
  (options) => `<SOUL>\n${options.soul || text.DEFAULT_SOUL}\n</SOUL>`,
  always(text.ROLE),
  (options) => `<MEMORY>\n${options.memoryEnabled ? text.TWO_TIER_MEMORY_GUIDANCE : text.AGENTS_MD_GUIDANCE}\n</MEMORY>`,
  always(text.EFFICIENCY),
  always(text.FILE_SYSTEM),
  always(text.CODE_QUALITY),
  always(text.VERSION_CONTROL),
  always(text.PULL_REQUESTS),
  always(text.PROBLEM_SOLVING),
  always(text.SELF_DOCUMENTATION),
  (options) => {
    if (options.securityPolicy === null) return undefined;
    return options.securityPolicy === undefined ? text.SECURITY : `<SECURITY>\n\n${options.securityPolicy}\n\n</SECURITY>`;
  },
  (options) => {
    if (!(options.llmSecurityAnalyzer ?? true)) return undefined;
    const tiers = (options.cliMode ?? true) ? text.RISK_TIERS_CLI : text.RISK_TIERS_SANDBOX;
    return `${text.RISK_ASSESSMENT_HEAD}${tiers}${text.RISK_ASSESSMENT_TAIL}`;
  },
  (options) => (options.enableBrowser ? text.BROWSER : undefined),
  always(text.EXTERNAL_SERVICES),
  always(text.ENVIRONMENT_SETUP),
  always(text.TROUBLESHOOTING),
  always(text.PROCESS_MANAGEMENT),
  (options) => {
    const { family, variant } = modelPromptSpec(options.model, options.canonicalModel);
    if (!family) return undefined;
    const body = `${text.IMPORTANT_BY_FAMILY[family] ?? ""}${(variant && text.IMPORTANT_BY_VARIANT[variant]) || ""}`.trim();
    return body ? `<IMPORTANT>\n${body}\n</IMPORTANT>` : undefined;
  },
];

/** Sections as the registry joins them: trimmed, blank ones dropped, a blank line between. */
function join(rendered: ReadonlyArray<string | undefined>): string {
  return rendered
    .map((section) => section?.trim())
    .filter((section): section is string => !!section)
    .join("\n\n");
}

/** The static system prompt (`AgentBase.static_system_message` of the `default` preset). */
export function staticSystemPrompt(options: StaticPromptOptions): string {
  return join(STATIC_SECTIONS.map((section) => section(options)));
}

/** The dynamic context (`AgentBase.get_dynamic_context`), or null when no section applies. */
export function dynamicSystemPrompt(inputs: DynamicPromptInputs): string | null {
  return join(DYNAMIC_SECTIONS.map((section) => section(inputs))) || null;
}

/** A date as OpenHands writes it in `<CURRENT_DATETIME>`: local wall-clock time to the minute. */
export function promptDateTime(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
