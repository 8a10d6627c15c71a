/**
 * The events the agent records, built from the generated types with the fields, defaults and
 * sources OpenHands gives them. Null fields are omitted, as OpenHands persists events
 * (`exclude_none`). Every event gets an id and a timestamp from the runtime's dependencies.
 */
import type {
  Action,
  ActionEvent,
  AgentErrorEvent,
  Condensation,
  CondensationRequest,
  ConversationErrorEvent,
  ConversationStateUpdateEvent,
  ErrorClassification,
  InterruptEvent,
  Message,
  MessageEvent,
  MessageToolCall,
  Observation,
  ObservationEvent,
  PauseEvent,
  SecurityRisk,
  StreamingDeltaEvent,
  SystemPromptEvent,
  TextContent,
  ToolDefinition,
  UserRejectObservation,
} from "@acs-toolkit/schema";
import { classifyError, UNCLASSIFIED } from "../errors/classify.js";
import { EventTimestamps, type Clock, type IdGenerator } from "./clock.js";

interface ActionEventFields {
  thought: TextContent[];
  reasoningContent: string | null;
  action: Action | null;
  toolCall: MessageToolCall;
  llmResponseId: string;
  securityRisk: SecurityRisk;
  summary: string | null;
}

/** A classification as OpenHands stores it: a null `error_id` omitted (`exclude_none`). */
function persisted(classification: ErrorClassification): ErrorClassification {
  const { error_id: errorId, ...rest } = classification;
  return errorId == null ? rest : classification;
}

/** The fields by which an observation or a rejection names the tool call it answers (`action_id` comes after the answer's own fields, as in the SDK's models). */
function answering(action: ActionEvent) {
  return { source: "environment" as const, tool_name: action.tool_name, tool_call_id: action.tool_call_id };
}

export class EventFactory {
  private readonly timestamps: EventTimestamps;

  constructor(
    clock: Clock,
    private readonly ids: IdGenerator,
    /** Add `classification` to ConversationErrorEvent and AgentErrorEvent (v1.40+). */
    private readonly classify: boolean,
  ) {
    this.timestamps = new EventTimestamps(clock);
  }

  private head() {
    return { id: this.ids(), timestamp: this.timestamps.next() };
  }

  systemPrompt(prompt: string, tools: ToolDefinition[], dynamicContext: string | null): SystemPromptEvent {
    return {
      ...this.head(),
      source: "agent",
      system_prompt: { cache_prompt: false, type: "text", text: prompt },
      tools,
      ...(dynamicContext ? { dynamic_context: { cache_prompt: false, type: "text" as const, text: dynamicContext } } : {}),
      kind: "SystemPromptEvent",
    };
  }

  stateUpdate(key: string, value: unknown): ConversationStateUpdateEvent {
    return { ...this.head(), source: "environment", key, value, kind: "ConversationStateUpdateEvent" };
  }

  userMessage(message: Message): MessageEvent {
    // OpenHands' Message always has `thinking_blocks` (a list by default, so kept by exclude_none), after the fields a user message has.
    const llmMessage: Message = message.thinking_blocks === undefined ? { ...message, thinking_blocks: [] } : message;
    return { ...this.head(), source: "user", llm_message: llmMessage, activated_skills: [], extended_content: [], kind: "MessageEvent" };
  }

  /** A message the runtime adds for the LLM to read as the user's (a nudge of the stuck detector). */
  environmentMessage(text: string): MessageEvent {
    const message: Message = { role: "user", content: [{ cache_prompt: false, type: "text", text }], thinking_blocks: [] };
    return { ...this.head(), source: "environment", llm_message: message, activated_skills: [], extended_content: [], kind: "MessageEvent" };
  }

  agentMessage(content: string | null, reasoningContent: string | null, llmResponseId: string): MessageEvent {
    const message: Message = {
      role: "assistant",
      content: content ? [{ cache_prompt: false, type: "text", text: content }] : [],
      ...(reasoningContent ? { reasoning_content: reasoningContent } : {}),
      thinking_blocks: [],
    };
    return { ...this.head(), source: "agent", llm_message: message, llm_response_id: llmResponseId, activated_skills: [], extended_content: [], kind: "MessageEvent" };
  }

  action(fields: ActionEventFields): ActionEvent {
    return {
      ...this.head(),
      source: "agent",
      thought: fields.thought,
      ...(fields.reasoningContent ? { reasoning_content: fields.reasoningContent } : {}),
      thinking_blocks: [],
      ...(fields.action ? { action: fields.action } : {}),
      tool_name: fields.toolCall.name,
      tool_call_id: fields.toolCall.id,
      tool_call: fields.toolCall,
      llm_response_id: fields.llmResponseId,
      security_risk: fields.securityRisk,
      ...(fields.summary ? { summary: fields.summary } : {}),
      kind: "ActionEvent",
    };
  }

  observation(action: ActionEvent, observation: Observation): ObservationEvent {
    return { ...this.head(), ...answering(action), observation, action_id: action.id, extended_content: [], kind: "ObservationEvent" };
  }

  /** `classification`: what kind of failure it is (v1.40+; see `AGENT_OUTCOME`, the default `UNCLASSIFIED`). */
  agentError(toolName: string, toolCallId: string, error: string, classification: ErrorClassification = UNCLASSIFIED): AgentErrorEvent {
    return {
      ...this.head(),
      source: "agent",
      tool_name: toolName,
      tool_call_id: toolCallId,
      error,
      ...(this.classify ? { classification: persisted(classification) } : {}),
      kind: "AgentErrorEvent",
    };
  }

  userReject(action: ActionEvent, reason: string): UserRejectObservation {
    return { ...this.head(), ...answering(action), rejection_reason: reason, rejection_source: "user", action_id: action.id, kind: "UserRejectObservation" };
  }

  conversationError(code: string, detail: string): ConversationErrorEvent {
    return {
      ...this.head(),
      source: "environment",
      code,
      detail,
      ...(this.classify ? { classification: persisted(classifyError(code, detail)) } : {}),
      kind: "ConversationErrorEvent",
    };
  }

  pause(): PauseEvent {
    return { ...this.head(), source: "user", kind: "PauseEvent" };
  }

  interrupt(): InterruptEvent {
    return { ...this.head(), source: "user", kind: "InterruptEvent" };
  }

  condensation(forgottenEventIds: string[], summary: string, summaryOffset: number, llmResponseId: string): Condensation {
    return {
      ...this.head(),
      source: "environment",
      forgotten_event_ids: forgottenEventIds,
      summary,
      summary_offset: summaryOffset,
      llm_response_id: llmResponseId,
      kind: "Condensation",
    };
  }

  condensationRequest(): CondensationRequest {
    return { ...this.head(), source: "environment", kind: "CondensationRequest" };
  }

  streamingDelta(content: string | null, reasoningContent: string | null): StreamingDeltaEvent {
    return { ...this.head(), source: "agent", content, reasoning_content: reasoningContent, kind: "StreamingDeltaEvent" };
  }
}
