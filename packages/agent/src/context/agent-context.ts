/**
 * A conversation's context as OpenHands' `AgentContext` holds it (software-agent-sdk v1.43.1,
 * `openhands-sdk/openhands/sdk/context/agent_context.py`): its skills, and what they add to what
 * the model reads: the system prompt's dynamic context (repository skills, the available skills,
 * the host's suffix, the secrets' names, the date) and the text a user message gains when it names
 * a skill's keyword.
 */
import type { Message, TextContent } from "@acs-toolkit/schema";
import type { AgentSettings } from "../host.js";
import { modelPromptSpec } from "../prompts/model-prompt-spec.js";
import { skillKnowledgeText, type TriggeredSkill } from "../prompts/skill-knowledge.js";
import type { DynamicPromptInputs } from "../prompts/system-prompt.js";
import { NO_SANDBOX_MESSAGE } from "../sandbox/sandbox.js";
import { secretEnvironment } from "../secrets.js";
import { availableSkillsPrompt, gateByModelFamily, matchTrigger, partitionSkills, type Skill } from "./skill.js";

/** What a user message gains from the skills it triggers. */
interface MessageExtension {
  /** The `<EXTRA_INFO>` text (`MessageEvent.extended_content`). */
  text: string;
  /** The skills it activated (`MessageEvent.activated_skills`). */
  activated: string[];
}

export class AgentContext {
  constructor(readonly skills: readonly Skill[] = []) {}

  /**
   * The inputs of the dynamic sections (`_resolve_dynamic_data`): repository skills for this model
   * (CLAUDE.md only for Claude, GEMINI.md only for Gemini), the available skills, and the rest as given.
   */
  dynamicInputs(options: { model: string; customSuffix?: string; secretInfos: DynamicPromptInputs["secretInfos"]; now?: string }): DynamicPromptInputs {
    const { repo, available } = partitionSkills(this.skills);
    const repoSkills = gateByModelFamily(repo, options.model ? modelPromptSpec(options.model).family : undefined);
    const inputs: DynamicPromptInputs = { repoSkills: repoSkills.map((skill) => [skill.name, skill.content] as const), secretInfos: options.secretInfos };
    if (available.length) inputs.availableSkillsPrompt = availableSkillsPrompt(available);
    if (options.customSuffix) inputs.customSuffix = options.customSuffix;
    if (options.now) inputs.now = options.now;
    return inputs;
  }

  /**
   * What `message` gains from the skills whose keywords it contains, those in `skip` (already
   * activated in the conversation) left out (`get_user_message_suffix`); undefined when none.
   */
  userMessageExtension(message: Message, skip: ReadonlySet<string>): MessageExtension | undefined {
    const query = (message.content ?? [])
      .filter((part): part is TextContent => part.type === "text")
      .map((part) => part.text)
      .join("\n")
      .trim();
    if (!query) return undefined;
    const triggered: TriggeredSkill[] = [];
    for (const skill of this.skills) {
      const trigger = matchTrigger(skill, query);
      if (trigger === undefined || skip.has(skill.name)) continue;
      triggered.push({ name: skill.name, trigger, content: skill.content, ...(skill.source ? { location: skill.source } : {}) });
    }
    if (triggered.length === 0) return undefined;
    return { text: skillKnowledgeText(triggered), activated: triggered.map((skill) => skill.name) };
  }
}

/**
 * The secrets the terminal receives, by name and description, for `<CUSTOM_SECRETS>` (OpenHands
 * lists its conversation's secret registry there): custom secrets, then provider tokens.
 */
export function secretInfos(settings: AgentSettings): Array<readonly [string, string | undefined]> {
  const exported = secretEnvironment(settings).env;
  const infos: Array<readonly [string, string | undefined]> = [];
  const custom = settings.secrets_store?.custom_secrets ?? {};
  for (const [name, secret] of Object.entries(custom)) {
    if (!(name in exported)) continue;
    const description = typeof secret === "object" && secret?.description ? secret.description : undefined;
    infos.push([name, description]);
  }
  for (const name of Object.keys(exported)) if (!(name in custom)) infos.push([name, undefined]);
  return infos;
}

/**
 * The runtime's own addition to the dynamic context, given as OpenHands' `system_message_suffix`:
 * where the workspace is (the file editor works only inside it), and that commands cannot run when
 * there is no sandbox.
 */
export function workspaceSuffix(workspaceDir: string, sandboxed: boolean): string {
  const terminal = sandboxed ? "" : `\n${NO_SANDBOX_MESSAGE}`;
  return `<WORKSPACE>\nYour workspace is ${workspaceDir}: the terminal starts there, and the file editor works on absolute paths inside it.${terminal}\n</WORKSPACE>`;
}
