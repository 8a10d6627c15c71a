/**
 * The context of one open conversation, readied as OpenHands readies its agent at the first message
 * or run (`LocalConversation._ensure_agent_ready`, software-agent-sdk v1.43.1,
 * `openhands-sdk/openhands/sdk/conversation/impl/local_conversation.py`): the project skills are
 * read from the workspace then (so files uploaded after the conversation was created count), once
 * per opening, and the SystemPromptEvent is recorded then if the conversation has none. A
 * conversation reopened after a restart keeps the prompt it recorded and reads its skills again,
 * for their keywords.
 */
import type { MessageEvent } from "@acs-toolkit/schema";
import type { Clock } from "../events/clock.js";
import type { AgentSettings, RecordedEvent } from "../host.js";
import type { Logger } from "../logger.js";
import { AgentContext } from "./agent-context.js";
import { loadProjectSkills } from "./project-skills.js";
import { systemMessage, type SystemMessage } from "./system-message.js";

interface ConversationContextOptions {
  conversationId: string;
  workspaceDir: string;
  sandboxed: boolean;
  /** An operator's own system prompt, verbatim. */
  inlinePrompt?: string | undefined;
  clock: Clock;
  logger: Logger;
}

export class ConversationContext {
  private context: AgentContext | undefined;
  private readying: Promise<void> | undefined;

  constructor(private readonly options: ConversationContextOptions) {}

  /**
   * Reads the project skills (once) and, when `events` hold no SystemPromptEvent, calls
   * `recordPrompt` with the system message. Concurrent calls share one; a failed one is tried again
   * by the next call.
   */
  ready(events: readonly RecordedEvent[], settings: () => Promise<AgentSettings>, recordPrompt: (message: SystemMessage) => Promise<unknown>): Promise<void> {
    this.readying ??= this.readyOnce(events, settings, recordPrompt).catch((error: unknown) => {
      this.readying = undefined;
      throw error;
    });
    return this.readying;
  }

  private async readyOnce(events: readonly RecordedEvent[], settings: () => Promise<AgentSettings>, recordPrompt: (message: SystemMessage) => Promise<unknown>): Promise<void> {
    const { workspaceDir, logger, conversationId } = this.options;
    this.context ??= new AgentContext(await loadProjectSkills(workspaceDir, logger, { conversationId }));
    if (events.some((event) => event.kind === "SystemPromptEvent")) return;
    const { sandboxed, inlinePrompt, clock } = this.options;
    await recordPrompt(systemMessage({ settings: await settings(), context: this.context, workspaceDir, sandboxed, now: clock.now(), inlinePrompt }));
  }

  /**
   * The user message `event` with what the skills its keywords trigger add (`activated_skills`,
   * `extended_content`), each skill once per conversation: those activated by the messages in
   * `events` are left out (OpenHands' `activated_knowledge_skills`, read back from the events).
   */
  userMessage(event: MessageEvent, events: readonly RecordedEvent[]): MessageEvent {
    if (!this.context || event.source !== "user") return event;
    const activated = new Set(events.flatMap((recorded) => (recorded.kind === "MessageEvent" ? (recorded.activated_skills ?? []) : [])));
    const extension = this.context.userMessageExtension(event.llm_message, activated);
    if (!extension) return event;
    return { ...event, activated_skills: extension.activated, extended_content: [{ cache_prompt: false, type: "text", text: extension.text }] };
  }
}
