/**
 * The agent's actions: the LLM's tool calls read and recorded as ActionEvents (the tool named, its
 * arguments as an Action, the `security_risk` and `summary` every call may carry), then executed
 * into ObservationEvents. A call that cannot run, or an action that fails, becomes an AgentErrorEvent.
 */
import type { Action, ActionEvent, MessageToolCall, SecurityRisk } from "@acs-toolkit/schema";
import { AGENT_OUTCOME, INTERNAL_FAILURE } from "../errors/classify.js";
import type { IdGenerator } from "../events/clock.js";
import type { EventFactory } from "../events/factory.js";
import type { RecordedEvent } from "../host.js";
import type { ChatToolCall, LlmResponse } from "../llm/types.js";
import type { SecretMasker } from "../secrets.js";
import { text, ToolArgumentError, ToolUnavailableError, type AgentTool } from "../tools/tool.js";
import { securityRiskOf } from "./security-policy.js";
import { defaultSummary, malformedArguments, parseToolCallArguments, pythonJsonDumps, pythonList } from "./tool-call-arguments.js";

/** What recording and executing actions needs from the conversation. */
export interface ActionContext {
  tools: ReadonlyMap<string, AgentTool>;
  factory: EventFactory;
  ids: IdGenerator;
  /** This run's masker: what is recorded is masked with it. */
  masker: SecretMasker;
  workspaceDir: string;
  record(event: RecordedEvent): Promise<unknown>;
  /** Called once a FinishAction has run. */
  finished(): Promise<void>;
}

/**
 * A call the agent can run, or the error the LLM is told (then the call is recorded without action);
 * either way with the `tool_call` to record.
 */
type ParsedToolCall = { action: Action; securityRisk: SecurityRisk; summary: string; toolCall: MessageToolCall } | { error: string; toolCall: MessageToolCall };

/** Whether a tool's own parameters include `summary` (an MCP tool's may): then it stays an argument (`_tool_has_summary_param`). */
const ownsSummary = (tool: AgentTool) => Object.hasOwn((tool.parameters.properties as Record<string, unknown> | undefined) ?? {}, "summary");

/**
 * Reads a tool call against the conversation's tools, as openhands-sdk/openhands/sdk/agent/agent.py
 * `_get_action_event` does; `riskRated`: a security analyzer reads the call's `security_risk` (else
 * it is UNKNOWN). The error texts are OpenHands'.
 */
function parseToolCall(call: ChatToolCall, toolCall: MessageToolCall, tools: ReadonlyMap<string, AgentTool>, riskRated: boolean): ParsedToolCall {
  let args: Record<string, unknown>;
  try {
    args = parseToolCallArguments(call.arguments);
  } catch (error) {
    const message = `Error validating tool '${call.name}': ${error instanceof Error ? error.message : String(error)}. Arguments: unparseable JSON`;
    return { error: message, toolCall: { ...toolCall, arguments: malformedArguments(message) } };
  }
  const tool = tools.get(call.name);
  if (!tool) return { error: `Tool '${call.name}' not found. Available: ${pythonList([...tools.keys()])}`, toolCall };
  // Recorded as OpenHands re-serialises the arguments it read, before it takes security_risk and summary out.
  const normalized = { ...toolCall, arguments: pythonJsonDumps(args) };
  const { security_risk: risk, ...withSummary } = args;
  const { summary, ...others } = withSummary;
  const own = ownsSummary(tool);
  const actionArgs = own ? withSummary : others;
  const given = typeof summary === "string" && summary.trim() !== "" ? (own ? summary.trim() : summary) : undefined;
  try {
    const securityRisk = securityRiskOf(tool, risk, riskRated);
    const action = tool.toAction(actionArgs);
    return { action, securityRisk, summary: given ?? defaultSummary(tool.name, actionArgs), toolCall: normalized };
  } catch (error) {
    if (error instanceof ToolArgumentError) return { error: `Error validating tool '${tool.name}': ${error.message}. Parameters provided: ${pythonList(Object.keys(actionArgs))}`, toolCall };
    throw error;
  }
}

/**
 * The ActionEvent of one tool call of `response`, recorded; undefined when the call cannot run (then
 * an ActionEvent without action and an AgentErrorEvent are recorded, and the loop goes on). The
 * response's text and reasoning go with its `first` call.
 */
export async function recordActionFor(
  context: ActionContext,
  call: ChatToolCall,
  response: LlmResponse,
  first: boolean,
  riskRated: boolean,
): Promise<ActionEvent | undefined> {
  const { factory, masker } = context;
  const received: MessageToolCall = { id: call.id || `call_${context.ids()}`, name: call.name, arguments: call.arguments, origin: "completion" };
  const base = {
    thought: first && response.content ? [text(masker.mask(response.content))] : [],
    reasoningContent: first ? masker.mask(response.reasoning_content) : null,
    llmResponseId: response.id,
  };
  const parsed = parseToolCall(call, received, context.tools, riskRated);
  if ("error" in parsed) {
    await context.record(factory.action({ ...base, toolCall: parsed.toolCall, action: null, securityRisk: "UNKNOWN", summary: null }));
    // A call the agent can correct, as openhands-sdk/openhands/sdk/agent/agent.py `_emit_tool_error` classifies it.
    await context.record(factory.agentError(call.name, received.id, masker.mask(parsed.error), AGENT_OUTCOME));
    return undefined;
  }
  const event = factory.action({ ...base, toolCall: parsed.toolCall, action: parsed.action, securityRisk: parsed.securityRisk, summary: parsed.summary });
  await context.record(event);
  return event;
}

/** Executes the actions in order, recording each one's observation or error. */
export async function executeActions(context: ActionContext, actions: readonly ActionEvent[], signal: AbortSignal): Promise<void> {
  const { factory, masker } = context;
  for (const action of actions) {
    const tool = context.tools.get(action.tool_name);
    let observation;
    try {
      if (!tool || !action.action) throw new Error(`the tool '${action.tool_name}' is not available in this conversation`);
      observation = await tool.execute(action.action, { workspaceDir: context.workspaceDir, signal, masker });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // A tool that refuses the action is the SDK's ValueError (an agent outcome); anything else is
      // internal, as openhands-sdk/openhands/sdk/agent/parallel_executor.py `_run_safe` classifies them.
      const refused = error instanceof ToolArgumentError || error instanceof ToolUnavailableError;
      const detail = masker.mask(`Error executing tool '${action.tool_name}': ${message}`);
      await context.record(factory.agentError(action.tool_name, action.tool_call_id, detail, refused ? AGENT_OUTCOME : INTERNAL_FAILURE));
      continue;
    }
    await context.record(factory.observation(action, masker.maskDeep(observation)));
    if (action.action.kind === "FinishAction") await context.finished();
  }
}
