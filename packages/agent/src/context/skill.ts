/**
 * Skills as OpenHands models them (software-agent-sdk v1.43.1, `openhands-sdk/openhands/sdk/skills/
 * skill.py` and `trigger.py`): a name and a text, and how the text reaches the model:
 * - no trigger (AGENTS.md, a repository skill): always, in the system prompt's `<REPO_CONTEXT>`;
 * - keywords (`triggers:`) or a task (`inputs:`): appended to the user message that names one;
 * - paths (`paths:`): a rule for files the agent touches (loaded, never injected here);
 * - AgentSkills format (`SKILL.md`): listed in `<available_skills>`, injected too when triggered.
 */

export type SkillTrigger =
  | { type: "keyword"; keywords: string[] }
  | { type: "task"; triggers: string[] }
  | { type: "path"; paths: string[] };

export interface Skill {
  name: string;
  content: string;
  trigger?: SkillTrigger;
  /** The file it was read from (absolute, as the model sees the workspace). */
  source?: string;
  /** What it does (AgentSkills' `description`), at most {@link MAX_DESCRIPTION_LENGTH} characters. */
  description?: string;
  /** Read from a `SKILL.md` (AgentSkills standard). */
  agentSkillsFormat: boolean;
  /** Activated by its triggers only, never listed for the model to invoke (path rules always). */
  disableModelInvocation: boolean;
}

/** AgentSkills' bound on a description (`Skill.MAX_DESCRIPTION_LENGTH`). */
export const MAX_DESCRIPTION_LENGTH = 1024;

/**
 * True when `keyword` occurs in `message` (lower-cased) as a whole token: bounded by characters
 * other than ASCII letters and digits, so `git` does not fire on `github` (`_keyword_matches`).
 */
function keywordMatches(keyword: string, messageLower: string): boolean {
  const needle = keyword.toLowerCase();
  if (!needle) return false;
  for (let index = messageLower.indexOf(needle); index !== -1; index = messageLower.indexOf(needle, index + 1)) {
    const before = messageLower[index - 1];
    const after = messageLower[index + needle.length];
    if (!isAlphanumeric(before) && !isAlphanumeric(after)) return true;
  }
  return false;
}

const isAlphanumeric = (char: string | undefined) => char !== undefined && /[a-z0-9]/.test(char);

/** The skill's first keyword found in `message`, or undefined (`Skill.match_trigger`). */
export function matchTrigger(skill: Skill, message: string): string | undefined {
  const keywords = skill.trigger?.type === "keyword" ? skill.trigger.keywords : skill.trigger?.type === "task" ? skill.trigger.triggers : [];
  const lower = message.toLowerCase();
  return keywords.find((keyword) => keywordMatches(keyword, lower));
}

/**
 * Repository skills (their text always in the prompt) and the skills listed as available
 * (`AgentContext._partition_skills`): AgentSkills-format and triggered skills are listed unless
 * only their triggers may activate them; the rest are repository skills.
 */
export function partitionSkills(skills: readonly Skill[]): { repo: Skill[]; available: Skill[] } {
  const repo: Skill[] = [];
  const available: Skill[] = [];
  for (const skill of skills) {
    if (skill.agentSkillsFormat || skill.trigger) {
      if (!skill.disableModelInvocation) available.push(skill);
    } else {
      repo.push(skill);
    }
  }
  return { repo, available };
}

/**
 * Drops the vendor files meant for another model family: `claude` (CLAUDE.md) only for Anthropic's
 * models, `gemini` (GEMINI.md) only for Google's (`AgentContext._resolve_dynamic_data`). An unknown
 * family keeps both.
 */
export function gateByModelFamily(skills: readonly Skill[], family: string | undefined): Skill[] {
  const lower = (family ?? "").toLowerCase();
  if (!lower) return [...skills];
  return skills.filter((skill) => {
    const name = skill.name.toLowerCase();
    if (name === "claude") return lower.includes("anthropic") || lower.includes("claude");
    if (name === "gemini") return lower.includes("gemini") || lower.includes("google_gemini");
    return true;
  });
}

/** `xml.sax.saxutils.escape`: `&`, `<` and `>`. */
const xmlEscape = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/**
 * The `<available_skills>` block (`skills.to_prompt`): each skill's name and description (or, without
 * one, its first line of text that is not a heading, with a note of how much more there is).
 */
export function availableSkillsPrompt(skills: readonly Skill[], maxDescriptionLength = MAX_DESCRIPTION_LENGTH): string {
  if (skills.length === 0) return "<available_skills>\n  no available skills\n</available_skills>";
  const lines = ["<available_skills>"];
  for (const skill of skills) {
    let description = skill.description;
    let truncated = 0;
    if (!description) {
      let before = 0;
      for (const line of skill.content.split("\n")) {
        const stripped = line.trim();
        if (!stripped || stripped.startsWith("#")) {
          before += line.length + 1;
          continue;
        }
        description = stripped;
        truncated = Math.max(0, skill.content.length - (before + line.length));
        break;
      }
    }
    description ??= "";
    if (description.length > maxDescriptionLength) {
      truncated += description.length - maxDescriptionLength;
      description = description.slice(0, maxDescriptionLength);
    }
    if (truncated > 0) description += `... [${truncated} characters truncated. Call invoke_skill(name="${skill.name}") to load the full skill]`;
    lines.push("  <skill>", `    <name>${xmlEscape(skill.name.trim())}</name>`, `    <description>${xmlEscape(description.trim())}</description>`, "  </skill>");
  }
  lines.push("</available_skills>");
  return lines.join("\n");
}
