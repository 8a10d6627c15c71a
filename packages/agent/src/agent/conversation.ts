/**
 * One conversation under the agent: the loop OpenHands runs (`LocalConversation.run` and
 * `Agent.step`), its controls (run, pause, interrupt, confirmation, messages) and its recovery after
 * a restart. Everything it learns it records through the host; everything it needs to resume (the
 * execution status, the stats, the task list, the LLM history) it reads back from the stored
 * events.
 *
 * A step, as OpenHands takes it:
 * 1. actions recorded earlier but never answered (approved after confirmation, or left by a
 *    restart) are executed, and the step ends;
 * 2. the condenser may replace old events with a summary (a Condensation), and the step ends;
 * 3. the LLM is called with the history rebuilt from the events; its tool calls become ActionEvents
 *    (an unknown tool or bad arguments: an ActionEvent without action and an AgentErrorEvent), then
 *    ObservationEvents once executed (after confirmation, in confirmation mode); an answer without
 *    tool calls becomes an agent MessageEvent and the run is finished; `finish` finishes it too.
 */
import {
  SECURITY_RISKS,
  type ActionEvent,
  type ConfirmationPolicy,
  type ConfirmRisky,
  type SecurityAnalyzer,
  type ConversationLifecycleStatus,
  type ExecutionStatus,
  type MessageEvent,
  type MessageToolCall,
  type SecurityRisk,
  type TaskItem,
  type UserMessage,
} from "@acs-toolkit/schema";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { EventFactory } from "../events/factory.js";
import type { Clock, IdGenerator } from "../events/clock.js";
import { SummarizingCondenser, type CondenserOptions, type CondensationPlan } from "../history/condenser.js";
import { messagesOf } from "../history/messages.js";
import { unmatchedActions, viewOf } from "../history/view.js";
import { EXECUTION_STATUSES, lifecycleStatusOf, type AgentSettings, type ConversationHost, type RecordedEvent } from "../host.js";
import { resolveModel } from "../llm/model.js";
import { ConversationStats, costOf, priceOf, type ConversationStatsSnapshot, type ModelPrice } from "../llm/stats.js";
import { LlmError, type ChatTool, type ChatToolCall, type Llm, type LlmFactory, type LlmResponse } from "../llm/types.js";
import type { Logger } from "../logger.js";
import { NO_SANDBOX_MESSAGE, type Sandbox } from "../sandbox/sandbox.js";
import type { ProcessSpawner } from "../sandbox/fork-server.js";
import { SecretMasker, secretEnvironment } from "../secrets.js";
import { withCommonParameters } from "../tools/arguments.js";
import { finishTool, taskTrackerTool, thinkTool } from "../tools/basic.js";
import { fileEditorTool } from "../tools/file-editor.js";
import { connectMcpTools, type McpTools } from "../tools/mcp.js";
import { terminalTool, type TerminalToolOptions } from "../tools/terminal.js";
import { text, ToolArgumentError, type AgentTool } from "../tools/tool.js";

/**
 * What the runtime gives each conversation (see `AgentRuntimeOptions`).
 * @internal
 */
interface ConversationDependencies {
  llm: LlmFactory;
  sandbox: Sandbox | undefined;
  spawner: ProcessSpawner;
  clock: Clock;
  ids: IdGenerator;
  stream: boolean;
  condenser: CondenserOptions;
  terminal: Pick<TerminalToolOptions, "softTimeoutSeconds" | "maxTimeoutSeconds" | "maxOutputChars">;
  mcp: { connectTimeoutMs?: number; callTimeoutMs?: number };
  prices: Readonly<Record<string, ModelPrice>>;
  interruptEvent: boolean;
  classification: boolean;
  systemPrompt: string;
  logger: Logger;
  onClosed(conversationId: string): void;
}

/** `run` while the agent runs (the reference answers 409 with this text). */
export class ConversationAlreadyRunningError extends Error {
  override readonly name = "ConversationAlreadyRunningError";
  constructor(readonly conversationId: string) {
    super("Conversation already running. Wait for completion or pause first.");
  }
}

/** A control called on a closed conversation. */
export class ConversationClosedError extends Error {
  override readonly name = "ConversationClosedError";
  constructor(readonly conversationId: string) {
    super(`Conversation ${conversationId} is closed.`);
  }
}

/** The run stopped at `max_budget_per_task`. */
class BudgetReached extends Error {}
/** The run stopped on an interrupt. */
class Interrupted extends Error {}

/** Statuses a run loop stops in after a step. */
const STOPPING: readonly ExecutionStatus[] = ["finished", "paused", "stuck", "error", "waiting_for_confirmation"];

const pythonList = (names: readonly string[]) => `[${names.map((name) => `'${name}'`).join(", ")}]`;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

interface QueuedMessage {
  /** The event, made when it is recorded (so that its timestamp is in order), or recorded already by the host. */
  event: () => MessageEvent;
  /** False when the host recorded it already. */
  record: boolean;
  done(event?: MessageEvent, error?: unknown): void;
}

/** ConfirmRisky's defaults, from the spec. */
const CONFIRM_RISKY = (openapiDocument.components as { schemas: { ConfirmRisky: { properties: { threshold: { default: NonNullable<ConfirmRisky["threshold"]> }; confirm_unknown: { default: boolean } } } } })
  .schemas.ConfirmRisky.properties;

/** A policy with only its own fields, defaults filled in: the state field as OpenHands records it. */
function normalizedPolicy(policy: ConfirmationPolicy): ConfirmationPolicy {
  if (policy.kind !== "ConfirmRisky") return { kind: policy.kind };
  return { kind: "ConfirmRisky", threshold: policy.threshold ?? CONFIRM_RISKY.threshold.default, confirm_unknown: policy.confirm_unknown ?? CONFIRM_RISKY.confirm_unknown.default };
}

/** OpenHands' confirmation policy for the settings: the state field `confirmation_policy`. */
function confirmationPolicyOf(settings: AgentSettings): ConfirmationPolicy {
  if (!settings.confirmation_mode) return { kind: "NeverConfirm" };
  return normalizedPolicy(settings.security_analyzer === "llm" ? { kind: "ConfirmRisky" } : { kind: "AlwaysConfirm" });
}

/** The state field `security_analyzer` for the settings: the LLM rates its own actions (`llm`), or none. */
function securityAnalyzerOf(settings: AgentSettings): SecurityAnalyzer | null {
  return settings.security_analyzer === "llm" ? { kind: "LLMSecurityAnalyzer" } : null;
}

/** ConfirmRisky's rule: UNKNOWN per `confirm_unknown`, else at or above `threshold`. */
function riskConfirmed(risk: SecurityRisk, policy: ConfirmRisky): boolean {
  if (risk === "UNKNOWN") return policy.confirm_unknown ?? CONFIRM_RISKY.confirm_unknown.default;
  return SECURITY_RISKS.indexOf(risk) >= SECURITY_RISKS.indexOf(policy.threshold ?? CONFIRM_RISKY.threshold.default);
}

export class AgentConversation {
  readonly id: string;
  private status: ExecutionStatus = "idle";
  /** The last `confirmation_policy` recorded (OpenHands' default: NeverConfirm). */
  private confirmationPolicy: ConfirmationPolicy = { kind: "NeverConfirm" };
  /**
   * The policy the settings gave when last applied (JSON), undefined until then: a run applies the
   * settings' policy only when it differs, so one set on the conversation stays until the settings change.
   */
  private settingsPolicy: string | undefined;
  /** The last `security_analyzer` recorded (default none). */
  private securityAnalyzer: SecurityAnalyzer | null = null;
  /** The analyzer the settings gave when last applied (JSON), as {@link settingsPolicy}. */
  private settingsAnalyzer: string | undefined;
  private lifecycle: ConversationLifecycleStatus | undefined;
  private usage = new ConversationStats();
  private readonly tools = new Map<string, AgentTool>();
  private readonly factory: EventFactory;
  private masker = new SecretMasker([]);
  private mcp: McpTools | undefined;
  private readonly problemList: string[] = [];

  // Per run, from the settings read when it starts.
  private llm: Llm | undefined;
  private condenserLlm: Llm | undefined;
  private condenser: SummarizingCondenser | undefined;
  private chatTools: ChatTool[] = [];
  /** Whether this run's tools take `security_risk` (the LLM analyzer when the run started). */
  private riskArgument = false;

  private loop: Promise<void> | undefined;
  private stepAbort: AbortController | undefined;
  private stepping = false;
  private interrupted = false;
  private pauseRequested = false;
  private pauseWaiters: Array<() => void> = [];
  private rerun = false;
  private queued: QueuedMessage[] = [];
  private recording: Promise<void> = Promise.resolve();
  private closed = false;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly host: ConversationHost,
    private readonly deps: ConversationDependencies,
    /** Every event of the conversation, in the order recorded. */
    private readonly events: RecordedEvent[],
    private settings: AgentSettings,
  ) {
    this.id = host.conversationId;
    this.factory = new EventFactory(deps.clock, deps.ids, deps.classification);
  }

  /**
   * Opens a conversation: see `AgentRuntime.open`, the way hosts open one.
   * @internal
   */
  static async open(host: ConversationHost, deps: ConversationDependencies): Promise<AgentConversation> {
    const events = [...(await host.readEvents())];
    const settings = await host.settings();
    const conversation = new AgentConversation(host, deps, events, settings);
    await conversation.reportLifecycle("STARTING");
    try {
      await conversation.setUp();
    } catch (error) {
      await conversation.releaseTools();
      throw error;
    }
    return conversation;
  }

  /** The agent's execution status (`execution_status`). */
  get executionStatus(): ExecutionStatus {
    return this.status;
  }

  /** The lifecycle status last reported to the host. */
  get lifecycleStatus(): ConversationLifecycleStatus | undefined {
    return this.lifecycle;
  }

  /** Token usage and cost so far, in the `stats` snapshot form. */
  get stats(): ConversationStatsSnapshot {
    return this.usage.snapshot();
  }

  /** True from the call of {@link close} on: messages and controls are refused (ConversationClosedError). */
  get isClosed(): boolean {
    return this.closed;
  }

  /** True while a run loop is active. */
  get running(): boolean {
    return this.loop !== undefined;
  }

  /** What does not work in this conversation (an MCP server down, no sandbox), one sentence each. */
  get problems(): readonly string[] {
    return this.problemList;
  }

  /** The tools offered to the LLM, by name. */
  get toolNames(): string[] {
    return [...this.tools.keys()];
  }

  private async setUp(): Promise<void> {
    for (const event of this.events) {
      if (event.kind !== "ConversationStateUpdateEvent") continue;
      if (event.key === "execution_status" && (EXECUTION_STATUSES as readonly unknown[]).includes(event.value)) this.status = event.value as ExecutionStatus;
      if (event.key === "stats") this.usage = ConversationStats.fromSnapshot(event.value);
      if (event.key === "confirmation_policy" && typeof event.value === "object" && event.value !== null) {
        this.confirmationPolicy = event.value as ConfirmationPolicy;
        // Recorded before: what the settings say now counts as applied (a policy set on the conversation stays).
        this.settingsPolicy = JSON.stringify(confirmationPolicyOf(this.settings));
      }
      if (event.key === "security_analyzer") {
        this.securityAnalyzer = typeof event.value === "object" ? (event.value as SecurityAnalyzer | null) : null;
        this.settingsAnalyzer = JSON.stringify(securityAnalyzerOf(this.settings));
      }
    }
    const secrets = secretEnvironment(this.settings);
    this.masker = new SecretMasker(secrets.values);
    if (secrets.skipped.length) {
      this.deps.logger.warn({ conversationId: this.id, names: secrets.skipped }, "custom secrets whose names are not environment variable names are not given to the terminal");
    }
    const { workspaceDir, tmpDir } = this.host;
    const builtIn = [
      terminalTool({ sandbox: this.deps.sandbox, spawner: this.deps.spawner, workspaceDir, tmpDir, env: secrets.env, ...this.deps.terminal }),
      fileEditorTool({ workspaceDir, owner: this.deps.sandbox?.owner }),
      taskTrackerTool(this.lastTaskList()),
      thinkTool(),
      finishTool(),
    ];
    for (const tool of builtIn) this.tools.set(tool.name, tool);
    if (!this.deps.sandbox) this.problemList.push(NO_SANDBOX_MESSAGE);
    this.mcp = await connectMcpTools(this.settings.mcp_config, {
      sandbox: this.deps.sandbox,
      workspaceDir,
      tmpDir,
      reservedNames: [...this.tools.keys()],
      ...this.deps.mcp,
    });
    for (const tool of this.mcp.tools) this.tools.set(tool.name, tool);
    for (const problem of this.mcp.problems) {
      const masked = this.masker.mask(problem);
      this.problemList.push(masked);
      this.deps.logger.warn({ conversationId: this.id }, masked);
    }

    if (!this.events.some((event) => event.kind === "SystemPromptEvent")) {
      await this.record(this.factory.systemPrompt(this.deps.systemPrompt, [...this.tools.values()].map((tool) => tool.definition), this.dynamicContext()));
    }
    // §2 #7: a conversation stored as running was cut off by a restart.
    if (this.status === "running") {
      await this.setExecutionStatus("error");
      const [first] = unmatchedActions(this.events);
      if (first) {
        await this.record(
          this.factory.agentError(
            first.tool_name,
            first.tool_call_id,
            "A restart occurred while this tool was in progress. This may indicate a fatal memory error or system crash. The tool execution was interrupted and did not complete.",
          ),
        );
      }
    }
    await this.reportLifecycle();
  }

  private dynamicContext(): string {
    const now = this.deps.clock.now().toISOString().replace("Z", "");
    const terminal = this.deps.sandbox ? "" : `\n${NO_SANDBOX_MESSAGE}`;
    return (
      `<CURRENT_DATETIME>\nThe current date and time is: ${now}\n</CURRENT_DATETIME>\n\n` +
      `<WORKSPACE>\nYour workspace is ${this.host.workspaceDir}: the terminal starts there, and the file editor works on absolute paths inside it.${terminal}\n</WORKSPACE>`
    );
  }

  /** The task list of the last `plan` recorded (the task tracker's state). */
  private lastTaskList(): TaskItem[] {
    for (let index = this.events.length - 1; index >= 0; index--) {
      const event = this.events[index]!;
      if (event.kind === "ObservationEvent" && event.observation.kind === "TaskTrackerObservation" && event.observation.command === "plan") {
        return event.observation.task_list ?? [];
      }
    }
    return [];
  }

  // ── recording ──────────────────────────────────────────────────────────────

  /** Records events in call order (the host stores them one batch after another). */
  private record(...events: RecordedEvent[]): Promise<void> {
    this.events.push(...events);
    const stored = this.recording.then(() => this.host.record(events));
    this.recording = stored.catch(() => {});
    return stored;
  }

  private async setExecutionStatus(next: ExecutionStatus): Promise<void> {
    if (next === this.status) return;
    this.status = next;
    await this.record(this.factory.stateUpdate("execution_status", next));
    await this.reportLifecycle();
  }

  private async reportLifecycle(status: ConversationLifecycleStatus = lifecycleStatusOf(this.status)): Promise<void> {
    if (status === this.lifecycle) return;
    this.lifecycle = status;
    await this.host.setStatus(status);
  }

  // ── controls ───────────────────────────────────────────────────────────────

  /**
   * Starts the agent loop (`POST …/run`). Returns at once with a promise settled when this run ends
   * (it never rejects: failures become a ConversationErrorEvent and status `error`). On a
   * `finished` conversation it does nothing, as the reference.
   * @throws ConversationAlreadyRunningError synchronously when a run is active (the reference: 409)
   */
  run(): Promise<void> {
    if (this.closed) throw new ConversationClosedError(this.id);
    if (this.loop) throw new ConversationAlreadyRunningError(this.id);
    const loop = this.runLoop().finally(() => {
      if (this.loop === loop) this.loop = undefined;
      this.settled();
      if (this.rerun && !this.closed) {
        this.rerun = false;
        void this.run();
      }
    });
    this.loop = loop;
    return loop;
  }

  /**
   * Pauses the agent (`POST …/pause`): between steps (an in-flight LLM call and its tools finish
   * first), status `paused` and a PauseEvent. Resolves once paused, or once the run ended otherwise.
   * Idle: paused at once. Other statuses: nothing changes.
   */
  async pause(): Promise<void> {
    if (this.closed) return;
    if (this.status !== "paused") {
      if (this.loop) {
        this.pauseRequested = true;
        await new Promise<void>((resolve) => this.pauseWaiters.push(resolve));
      } else if (this.status === "idle" || this.status === "running") await this.enterPause();
    }
    // The agent server publishes its state after every pause, changed or not.
    this.settled();
  }

  /**
   * Interrupts the agent (`POST …/interrupt`): cancels the in-flight LLM call (a running terminal
   * command gets Ctrl-C), then status `paused` and an InterruptEvent. Without an active run it
   * pauses. Resolves once the run has stopped.
   */
  async interrupt(): Promise<void> {
    const loop = this.loop;
    if (!loop) return this.pause();
    this.interrupted = true;
    this.stepAbort?.abort();
    await loop;
    this.settled();
  }

  /** Tells the host the state is settled (see ConversationHost.stateSettled), once recorded. */
  private settled(): void {
    void this.recording.then(() => {
      try {
        this.host.stateSettled?.();
      } catch (error) {
        this.deps.logger.warn({ conversationId: this.id, error: messageOf(error) }, "the host's stateSettled failed");
      }
    });
  }

  /**
   * Sets the confirmation policy (`POST …/confirmation_policy`), recorded when it changes and applied
   * from the next step. It stays until set again or until the settings' policy changes.
   */
  async setConfirmationPolicy(policy: ConfirmationPolicy): Promise<void> {
    if (this.closed) throw new ConversationClosedError(this.id);
    this.settingsPolicy = JSON.stringify(confirmationPolicyOf(await this.host.settings()));
    await this.applyConfirmationPolicy(normalizedPolicy(policy));
  }

  /**
   * Sets the security analyzer (`POST …/security_analyzer`; null: none), recorded when it changes and
   * applied from the next run (the tools' `security_risk` argument). It stays until set again or
   * until the settings' analyzer changes.
   */
  async setSecurityAnalyzer(analyzer: SecurityAnalyzer | null): Promise<void> {
    if (this.closed) throw new ConversationClosedError(this.id);
    this.settingsAnalyzer = JSON.stringify(securityAnalyzerOf(await this.host.settings()));
    await this.applySecurityAnalyzer(analyzer === null ? null : { kind: analyzer.kind });
  }

  private async applySecurityAnalyzer(analyzer: SecurityAnalyzer | null): Promise<void> {
    if (JSON.stringify(analyzer) === JSON.stringify(this.securityAnalyzer)) return;
    this.securityAnalyzer = analyzer;
    await this.record(this.factory.stateUpdate("security_analyzer", analyzer));
  }

  private async applyConfirmationPolicy(policy: ConfirmationPolicy): Promise<void> {
    if (JSON.stringify(policy) === JSON.stringify(this.confirmationPolicy)) return;
    this.confirmationPolicy = policy;
    await this.record(this.factory.stateUpdate("confirmation_policy", policy));
  }

  /**
   * Answers a confirmation request (`POST …/events/respond_to_confirmation`). Accept: runs the
   * pending actions (as `run`; an active run is left alone). Reject: a UserRejectObservation for each
   * pending action, status `idle`.
   */
  async respondToConfirmation(response: { accept: boolean; reason?: string }): Promise<void> {
    if (this.closed) throw new ConversationClosedError(this.id);
    if (response.accept) {
      if (!this.loop) void this.run();
      return;
    }
    const pending = unmatchedActions(this.events);
    if (this.status === "waiting_for_confirmation") await this.setExecutionStatus("idle");
    for (const action of pending) await this.record(this.factory.userReject(action, response.reason ?? "User rejected the action."));
  }

  /**
   * Records a user message (`POST …/events`, a live-channel frame). While a step runs it is recorded
   * when the step ends. A `finished` (or `stuck`) conversation becomes `idle`. With `run`, the agent
   * runs: now, or when the active run ends (the reference's queued re-run).
   */
  async sendMessage(message: UserMessage, options: { run?: boolean } = {}): Promise<MessageEvent> {
    if (this.closed) throw new ConversationClosedError(this.id);
    if (message.role !== "user") throw new TypeError("Only user messages are allowed to be sent to the agent.");
    const event = await this.accept(() => this.factory.userMessage(message), true);
    if (options.run) this.runNowOrAfter();
    return event;
  }

  /**
   * For a host that records user messages itself: the message `event` is stored already. Same
   * status and `run` semantics as {@link sendMessage}.
   */
  async userMessageRecorded(event: MessageEvent, options: { run?: boolean } = {}): Promise<void> {
    if (this.closed) throw new ConversationClosedError(this.id);
    await this.accept(() => event, false);
    if (options.run) this.runNowOrAfter();
  }

  /** Records a CondensationRequest: the next step condenses the history (condenser on). */
  async requestCondensation(): Promise<void> {
    if (this.closed) throw new ConversationClosedError(this.id);
    await this.record(this.factory.condensationRequest());
  }

  /** Resolves when no run is active (re-runs included). */
  async idle(): Promise<void> {
    while (this.loop) await this.loop;
  }

  /**
   * Closes the conversation: an active run is interrupted, the shell and MCP servers stop, and the
   * lifecycle status becomes STOPPED. Its events stay; `AgentRuntime.open` resumes it.
   */
  close(): Promise<void> {
    // A second call waits for the first one's work: "closed" means released and STOPPED.
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.closed = true;
    this.rerun = false;
    if (this.loop) {
      this.interrupted = true;
      this.stepAbort?.abort();
      await this.idle();
    }
    for (const queued of this.queued.splice(0)) queued.done(undefined, new ConversationClosedError(this.id));
    await this.releaseTools();
    await this.recording;
    await this.reportLifecycle("STOPPED").catch((error: unknown) => this.deps.logger.error({ conversationId: this.id, error: messageOf(error) }, "reporting STOPPED failed"));
    this.deps.onClosed(this.id);
  }

  private async releaseTools(): Promise<void> {
    await Promise.all([...this.tools.values()].map((tool) => tool.close?.().catch(() => {})));
    await this.mcp?.close();
  }

  private async accept(make: () => MessageEvent, record: boolean): Promise<MessageEvent> {
    if (this.stepping) {
      return new Promise<MessageEvent>((resolve, reject) =>
        this.queued.push({ event: make, record, done: (event, error) => (error || !event ? reject(error) : resolve(event)) }),
      );
    }
    return this.take(make(), record);
  }

  private async take(event: MessageEvent, record: boolean): Promise<MessageEvent> {
    if (record) await this.record(event);
    else this.events.push(event);
    if (this.status === "finished" || this.status === "stuck") await this.setExecutionStatus("idle");
    return event;
  }

  private async flushMessages(): Promise<void> {
    for (const queued of this.queued.splice(0)) {
      try {
        queued.done(await this.take(queued.event(), queued.record));
      } catch (error) {
        queued.done(undefined, error);
        throw error;
      }
    }
  }

  private runNowOrAfter(): void {
    if (this.loop) this.rerun = true;
    else void this.run();
  }

  // ── the run loop ───────────────────────────────────────────────────────────

  private async runLoop(): Promise<void> {
    this.interrupted = false;
    try {
      await this.prepareRun();
      if (this.status === "finished") return;
      await this.setExecutionStatus("running");
      const maxIterations = this.settings.max_iterations ?? 500;
      for (let iteration = 0; ; ) {
        if (this.interrupted) throw new Interrupted();
        if (this.pauseRequested) {
          await this.enterPause();
          break;
        }
        if (this.status === "waiting_for_confirmation") await this.setExecutionStatus("running");
        this.stepping = true;
        try {
          await this.step();
        } finally {
          this.stepping = false;
        }
        iteration++;
        const stop = STOPPING.includes(this.status);
        await this.flushMessages();
        if (this.interrupted) throw new Interrupted();
        if (stop) break;
        if (iteration >= maxIterations) {
          await this.fail(new LlmError("MaxIterationsReached", `Agent reached maximum iterations limit (${maxIterations}).`));
          break;
        }
      }
    } catch (error) {
      this.stepping = false;
      await this.flushMessages().catch(() => {});
      if (this.interrupted || (error instanceof LlmError && error.code === "UserCancelledError")) await this.enterInterrupted();
      else await this.fail(error);
    } finally {
      this.pauseRequested = false;
      for (const resolve of this.pauseWaiters.splice(0)) resolve();
    }
  }

  /** Reads the settings for this run: the model, limits, condenser and secrets may have changed. */
  private async prepareRun(): Promise<void> {
    this.settings = await this.host.settings();
    // The state fields change with the settings, recorded as OpenHands records a state change.
    const policy = confirmationPolicyOf(this.settings);
    if (JSON.stringify(policy) !== this.settingsPolicy) {
      this.settingsPolicy = JSON.stringify(policy);
      await this.applyConfirmationPolicy(policy);
    }
    const analyzer = securityAnalyzerOf(this.settings);
    if (JSON.stringify(analyzer) !== this.settingsAnalyzer) {
      this.settingsAnalyzer = JSON.stringify(analyzer);
      await this.applySecurityAnalyzer(analyzer);
    }
    this.masker = new SecretMasker(secretEnvironment(this.settings).values);
    const config = { model: this.settings.llm_model ?? "", apiKey: this.settings.llm_api_key ?? null, baseUrl: this.settings.llm_base_url ?? null };
    resolveModel(config.model, config.baseUrl);
    this.llm = this.deps.llm({ ...config, usageId: "agent", stream: this.deps.stream });
    const condense = this.settings.enable_default_condenser ?? true;
    this.condenser = condense ? new SummarizingCondenser(this.deps.condenser) : undefined;
    this.condenserLlm = condense ? this.deps.llm({ ...config, usageId: "condenser", stream: false }) : undefined;
    this.riskArgument = this.llmRatesRisk;
    const securityRisk = this.riskArgument;
    this.chatTools = [...this.tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.definition.description,
      parameters: withCommonParameters(tool.parameters, { securityRisk: securityRisk && !tool.readOnly }),
    }));
    const budget = this.settings.max_budget_per_task;
    if (budget != null && !priceOf(resolveModel(config.model, config.baseUrl).model, this.deps.prices)) {
      this.deps.logger.warn(
        { conversationId: this.id, model: config.model, budget },
        "no price is known for this model: max_budget_per_task only counts costs the provider reports (pass `pricing` to the runtime)",
      );
    }
  }

  private async enterPause(): Promise<void> {
    this.pauseRequested = false;
    await this.setExecutionStatus("paused");
    await this.record(this.factory.pause());
  }

  private async enterInterrupted(): Promise<void> {
    this.interrupted = false;
    await this.setExecutionStatus("paused");
    await this.record(this.deps.interruptEvent ? this.factory.interrupt() : this.factory.pause());
  }

  /** Status `error` and a ConversationErrorEvent naming the failure. */
  private async fail(error: unknown): Promise<void> {
    const code = error instanceof LlmError ? error.code : error instanceof BudgetReached ? "MaxBudgetReached" : error instanceof Error ? error.name || "Error" : "Error";
    const detail = this.masker.mask(messageOf(error));
    try {
      await this.setExecutionStatus("error");
      await this.record(this.factory.conversationError(code, detail));
    } catch (recordError) {
      this.deps.logger.error({ conversationId: this.id, code, error: this.masker.mask(messageOf(recordError)) }, "the run failed and its error could not be recorded");
    }
  }

  private async step(): Promise<void> {
    const abort = new AbortController();
    this.stepAbort = abort;
    try {
      const pending = unmatchedActions(this.events);
      if (pending.length) {
        await this.execute(pending, abort.signal);
        return;
      }
      const view = viewOf(this.events);
      if (this.condenser?.shouldCondense(view)) {
        const plan = this.condenser.plan(view);
        if (plan) {
          await this.condense(plan, abort.signal);
          return;
        }
      }
      this.checkBudget();
      let response: LlmResponse;
      try {
        response = await this.llm!.complete({
          messages: messagesOf(view),
          tools: this.chatTools,
          signal: abort.signal,
          ...(this.deps.stream
            ? { onDelta: (delta) => this.host.publish(this.factory.streamingDelta(this.masker.mask(delta.content), this.masker.mask(delta.reasoning_content))) }
            : {}),
        });
      } catch (error) {
        // OpenHands: a context window exceeded asks the condenser for a condensation.
        if (error instanceof LlmError && error.code === "LLMContextWindowExceedError" && this.condenser && !view.unhandledCondensationRequest) {
          await this.record(this.factory.condensationRequest());
          return;
        }
        throw error;
      }
      await this.account("agent", this.llm!, response);
      if (response.tool_calls.length === 0) {
        await this.record(this.factory.agentMessage(this.masker.mask(response.content), this.masker.mask(response.reasoning_content), response.id));
        await this.setExecutionStatus("finished");
        return;
      }
      const actions: ActionEvent[] = [];
      for (const [index, call] of response.tool_calls.entries()) {
        const action = await this.actionFor(call, response, index === 0);
        if (action) actions.push(action);
      }
      if (this.needsConfirmation(actions)) {
        await this.setExecutionStatus("waiting_for_confirmation");
        return;
      }
      await this.execute(actions, abort.signal);
    } finally {
      this.stepAbort = undefined;
    }
  }

  private checkBudget(): void {
    const budget = this.settings.max_budget_per_task;
    const spent = this.usage.totalCost;
    if (budget != null && spent >= budget) {
      throw new BudgetReached(`Agent reached maximum budget for conversation: spent $${spent.toFixed(4)}, max_budget_per_task is $${budget.toFixed(4)}.`);
    }
  }

  /** Adds a completion to the stats and records them (`stats`, snapshot form). */
  private async account(usageId: string, llm: Llm, response: LlmResponse): Promise<void> {
    const model = resolveModel(llm.model, this.settings.llm_base_url).model;
    const cost = costOf(response.usage, priceOf(model, this.deps.prices));
    this.usage.add(usageId, llm.model, response.usage, cost, this.settings.max_budget_per_task ?? null);
    await this.record(this.factory.stateUpdate("stats", this.usage.snapshot()));
  }

  private async condense(plan: CondensationPlan, signal: AbortSignal): Promise<void> {
    const response = await this.condenserLlm!.complete({ messages: [{ role: "user", content: plan.prompt }], tools: [], signal });
    await this.account("condenser", this.condenserLlm!, response);
    await this.record(this.factory.condensation(plan.forgottenEventIds, this.masker.mask(response.content ?? ""), plan.summaryOffset, response.id));
  }

  /**
   * The ActionEvent of one tool call, recorded; undefined when the call cannot run (then an
   * ActionEvent without action and an AgentErrorEvent are recorded, and the loop goes on).
   */
  private async actionFor(call: ChatToolCall, response: LlmResponse, first: boolean): Promise<ActionEvent | undefined> {
    const toolCall: MessageToolCall = { id: call.id || `call_${this.deps.ids()}`, name: call.name, arguments: call.arguments, origin: "completion" };
    const base = {
      thought: first && response.content ? [text(this.masker.mask(response.content))] : [],
      reasoningContent: first ? this.masker.mask(response.reasoning_content) : null,
      toolCall,
      llmResponseId: response.id,
    };
    const refuse = async (error: string) => {
      await this.record(this.factory.action({ ...base, action: null, securityRisk: "UNKNOWN", summary: null }));
      await this.record(this.factory.agentError(call.name, toolCall.id, this.masker.mask(error)));
      return undefined;
    };
    const tool = this.tools.get(call.name);
    if (!tool) return refuse(`Tool '${call.name}' not found. Available: ${pythonList([...this.tools.keys()])}`);
    const invalid = (reason: string) => refuse(`Error validating args ${call.arguments} for tool '${tool.name}': ${reason}`);
    let args: unknown;
    try {
      args = JSON.parse(call.arguments.trim() === "" ? "{}" : call.arguments);
    } catch (error) {
      return invalid(messageOf(error));
    }
    if (!isObject(args)) return invalid("the arguments must be a JSON object");
    const { summary, security_risk: risk, ...rest } = args;
    try {
      const securityRisk = this.securityRisk(tool, risk);
      const action = tool.toAction(rest);
      const event = this.factory.action({ ...base, action, securityRisk, summary: typeof summary === "string" ? summary : null });
      await this.record(event);
      return event;
    } catch (error) {
      if (error instanceof ToolArgumentError) return invalid(error.message);
      throw error;
    }
  }

  /** OpenHands' `_extract_security_risk`. */
  private securityRisk(tool: AgentTool, raw: unknown): SecurityRisk {
    if (tool.readOnly) return "UNKNOWN";
    if (raw == null) {
      if (this.riskArgument) throw new ToolArgumentError(`Failed to provide security_risk field in tool '${tool.name}'`);
      return "UNKNOWN";
    }
    if (!(SECURITY_RISKS as readonly unknown[]).includes(raw)) throw new ToolArgumentError(`'${String(raw)}' is not a valid SecurityRisk`);
    return raw as SecurityRisk;
  }

  /** The LLM security analyzer: the model rates each action's `security_risk` itself. */
  private get llmRatesRisk(): boolean {
    return this.securityAnalyzer?.kind === "LLMSecurityAnalyzer";
  }

  /** The confirmation policy (NeverConfirm, AlwaysConfirm, ConfirmRisky); a lone finish or think is never held. */
  private needsConfirmation(actions: readonly ActionEvent[]): boolean {
    if (actions.length === 0) return false;
    const only = actions.length === 1 ? actions[0]!.action?.kind : undefined;
    if (only === "FinishAction" || only === "ThinkAction") return false;
    const policy = this.confirmationPolicy;
    if (policy.kind === "AlwaysConfirm") return true;
    if (policy.kind === "ConfirmRisky") return actions.some((action) => riskConfirmed(action.security_risk ?? "UNKNOWN", policy));
    return false;
  }

  private async execute(actions: readonly ActionEvent[], signal: AbortSignal): Promise<void> {
    for (const action of actions) {
      const tool = this.tools.get(action.tool_name);
      let observation;
      try {
        if (!tool || !action.action) throw new Error(`the tool '${action.tool_name}' is not available in this conversation`);
        observation = await tool.execute(action.action, { workspaceDir: this.host.workspaceDir, signal, masker: this.masker });
      } catch (error) {
        await this.record(this.factory.agentError(action.tool_name, action.tool_call_id, this.masker.mask(`Error executing tool '${action.tool_name}': ${messageOf(error)}`)));
        continue;
      }
      await this.record(this.factory.observation(action, this.masker.maskDeep(observation)));
      if (action.action.kind === "FinishAction") await this.setExecutionStatus("finished");
    }
  }
}
