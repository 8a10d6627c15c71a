/**
 * The messages sent to the LLM, rebuilt from the view at every step (so a restarted conversation
 * resumes from its stored events). As OpenHands' `events_to_messages`:
 * - SystemPromptEvent → the system message (its dynamic context appended);
 * - the ActionEvents of one LLM response → one assistant message with every tool call, the first
 *   action's thought as its text;
 * - ObservationEvent (its extended content appended), AgentErrorEvent, UserRejectObservation → a
 *   tool message each, cut at 50,000 characters;
 * - MessageEvent → a user or assistant message (extended content appended);
 * - CondensationSummaryEvent → a user message holding the summary.
 *
 * Two repairs keep the history valid for chat-completion APIs: tool calls without a result in the
 * view (and results without their call) are left out, and a user message recorded while a tool
 * call awaited its result moves after the results.
 */
import type { Content, ImageContent, Observation, TerminalObservation, TextContent } from "@acs-toolkit/schema";
import type { ChatContentPart, ChatMessage, ChatToolCall } from "../llm/types.js";
import { maybeTruncate } from "../tools/truncate.js";
import { answeredCallId, type View, type ViewEvent } from "./view.js";

/** OpenHands' Observation.ERROR_MESSAGE_HEADER. */
const ERROR_HEADER = "[An error occurred during execution.]\n";
/** OpenHands' MAX_CMD_OUTPUT_SIZE: the terminal text the LLM reads. */
const MAX_CMD_OUTPUT_SIZE = 30_000;
/** OpenHands' DEFAULT_TEXT_CONTENT_LIMIT: the text of a tool message (llm/message.py `_maybe_truncate_tool_text`). */
const TOOL_TEXT_LIMIT = 50_000;

const isImage = (part: Content): part is ImageContent => part.type === "image";

function textOf(content: readonly Content[] | undefined): string {
  return (content ?? []).map((part) => (isImage(part) ? "[image]" : (part as TextContent).text)).join("\n");
}

/** What the LLM reads of an observation (OpenHands' `to_llm_content`). */
export function observationText(observation: Observation): string {
  const header = observation.is_error ? ERROR_HEADER : "";
  if (observation.kind === "TerminalObservation") return header + terminalText(observation);
  return header + textOf(observation.content);
}

function terminalText(observation: TerminalObservation): string {
  const meta = observation.metadata ?? {};
  let text = `${meta.prefix ?? ""}${textOf(observation.content)}${meta.suffix ?? ""}`;
  if (meta.working_dir) text += `\n[Current working directory: ${meta.working_dir}]`;
  if (meta.py_interpreter_path) text += `\n[Python interpreter: ${meta.py_interpreter_path}]`;
  if (meta.exit_code !== undefined && meta.exit_code !== -1) text += `\n[Command finished with exit code ${meta.exit_code}]`;
  // As TerminalObservation.to_llm_content (openhands-tools/openhands/tools/terminal/definition.py).
  return maybeTruncate(text, MAX_CMD_OUTPUT_SIZE);
}

function userContent(content: readonly Content[]): string | ChatContentPart[] {
  if (!content.some(isImage)) return textOf(content);
  return content.flatMap((part): ChatContentPart[] =>
    isImage(part) ? part.image_urls.map((url) => ({ type: "image_url", image_url: { url } })) : [{ type: "text", text: (part as TextContent).text }],
  );
}

function toolMessage(event: ViewEvent): ChatMessage | undefined {
  switch (event.kind) {
    case "ObservationEvent": {
      // As ObservationEvent.to_llm_message (openhands-sdk/openhands/sdk/event/llm_convertible/observation.py).
      const content = [observationText(event.observation), ...(event.extended_content ?? []).map((part) => part.text)].join("\n");
      return { role: "tool", tool_call_id: event.tool_call_id, name: event.tool_name, content: maybeTruncate(content, TOOL_TEXT_LIMIT) };
    }
    case "AgentErrorEvent":
      return { role: "tool", tool_call_id: event.tool_call_id, name: event.tool_name, content: maybeTruncate(event.error, TOOL_TEXT_LIMIT) };
    case "UserRejectObservation":
      return { role: "tool", tool_call_id: event.tool_call_id, name: event.tool_name, content: `Action rejected: ${event.rejection_reason ?? "User rejected the action"}` };
    default:
      return undefined;
  }
}

function plainMessage(event: ViewEvent): ChatMessage | undefined {
  switch (event.kind) {
    case "SystemPromptEvent":
      return { role: "system", content: event.dynamic_context ? `${event.system_prompt.text}\n\n${event.dynamic_context.text}` : event.system_prompt.text };
    case "CondensationSummaryEvent":
      return { role: "user", content: event.summary };
    case "MessageEvent": {
      const content = [...(event.llm_message.content ?? []), ...(event.extended_content ?? [])];
      if (event.llm_message.role === "assistant") {
        return { role: "assistant", content: textOf(content) || null, ...(event.llm_message.reasoning_content ? { reasoning_content: event.llm_message.reasoning_content } : {}) };
      }
      if (event.llm_message.role === "system") return { role: "system", content: textOf(content) };
      return { role: "user", content: userContent(content) };
    }
    default:
      return undefined;
  }
}

/** The chat messages for `view`. */
export function messagesOf(view: View): ChatMessage[] {
  const calls = new Set<string>();
  const answers = new Set<string>();
  for (const event of view.events) {
    if (event.kind === "ActionEvent") calls.add(event.tool_call_id);
    const answered = answeredCallId(event);
    if (answered !== undefined) answers.add(answered);
  }
  const messages: ChatMessage[] = [];
  /** Tool calls of the last assistant message still waiting for their result. */
  const awaited = new Set<string>();
  /** Messages held back until `awaited` is empty. */
  const held: ChatMessage[] = [];
  const release = () => {
    if (awaited.size === 0) messages.push(...held.splice(0));
  };
  let batch: { responseId: string; message: Extract<ChatMessage, { role: "assistant" }> } | undefined;

  for (const event of view.events) {
    if (event.kind === "ActionEvent") {
      if (!answers.has(event.tool_call_id)) continue;
      const call: ChatToolCall = { id: event.tool_call.id, name: event.tool_call.name, arguments: event.tool_call.arguments };
      if (batch?.responseId === event.llm_response_id) {
        batch.message.tool_calls!.push(call);
      } else {
        const thought = event.thought.map((part) => part.text).join("\n");
        batch = {
          responseId: event.llm_response_id,
          message: { role: "assistant", content: thought || null, tool_calls: [call], ...(event.reasoning_content ? { reasoning_content: event.reasoning_content } : {}) },
        };
        messages.push(batch.message);
      }
      awaited.add(event.tool_call_id);
      continue;
    }
    batch = undefined;
    const answered = answeredCallId(event);
    if (answered !== undefined) {
      if (!calls.has(answered)) continue;
      messages.push(toolMessage(event)!);
      awaited.delete(answered);
      release();
      continue;
    }
    const message = plainMessage(event);
    if (!message) continue;
    if (awaited.size > 0) held.push(message);
    else messages.push(message);
  }
  messages.push(...held);
  return messages;
}
