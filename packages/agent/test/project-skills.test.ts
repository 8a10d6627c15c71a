/**
 * Reading a workspace's project skills: OpenHands 1.43.1's files, names, order and triggers, and
 * what a hostile workspace cannot make the server do (read outside, block, read without bound).
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { loadProjectSkills, SKILL_LIMITS } from "../src/context/project-skills.js";
import { availableSkillsPrompt, matchTrigger, partitionSkills, type Skill } from "../src/context/skill.js";
import type { Logger } from "../src/logger.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workspace(files: Record<string, string> = {}): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "acs-skills-")));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

function recordingLogger(): Logger & { warnings: Array<Record<string, unknown>> } {
  const warnings: Array<Record<string, unknown>> = [];
  return { warnings, debug() {}, info() {}, error() {}, warn: (fields) => void warnings.push(fields as Record<string, unknown>) };
}

const names = (skills: readonly Skill[]) => skills.map((skill) => skill.name);

describe("loadProjectSkills", () => {
  it("finds OpenHands' files, names and order", async () => {
    const dir = workspace();
    cpSync(fileURLToPath(new URL("./fixtures/openhands-1.43.1/workspace/", import.meta.url)), dir, { recursive: true });
    const skills = await loadProjectSkills(dir, recordingLogger());
    expect(names(skills)).toEqual(["agents", "claude", "gemini", "repo-style", "deploy", "legacy-api"]);
    expect(skills[0]).toEqual({ name: "agents", content: "# Project notes\n\nRun `pnpm test` before committing.\nNever edit generated files.\n", source: `${dir}/AGENTS.md`, agentSkillsFormat: false, disableModelInvocation: false });
    expect(skills[4]).toMatchObject({ name: "deploy", trigger: { type: "keyword", keywords: ["deploy", "release"] }, content: "# Deploying\n\nRun `./scripts/deploy.sh --prod` from the repository root." });
    expect(partitionSkills(skills).repo.map((skill) => skill.name)).toEqual(["agents", "claude", "gemini", "repo-style"]);
  });

  it("reads the SDK's folders in order, the first of a name winning; README.md is not a skill", async () => {
    const dir = workspace({
      "AGENT.md": "agent file",
      "AGENTS.md": "agents file",
      ".cursorrules": "cursor rules",
      ".agents/skills/style.md": "from .agents",
      ".openhands/skills/style.md": "from .openhands",
      ".openhands/skills/README.md": "not a skill",
      ".openhands/skills/nested/deep.md": "---\ntriggers:\n- deep\n---\ndeep knowledge",
      ".openhands/microagents/old.md": "legacy",
    });
    const skills = await loadProjectSkills(dir, recordingLogger());
    // AGENT.md sorts before AGENTS.md: it is "agents".
    expect(skills.map((skill) => [skill.name, skill.content])).toEqual([
      ["cursorrules", "cursor rules"],
      ["agents", "agent file"],
      ["style", "from .agents"],
      ["nested/deep", "deep knowledge"],
      ["old", "legacy"],
    ]);
  });

  it("reads AgentSkills folders and task skills as OpenHands does", async () => {
    const dir = workspace({
      ".agents/skills/pdf-tools/SKILL.md": "---\nname: pdf-tools\ndescription: Extract text from PDF files.\ntriggers: [pdf]\n---\nUse pdftotext.",
      ".agents/skills/bad-name/SKILL.md": "---\nname: Bad_Name\n---\nnever loaded",
      ".agents/skills/pdf-tools/notes.md": "a reference of the skill, not a skill",
      ".openhands/skills/review.md": "---\ninputs:\n- name: PR\n  description: the pull request\n---\nReview ${PR}.",
    });
    const logger = recordingLogger();
    const skills = await loadProjectSkills(dir, logger);
    expect(names(skills)).toEqual(["pdf-tools", "review"]);
    expect(skills[0]).toMatchObject({ agentSkillsFormat: true, description: "Extract text from PDF files.", trigger: { type: "keyword", keywords: ["pdf"] } });
    expect(skills[1]).toMatchObject({
      trigger: { type: "task", triggers: ["/review"] },
      content: "Review ${PR}.\n\nIf the user didn't provide any of these variables, ask the user to provide them first before the agent can proceed with the task.",
    });
    expect(logger.warnings.map((warning) => warning.file)).toEqual([".agents/skills/bad-name/SKILL.md"]);
    expect(availableSkillsPrompt(partitionSkills(skills).available)).toBe(
      "<available_skills>\n  <skill>\n    <name>pdf-tools</name>\n    <description>Extract text from PDF files.</description>\n  </skill>\n" +
        "  <skill>\n    <name>review</name>\n    <description>Review ${PR}.... [131 characters truncated. Call invoke_skill(name=\"review\") to load the full skill]</description>\n  </skill>\n</available_skills>",
    );
  });

  it("skips a file whose front matter is not YAML, and keeps the others", async () => {
    const dir = workspace({ ".openhands/skills/broken.md": "---\ntriggers: [unclosed\n---\ntext", ".openhands/skills/fine.md": "fine" });
    const logger = recordingLogger();
    expect(names(await loadProjectSkills(dir, logger))).toEqual(["fine"]);
    expect(logger.warnings).toHaveLength(1);
  });

  it("never follows a link out of the workspace", async () => {
    const dir = workspace({ "notes.md": "inside" });
    symlinkSync("/etc/passwd", path.join(dir, "AGENTS.md"));
    symlinkSync("/etc/hostname", path.join(dir, "CLAUDE.md"));
    mkdirSync(path.join(dir, ".openhands"));
    symlinkSync("/etc", path.join(dir, ".openhands", "skills"));
    mkdirSync(path.join(dir, ".agents", "skills"), { recursive: true });
    symlinkSync("/etc/passwd", path.join(dir, ".agents", "skills", "passwd.md"));
    symlinkSync("/etc", path.join(dir, ".agents", "skills", "etc"));
    const logger = recordingLogger();
    const skills = await loadProjectSkills(dir, logger);
    expect(skills).toEqual([]);
    expect(logger.warnings.length).toBeGreaterThan(0);
  });

  it("follows a link that stays inside, reading a file once under two names", async () => {
    const dir = workspace({ "AGENTS.md": "shared instructions", "docs/gemini.txt": "for gemini" });
    symlinkSync("AGENTS.md", path.join(dir, "CLAUDE.md"));
    symlinkSync("docs/gemini.txt", path.join(dir, "GEMINI.md"));
    const skills = await loadProjectSkills(dir, recordingLogger());
    expect(skills.map((skill) => [skill.name, skill.content])).toEqual([
      ["agents", "shared instructions"],
      ["gemini", "for gemini"],
    ]);
  });

  it("skips what is not a regular file and what is too large, without blocking", async () => {
    const dir = workspace({ "CLAUDE.md": "x".repeat(SKILL_LIMITS.fileBytes + 1), ".openhands/skills/ok.md": "ok" });
    mkdirSync(path.join(dir, "AGENTS.md"));
    execFileSync("mkfifo", [path.join(dir, "GEMINI.md")]);
    execFileSync("mkfifo", [path.join(dir, ".openhands", "skills", "fifo.md")]);
    const logger = recordingLogger();
    const skills = await loadProjectSkills(dir, logger);
    expect(names(skills)).toEqual(["ok"]);
    // Not a file: passed over, as OpenHands passes it (`is_file()`); a skill file that cannot be read: a warning.
    expect(logger.warnings.map((warning) => warning.file).sort()).toEqual([".openhands/skills/fifo.md", "CLAUDE.md"]);
  });

  it("reads at most SKILL_LIMITS.files files", async () => {
    const files: Record<string, string> = {};
    for (let index = 0; index < SKILL_LIMITS.files + 5; index++) files[`.openhands/skills/s${String(index).padStart(3, "0")}.md`] = "text";
    const skills = await loadProjectSkills(workspace(files), recordingLogger());
    expect(skills).toHaveLength(SKILL_LIMITS.files);
  });
});

describe("keyword triggers", () => {
  const skill = (keywords: string[]): Skill => ({ name: "s", content: "", trigger: { type: "keyword", keywords }, agentSkillsFormat: false, disableModelInvocation: false });

  it("match whole words, in any case, the first keyword listed winning", () => {
    expect(matchTrigger(skill(["git"]), "Push to GitHub")).toBeUndefined();
    expect(matchTrigger(skill(["git"]), "use Git, please")).toBe("git");
    expect(matchTrigger(skill(["/linear"]), "see /linear for it")).toBe("/linear");
    expect(matchTrigger(skill(["issue", "bug"]), "a bug, an issue")).toBe("issue");
    expect(matchTrigger(skill(["issue"]), "tissue")).toBeUndefined();
  });
});
