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

/** A call the agent can run, or the error the LLM is told (then the call is recorded without action). */
type ParsedToolCall = { action: Action; securityRisk: SecurityRisk; summary: string | null } | { error: string };

const pythonList = (names: readonly string[]) => `[${names.map((name) => `'${name}'`).join(", ")}]`;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Reads a tool call against the conversation's tools; `riskRated`: a security analyzer reads the
 * call's `security_risk` (else it is UNKNOWN). The error texts are OpenHands'.
 */
function parseToolCall(call: ChatToolCall, tools: ReadonlyMap<string, AgentTool>, riskRated: boolean): ParsedToolCall {
  const tool = tools.get(call.name);
  if (!tool) return { error: `Tool '${call.name}' not found. Available: ${pythonList([...tools.keys()])}` };
  const invalid = (reason: string) => ({ error: `Error validating args ${call.arguments} for tool '${tool.name}': ${reason}` });
  let args: unknown;
  try {
    args = JSON.parse(call.arguments.trim() === "" ? "{}" : call.arguments);
  } catch (error) {
    return invalid(error instanceof Error ? error.message : String(error));
  }
  if (!isObject(args)) return invalid("the arguments must be a JSON object");
  const { summary, security_risk: risk, ...rest } = args;
  try {
    const securityRisk = securityRiskOf(tool, risk, riskRated);
    const action = tool.toAction(rest);
    return { action, securityRisk, summary: typeof summary === "string" ? summary : null };
  } catch (error) {
    if (error instanceof ToolArgumentError) return invalid(error.message);
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
  const toolCall: MessageToolCall = { id: call.id || `call_${context.ids()}`, name: call.name, arguments: call.arguments, origin: "completion" };
  const base = {
    thought: first && response.content ? [text(masker.mask(response.content))] : [],
    reasoningContent: first ? masker.mask(response.reasoning_content) : null,
    toolCall,
    llmResponseId: response.id,
  };
  const parsed = parseToolCall(call, context.tools, riskRated);
  if ("error" in parsed) {
    await context.record(factory.action({ ...base, action: null, securityRisk: "UNKNOWN", summary: null }));
    // A call the agent can correct, as openhands-sdk/openhands/sdk/agent/agent.py `_emit_tool_error` classifies it.
    await context.record(factory.agentError(call.name, toolCall.id, masker.mask(parsed.error), AGENT_OUTCOME));
    return undefined;
  }
  const event = factory.action({ ...base, action: parsed.action, securityRisk: parsed.securityRisk, summary: parsed.summary });
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
