/**
 * The project skills of a conversation's workspace, found as OpenHands' `load_project_skills`
 * finds them (software-agent-sdk v1.43.1, `openhands-sdk/openhands/sdk/skills/skill.py` and
 * `skills/utils.py`), the first of a name winning:
 * 1. the instruction files at the workspace's root (`find_third_party_files`): `AGENTS.md`,
 *    `AGENT.md`, `CLAUDE.md`, `GEMINI.md`, `.cursorrules`, any case, in name order; a second file of
 *    the same name in another case, or a link to a file already read, is skipped;
 * 2. `.agents/skills/`, `.openhands/skills/`, `.openhands/microagents/` (`load_skills_from_dir`):
 *    each `<dir>/SKILL.md` (AgentSkills), then every other `.md` below, `README.md` excepted, in
 *    path order; per folder, repository skills first, then triggered ones, then AgentSkills.
 *
 * The workspace belongs to a sandboxed agent that may be hostile, and this runs in the server's
 * process: every read goes through {@link WorkspaceFiles} (a link is followed only while it stays
 * inside the workspace; only regular files are read, non-blocking), and the work is bounded (files
 * larger than {@link SKILL_LIMITS.fileBytes} are skipped, as is everything past the other limits).
 * A file that cannot be read or parsed is skipped with a warning, as OpenHands skips it.
 */
import type { Dirent } from "node:fs";
import path from "node:path";
import type { Logger } from "../logger.js";
import { WorkspaceFileError, WorkspaceFiles } from "../tools/workspace-files.js";
import type { Skill } from "./skill.js";
import { skillFromFile, THIRD_PARTY_SKILL_NAMES } from "./skill-files.js";

/** The skills folders below the workspace, the first of a name winning. */
const SKILL_DIRS = [".agents/skills", ".openhands/skills", ".openhands/microagents"];

/** Bounds of the search (OpenHands has none; a workspace here may be an attacker's). */
export const SKILL_LIMITS = {
  /** A larger file is skipped: its text would go to the model at every step. */
  fileBytes: 256 * 1024,
  /** Text read in all; files past it are skipped. */
  totalBytes: 1024 * 1024,
  /** Skill files read in all. */
  files: 200,
  /** Directory entries looked at in all. */
  entries: 10_000,
  /** Folders below a skills folder. */
  depth: 8,
} as const;

interface Budget {
  files: number;
  bytes: number;
  entries: number;
}

/** Name order as Python sorts paths: component by component, by code point. */
const byParts = (a: string, b: string) => {
  const left = a.split("/");
  const right = b.split("/");
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    if (left[index] !== right[index]) return left[index]! < right[index]! ? -1 : 1;
  }
  return left.length - right.length;
};

class ProjectSkillReader {
  private readonly files: WorkspaceFiles;
  private readonly budget: Budget = { files: 0, bytes: 0, entries: 0 };

  constructor(
    private readonly workspaceDir: string,
    private readonly logger: Logger,
    private readonly fields: object,
  ) {
    this.files = new WorkspaceFiles(workspaceDir);
  }

  private warn(file: string, error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn({ ...this.fields, file: path.relative(this.workspaceDir, file) || ".", reason }, "a project skill was skipped");
  }

  /** The entries of a folder of the workspace, sorted by name; none when it is missing or not a folder. */
  private async list(dir: string): Promise<Dirent[]> {
    let entries: Dirent[];
    try {
      entries = await this.files.list(dir);
    } catch (error) {
      if (!(error instanceof WorkspaceFileError && (error.reason === "missing" || error.reason === "not_directory"))) this.warn(dir, error);
      return [];
    }
    const room = Math.max(0, SKILL_LIMITS.entries - this.budget.entries);
    if (entries.length > room) this.warn(dir, new Error(`more than ${SKILL_LIMITS.entries} entries looked at`));
    this.budget.entries += Math.min(entries.length, room);
    return entries.slice(0, room).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** What `file` is, links followed inside the workspace; undefined when it cannot be reached. */
  private async kind(file: string): Promise<"file" | "directory" | "other" | undefined> {
    try {
      return (await this.files.lookup(file))?.type;
    } catch (error) {
      this.warn(file, error);
      return undefined;
    }
  }

  /** The text of a skill file, or undefined (skipped) when it cannot be read or is past a limit. */
  private async read(file: string): Promise<string | undefined> {
    if (this.budget.files >= SKILL_LIMITS.files) {
      this.warn(file, new Error(`more than ${SKILL_LIMITS.files} skill files`));
      return undefined;
    }
    try {
      const bytes = await this.files.read(file, Math.min(SKILL_LIMITS.fileBytes, SKILL_LIMITS.totalBytes - this.budget.bytes));
      this.budget.files++;
      this.budget.bytes += bytes.length;
      // As Python reads a text file: UTF-8 (a byte-order mark kept), line ends made `\n`.
      return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes).replace(/\r\n?/g, "\n");
    } catch (error) {
      this.warn(file, error);
      return undefined;
    }
  }

  /** The skill in `file`, or undefined when it is skipped. */
  private async load(file: string, baseDir?: string): Promise<Skill | undefined> {
    const text = await this.read(file);
    if (text === undefined) return undefined;
    try {
      return skillFromFile(file, text, baseDir);
    } catch (error) {
      this.warn(file, error);
      return undefined;
    }
  }

  /** The instruction files at the workspace's root (`find_third_party_files`). */
  async rootInstructions(): Promise<Skill[]> {
    const skills: Skill[] = [];
    const names = new Set<string>();
    const resolved = new Set<string>();
    for (const entry of await this.list(this.workspaceDir)) {
      const lower = entry.name.toLowerCase();
      if (!(lower in THIRD_PARTY_SKILL_NAMES)) continue;
      const file = path.join(this.workspaceDir, entry.name);
      if ((await this.kind(file)) !== "file" || names.has(lower)) continue;
      // CLAUDE.md → AGENTS.md is read once.
      const real = await this.files.resolve(file).catch(() => file);
      if (resolved.has(real)) continue;
      names.add(lower);
      resolved.add(real);
      const skill = await this.load(file);
      if (skill) skills.push(skill);
    }
    return skills;
  }

  /** The `.md` files below `dir` (`rglob("*.md")`), not into linked folders, in path order. */
  private async markdownFiles(dir: string, depth = 0): Promise<string[]> {
    const found: string[] = [];
    for (const entry of await this.list(dir)) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < SKILL_LIMITS.depth) found.push(...(await this.markdownFiles(file, depth + 1)));
      } else if (entry.name.endsWith(".md")) {
        found.push(file);
      }
    }
    return found;
  }

  /** The skills of one skills folder, by category (`load_skills_from_dir`). */
  async skillsFolder(dir: string): Promise<Skill[]> {
    const skillFiles: string[] = [];
    for (const entry of await this.list(dir)) {
      const sub = path.join(dir, entry.name);
      if (!entry.isDirectory() && !(entry.isSymbolicLink() && (await this.kind(sub)) === "directory")) continue;
      // `find_skill_md`: the first entry named SKILL.md in any case that is a file (SKILL.md before skill.md).
      for (const item of await this.list(sub)) {
        if (item.name.toLowerCase() !== "skill.md" || (await this.kind(path.join(sub, item.name))) !== "file") continue;
        skillFiles.push(path.join(sub, item.name));
        break;
      }
    }
    const skillDirs = skillFiles.map((file) => path.dirname(file) + path.sep);
    const regular = (await this.markdownFiles(dir))
      .filter((file) => path.basename(file) !== "README.md" && path.basename(file).toLowerCase() !== "skill.md")
      .filter((file) => !skillDirs.some((skillDir) => file.startsWith(skillDir)))
      .sort((a, b) => byParts(path.relative(dir, a), path.relative(dir, b)));
    const repo = new Map<string, Skill>();
    const knowledge = new Map<string, Skill>();
    const agentSkills = new Map<string, Skill>();
    for (const file of [...skillFiles, ...regular]) {
      const skill = await this.load(file, dir);
      if (!skill) continue;
      const category = path.basename(file).toLowerCase() === "skill.md" ? agentSkills : skill.trigger ? knowledge : repo;
      category.set(skill.name, skill);
    }
    return [...repo.values(), ...knowledge.values(), ...agentSkills.values()];
  }
}

/**
 * The project skills of `workspaceDir`, in OpenHands' order, the first of a name winning. Never
 * throws: what cannot be read is logged (with `fields`) and skipped.
 */
export async function loadProjectSkills(workspaceDir: string, logger: Logger, fields: object = {}): Promise<Skill[]> {
  const reader = new ProjectSkillReader(workspaceDir, logger, fields);
  const skills: Skill[] = [];
  const seen = new Set<string>();
  const add = (skill: Skill) => {
    if (seen.has(skill.name)) return;
    seen.add(skill.name);
    skills.push(skill);
  };
  (await reader.rootInstructions()).forEach(add);
  for (const dir of SKILL_DIRS) (await reader.skillsFolder(path.join(workspaceDir, dir))).forEach(add);
  return skills;
}
