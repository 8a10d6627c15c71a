/**
 * The two texts of a conversation's SystemPromptEvent, as OpenHands' `Agent.init_state` makes them
 * (software-agent-sdk v1.43.1, `openhands-sdk/openhands/sdk/agent/agent.py` and `agent/base.py`):
 * `system_prompt` is the static prompt of the agent's model (or the inline prompt an operator gave,
 * verbatim), `dynamic_context` this conversation's own part, the workspace note as its
 * `system_message_suffix`.
 *
 * The agent server builds its agent from settings with OpenHands' defaults, which this follows: the
 * security-risk policy is always in the prompt (`Agent` sets `llm_security_analyzer`, whatever the
 * analyzer), with the CLI risk tiers (no `cli_mode` given); no browser; no persistent memory.
 */
import type { AgentSettings } from "../host.js";
import { dynamicSystemPrompt, promptDateTime, staticSystemPrompt } from "../prompts/system-prompt.js";
import { secretInfos, workspaceSuffix, type AgentContext } from "./agent-context.js";

export interface SystemMessage {
  prompt: string;
  dynamicContext: string | null;
}

export function systemMessage(options: {
  settings: AgentSettings;
  context: AgentContext;
  workspaceDir: string;
  sandboxed: boolean;
  now: Date;
  /** An operator's own system prompt, used verbatim instead of OpenHands' (the SDK's `system_prompt`). */
  inlinePrompt?: string | undefined;
}): SystemMessage {
  const model = options.settings.llm_model ?? "";
  const prompt = options.inlinePrompt ?? staticSystemPrompt({ model });
  const inputs = options.context.dynamicInputs({
    model,
    customSuffix: workspaceSuffix(options.workspaceDir, options.sandboxed),
    secretInfos: secretInfos(options.settings),
    now: promptDateTime(options.now),
  });
  return { prompt, dynamicContext: dynamicSystemPrompt(inputs) };
}
