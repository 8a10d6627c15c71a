/**
 * What a keyword adds to the user message that contains it: OpenHands' template
 * `openhands-sdk/openhands/sdk/context/prompts/templates/skill_knowledge_info.j2` (v1.43.1, MIT
 * licence), rendered as Jinja renders it (each block's own line breaks kept, the whole trimmed).
 */

/** A skill one of whose keywords the message contains (`SkillKnowledge`). */
export interface TriggeredSkill {
  name: string;
  /** The keyword that matched. */
  trigger: string;
  content: string;
  /** The skill's file, for its relative references. */
  location?: string;
}

/** The `<EXTRA_INFO>` blocks of the triggered skills, in order. */
export function skillKnowledgeText(triggered: readonly TriggeredSkill[]): string {
  return triggered
    .map((skill) => {
      const location = skill.location
        ? `\nSkill location: ${skill.location}\n(Use this path to resolve relative file references in the skill content below)\n`
        : "";
      return (
        `\n<EXTRA_INFO>\nThe following information has been included based on a keyword match for "${skill.trigger}".\n` +
        `It may or may not be relevant to the user's request.\n${location}\n\n${skill.content}\n</EXTRA_INFO>\n`
      );
    })
    .join("")
    .trim();
}
