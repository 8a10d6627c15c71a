/**
 * A skill from the text of one file, as OpenHands' `Skill.load` makes it (software-agent-sdk
 * v1.43.1, `openhands-sdk/openhands/sdk/skills/skill.py`):
 * - `AGENTS.md`, `AGENT.md`, `CLAUDE.md`, `GEMINI.md`, `.cursorrules` (any case): the whole text,
 *   front matter included, always active, named `agents`, `claude`, `gemini` or `cursorrules`;
 * - `SKILL.md` (AgentSkills): named by its front matter or its folder, which must agree and be a
 *   valid AgentSkills name;
 * - any other `.md`: named by its front matter or its path below the skills folder (`sub/name`).
 *
 * Front matter decides the trigger: `paths` (a rule), else `inputs` (a task, also triggered by
 * `/name`), else `triggers` (keywords), else none (always active).
 */
import path from "node:path";
import { parseFrontMatter } from "./frontmatter.js";
import { MAX_DESCRIPTION_LENGTH, type Skill, type SkillTrigger } from "./skill.js";

/** Instruction files of other agents, by lower-cased file name, and the skill name each gets. */
export const THIRD_PARTY_SKILL_NAMES: Readonly<Record<string, string>> = {
  ".cursorrules": "cursorrules",
  "agents.md": "agents",
  "agent.md": "agents",
  "claude.md": "claude",
  "gemini.md": "gemini",
};

/** A file that is not a valid skill (OpenHands' `SkillValidationError`): it is skipped with a warning. */
class SkillFileError extends Error {
  override readonly name = "SkillFileError";
}

const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const MISSING_VARIABLES_PROMPT = "\n\nIf the user didn't provide any of these variables, ask the user to provide them first before the agent can proceed with the task.";
const DESCRIPTION_TRUNCATE_NOTICE = (source: string) =>
  `<response clipped><NOTE>Due to the max output limit, only part of the full description is shown. You can view the complete skill content at ${source}.</NOTE>`;

/** A value as Python's `str()` writes it (front matter names may be numbers or booleans). */
function pythonString(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  return String(value);
}

/** Pydantic's lax boolean. @throws SkillFileError for anything else */
function laxBoolean(value: unknown, field: string): boolean {
  if (typeof value === "boolean") return value;
  if (value === 0 || value === 1) return value === 1;
  if (typeof value === "string") {
    const lower = value.trim().toLowerCase();
    if (["true", "t", "yes", "y", "on", "1"].includes(lower)) return true;
    if (["false", "f", "no", "n", "off", "0"].includes(lower)) return false;
  }
  throw new SkillFileError(`${field} must be a boolean`);
}

function stringList(value: unknown, message: string): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) throw new SkillFileError(message);
  return [...value];
}

/** `paths`: a comma-separated string or a list, blanks dropped (`Skill._parse_paths`). */
function parsePaths(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === "string" ? value.split(",") : Array.isArray(value) ? value : undefined;
  if (!list) throw new SkillFileError("paths must be a string or list");
  const paths = list.map((item) => pythonString(item).trim()).filter(Boolean);
  return paths.length ? paths : undefined;
}

/** `maybe_truncate`: head and tail kept around the notice, `limit` characters in all. */
function truncateMiddle(text: string, limit: number, notice: string): string {
  if (text.length <= limit) return text;
  if (notice.length >= limit) return notice.slice(0, limit);
  const available = limit - notice.length;
  const head = Math.ceil(available / 2);
  const tail = available - head;
  return text.slice(0, head) + notice + (tail > 0 ? text.slice(-tail) : "");
}

/** The skill a file's front matter describes (`Skill._create_skill_from_metadata`). */
function fromMetadata(name: string, content: string, source: string, metadata: Record<string, unknown>, agentSkillsFormat: boolean): Skill {
  const description = metadata.description;
  if (description !== undefined && description !== null && typeof description !== "string") throw new SkillFileError("description must be a string");
  const disable = metadata["disable-model-invocation"] ?? metadata.disable_model_invocation;
  let disableModelInvocation = disable === undefined || disable === null ? false : laxBoolean(disable, "disable-model-invocation");
  const keywords = stringList(metadata.triggers ?? [], "Triggers must be a list of strings");
  const paths = parsePaths(metadata.paths);
  let trigger: SkillTrigger | undefined;
  if (paths) {
    trigger = { type: "path", paths };
    // A rule is injected when a file is touched, never invoked by the model.
    disableModelInvocation = true;
  } else if ("inputs" in metadata) {
    if (!keywords.includes(`/${name}`)) keywords.push(`/${name}`);
    if (!Array.isArray(metadata.inputs)) throw new SkillFileError("inputs must be a list");
    trigger = { type: "task", triggers: keywords };
    const needsInput = /\$\{[a-zA-Z_][a-zA-Z0-9_]*\}/.test(content) || metadata.inputs.length > 0;
    if (needsInput && content && !content.includes(MISSING_VARIABLES_PROMPT)) content += MISSING_VARIABLES_PROMPT;
  } else if (keywords.length > 0) {
    trigger = { type: "keyword", keywords };
  }
  const skill: Skill = { name, content, source, agentSkillsFormat, disableModelInvocation };
  if (trigger) skill.trigger = trigger;
  if (typeof description === "string") skill.description = truncateMiddle(description, MAX_DESCRIPTION_LENGTH, DESCRIPTION_TRUNCATE_NOTICE(source));
  return skill;
}

/** AgentSkills' naming rule (`validate_skill_name`): the problems, or none. */
function skillNameProblems(name: string, directoryName: string): string[] {
  if (!name) return ["Name cannot be empty"];
  const problems: string[] = [];
  if (name.length > 64) problems.push(`Name exceeds 64 characters: ${name.length}`);
  if (!SKILL_NAME.test(name)) problems.push("Name must be lowercase alphanumeric with single hyphens (e.g., 'my-skill', 'pdf-tools')");
  if (directoryName && name !== directoryName) problems.push(`Name '${name}' does not match directory '${directoryName}'`);
  return problems;
}

/**
 * The skill in `file` (absolute), whose text is `text`; `baseDir` is the skills folder it was found
 * in, which names a skill without a `name` (none for the instruction files at the workspace root).
 * @throws SkillFileError, or the YAML parser's error: the file is skipped
 */
export function skillFromFile(file: string, text: string, baseDir?: string): Skill {
  const base = path.basename(file);
  if (base.toLowerCase() === "skill.md") {
    const directoryName = path.basename(path.dirname(file));
    const { metadata, content } = parseFrontMatter(text);
    const name = "name" in metadata ? pythonString(metadata.name) : directoryName;
    const problems = skillNameProblems(name, directoryName);
    if (problems.length) throw new SkillFileError(`Invalid skill name '${name}': ${problems.join("; ")}`);
    return fromMetadata(name, content, file, metadata, true);
  }
  const thirdParty = THIRD_PARTY_SKILL_NAMES[base.toLowerCase()];
  if (thirdParty) return { name: thirdParty, content: text, source: file, agentSkillsFormat: false, disableModelInvocation: false };
  const relative = baseDir ? path.relative(baseDir, file) : base;
  const derived = relative.slice(0, relative.length - path.extname(relative).length);
  const { metadata, content } = parseFrontMatter(text);
  const name = "name" in metadata ? pythonString(metadata.name) : derived;
  if (metadata.mcp_tools !== undefined && metadata.mcp_tools !== null && (typeof metadata.mcp_tools !== "object" || Array.isArray(metadata.mcp_tools))) {
    throw new SkillFileError("mcp_tools must be a dictionary or None");
  }
  return fromMetadata(name, content, file, metadata, false);
}
