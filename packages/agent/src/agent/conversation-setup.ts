/**
 * What a conversation builds before it runs: its state read back from the stored events and its
 * tools when it opens (built-in and MCP), its LLMs, condenser and tool list at the start of each run.
 */
import type { ConfirmationPolicy, ExecutionStatus, SecurityAnalyzer, TaskItem } from "@acs-toolkit/schema";
import type { Clock, IdGenerator } from "../events/clock.js";
import { SummarizingCondenser, type CondenserOptions } from "../history/condenser.js";
import { EXECUTION_STATUSES, type AgentSettings, type RecordedEvent } from "../host.js";
import { contextWindowOf, resolveModel } from "../llm/model.js";
import { ConversationStats, priceOf, type ModelPrice } from "../llm/stats.js";
import type { ChatTool, Llm, LlmFactory } from "../llm/types.js";
import type { Logger } from "../logger.js";
import { NO_SANDBOX_MESSAGE, type Sandbox } from "../sandbox/sandbox.js";
import type { ProcessSpawner } from "../sandbox/fork-server.js";
import { SecretMasker, secretEnvironment } from "../secrets.js";
import { withCommonParameters } from "../tools/arguments.js";
import { finishTool, taskTrackerTool, thinkTool } from "../tools/basic.js";
import { fileEditorTool } from "../tools/file-editor.js";
import { connectMcpTools, type McpTools } from "../tools/mcp.js";
import { terminalTool, type TerminalToolOptions } from "../tools/terminal.js";
import type { AgentTool } from "../tools/tool.js";
import { confirmationPolicyOf, securityAnalyzerOf, type SecurityPolicyFields } from "./security-policy.js";
import type { StuckThresholds } from "./stuck-detector.js";

/**
 * What the runtime gives each conversation (see `AgentRuntimeOptions`).
 * @internal
 */
export interface ConversationDependencies {
  llm: LlmFactory;
  sandbox: Sandbox | undefined;
  spawner: ProcessSpawner;
  clock: Clock;
  ids: IdGenerator;
  stream: boolean;
  condenser: CondenserOptions;
  /** Max input tokens by model-name prefix (the defaults and the runtime's `contextWindows`). */
  contextWindows: Readonly<Record<string, number>>;
  /** Stuck detection before each step, with these thresholds; false: off. */
  stuckDetection: boolean | Partial<StuckThresholds>;
  terminal: Pick<TerminalToolOptions, "softTimeoutSeconds" | "maxTimeoutSeconds" | "maxOutputChars">;
  mcp: { connectTimeoutMs?: number; callTimeoutMs?: number };
  prices: Readonly<Record<string, ModelPrice>>;
  interruptEvent: boolean;
  classification: boolean;
  /** An operator's own system prompt; undefined: OpenHands' (`context/system-message.ts`). */
  systemPrompt: string | undefined;
  logger: Logger;
  onClosed(conversationId: string): void;
}

/** The state a conversation resumes from, as its stored events last recorded it. */
interface RestoredState extends SecurityPolicyFields {
  status: ExecutionStatus;
  usage: ConversationStats;
  /** The conversation's own `stuck_detection` (the agent server's StartConversationRequest); default true. */
  stuckDetection: boolean;
  /** The conversation's own `max_iterations`, over the settings' when recorded. */
  maxIterations: number | undefined;
}

/** The state fields of the stored events, the last value of each winning. */
export function restoredState(events: readonly RecordedEvent[], settings: AgentSettings): RestoredState {
  const state: RestoredState = {
    status: "idle",
    usage: new ConversationStats(),
    confirmationPolicy: { kind: "NeverConfirm" },
    settingsPolicy: undefined,
    securityAnalyzer: null,
    settingsAnalyzer: undefined,
    stuckDetection: true,
    maxIterations: undefined,
  };
  for (const event of events) {
    if (event.kind !== "ConversationStateUpdateEvent") continue;
    if (event.key === "execution_status" && (EXECUTION_STATUSES as readonly unknown[]).includes(event.value)) state.status = event.value as ExecutionStatus;
    if (event.key === "stats") state.usage = ConversationStats.fromSnapshot(event.value);
    if (event.key === "stuck_detection" && typeof event.value === "boolean") state.stuckDetection = event.value;
    if (event.key === "max_iterations" && Number.isInteger(event.value) && (event.value as number) >= 1) state.maxIterations = event.value as number;
    if (event.key === "confirmation_policy" && typeof event.value === "object" && event.value !== null) {
      state.confirmationPolicy = event.value as ConfirmationPolicy;
      // Recorded before: what the settings say now counts as applied (a policy set on the conversation stays).
      state.settingsPolicy = JSON.stringify(confirmationPolicyOf(settings));
    }
    if (event.key === "security_analyzer") {
      state.securityAnalyzer = typeof event.value === "object" ? (event.value as SecurityAnalyzer | null) : null;
      state.settingsAnalyzer = JSON.stringify(securityAnalyzerOf(settings));
    }
  }
  return state;
}

/** A conversation's tools, and what it learnt building them. */
interface ConversationTools {
  /** The tools offered to the LLM, by name. */
  tools: Map<string, AgentTool>;
  mcp: McpTools;
  /** Masks the settings' secrets in what is recorded. */
  masker: SecretMasker;
  /** What does not work (an MCP server down, no sandbox), one sentence each. */
  problems: string[];
}

/**
 * Builds the built-in tools and connects the settings' MCP servers. On failure the tools built so
 * far are closed.
 */
export async function setUpTools(
  conversation: { id: string; workspaceDir: string; tmpDir: string | undefined; settings: AgentSettings; events: readonly RecordedEvent[] },
  deps: ConversationDependencies,
): Promise<ConversationTools> {
  const { id: conversationId, workspaceDir, tmpDir, settings } = conversation;
  const secrets = secretEnvironment(settings);
  const masker = new SecretMasker(secrets.values);
  if (secrets.skipped.length) {
    deps.logger.warn({ conversationId, names: secrets.skipped }, "custom secrets whose names are not environment variable names are not given to the terminal");
  }
  const tools = new Map<string, AgentTool>();
  const problems: string[] = [];
  const builtIn = [
    terminalTool({ sandbox: deps.sandbox, spawner: deps.spawner, workspaceDir, tmpDir, env: secrets.env, ...deps.terminal }),
    fileEditorTool({ workspaceDir, owner: deps.sandbox?.owner }),
    taskTrackerTool(lastTaskList(conversation.events)),
    thinkTool(),
    finishTool(),
  ];
  for (const tool of builtIn) tools.set(tool.name, tool);
  if (!deps.sandbox) problems.push(NO_SANDBOX_MESSAGE);
  let mcp: McpTools;
  try {
    mcp = await connectMcpTools(settings.mcp_config, { sandbox: deps.sandbox, workspaceDir, tmpDir, reservedNames: [...tools.keys()], ...deps.mcp });
  } catch (error) {
    await Promise.all([...tools.values()].map((tool) => tool.close?.().catch(() => {})));
    throw error;
  }
  for (const tool of mcp.tools) tools.set(tool.name, tool);
  for (const problem of mcp.problems) {
    const masked = masker.mask(problem);
    problems.push(masked);
    deps.logger.warn({ conversationId }, masked);
  }
  return { tools, mcp, masker, problems };
}

/** The task list of the last `plan` recorded (the task tracker's state). */
function lastTaskList(events: readonly RecordedEvent[]): TaskItem[] {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.kind === "ObservationEvent" && event.observation.kind === "TaskTrackerObservation" && event.observation.command === "plan") {
      return event.observation.task_list ?? [];
    }
  }
  return [];
}

/** A run's LLMs and condenser, from the settings it read when it started. */
interface RunModels {
  llm: Llm;
  /** The model's max input tokens, 0 when unknown (the stats' `context_window`). */
  contextWindow: number;
  /** Undefined when the settings turn the default condenser off. */
  condenser: SummarizingCondenser | undefined;
  condenserLlm: Llm | undefined;
}

/** Builds a run's LLMs and condenser from the settings. */
export function runModels(settings: AgentSettings, deps: Pick<ConversationDependencies, "llm" | "stream" | "condenser" | "contextWindows">): RunModels {
  const config = { model: settings.llm_model ?? "", apiKey: settings.llm_api_key ?? null, baseUrl: settings.llm_base_url ?? null };
  // Resolved first: a model that cannot be resolved fails the run before any LLM is made.
  resolveModel(config.model, config.baseUrl);
  const llm = deps.llm({ ...config, usageId: "agent", stream: deps.stream });
  const contextWindow = contextWindowOf(config.model, deps.contextWindows);
  const condense = settings.enable_default_condenser ?? true;
  // The condenser's token limit defaults to the agent model's window (settings/model.py `build_condenser`).
  const condenser = condense ? new SummarizingCondenser(deps.condenser, contextWindow) : undefined;
  const condenserLlm = condense ? deps.llm({ ...config, usageId: "condenser", stream: false }) : undefined;
  return { llm, contextWindow: contextWindow ?? 0, condenser, condenserLlm };
}

/** The tools as the LLM is offered them: every one that is not read-only takes `security_risk`. */
export function chatToolsOf(tools: Iterable<AgentTool>): ChatTool[] {
  return [...tools].map((tool) => ({
    name: tool.name,
    description: tool.definition.description,
    parameters: withCommonParameters(tool.parameters, { securityRisk: tool.readOnly ? false : tool.definition.kind === "MCPToolDefinition" ? "mcp" : "builtIn" }),
  }));
}

/** Warns when the settings set a budget for a model without a known price: only reported costs count then. */
export function warnOfUnpricedBudget(conversationId: string, settings: AgentSettings, deps: Pick<ConversationDependencies, "prices" | "logger">): void {
  const budget = settings.max_budget_per_task;
  const model = settings.llm_model ?? "";
  if (budget != null && !priceOf(resolveModel(model, settings.llm_base_url ?? null).model, deps.prices)) {
    deps.logger.warn(
      { conversationId, model, budget },
      "no price is known for this model: max_budget_per_task only counts costs the provider reports (pass `pricing` to the runtime)",
    );
  }
}
