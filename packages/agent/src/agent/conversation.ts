/**
 * One conversation under the agent: the loop OpenHands runs (`LocalConversation.run` and
 * `Agent.step`), its controls (run, pause, interrupt, confirmation, messages) and its recovery after
 * a restart. Everything it learns it records through the host; everything it needs to resume (the
 * execution status, the stats, the task list, the LLM history) it reads back from the stored
 * events.
 *
 * Every event recorded names its parent (`parent_id`, the tree's HEAD). Before each step the stuck
 * detector looks for a loop (status `stuck` ends the run). A step, as OpenHands takes it:
 * 1. actions recorded earlier but never answered (approved after confirmation, or left by a
 *    restart) are executed, and the step ends;
 * 2. the condenser may replace old events with a summary (a Condensation), and the step ends;
 * 3. the LLM is called with the history rebuilt from the events; its tool calls become ActionEvents
 *    (an unknown tool or bad arguments: an ActionEvent without action and an AgentErrorEvent), then
 *    ObservationEvents once executed (after confirmation, in confirmation mode); an answer without
 *    tool calls becomes an agent MessageEvent and the run is finished; `finish` finishes it too.
 */
import type {
  ActionEvent,
  ConfirmationPolicy,
  SecurityAnalyzer,
  ConversationLifecycleStatus,
  ExecutionStatus,
  MessageEvent,
  UserMessage,
} from "@acs-toolkit/schema";
import { ConversationContext } from "../context/conversation-context.js";
import { EventFactory } from "../events/factory.js";
import { EventTree } from "../events/tree.js";
import type { SummarizingCondenser, CondensationPlan } from "../history/condenser.js";
import { messagesOf } from "../history/messages.js";
import { unmatchedActions, viewOf } from "../history/view.js";
import { lifecycleStatusOf, type AgentSettings, type ConversationHost, type RecordedEvent } from "../host.js";
import { resolveModel } from "../llm/model.js";
import { costOf, priceOf, type ConversationStats, type ConversationStatsSnapshot } from "../llm/stats.js";
import { LlmError, type ChatTool, type Llm, type LlmResponse } from "../llm/types.js";
import { SecretMasker, secretEnvironment } from "../secrets.js";
import type { McpTools } from "../tools/mcp.js";
import type { AgentTool } from "../tools/tool.js";
import { executeActions, recordActionFor, type ActionContext } from "./actions.js";
import { checkBudget, ConversationAlreadyRunningError, ConversationClosedError, failureCodeOf, Interrupted } from "./conversation-errors.js";
import { chatToolsOf, restoredState, runModels, setUpTools, warnOfUnpricedBudget, type ConversationDependencies } from "./conversation-setup.js";
import { HeldMessages } from "./held-messages.js";
import { restartError } from "./restart.js";
import { needsConfirmation, SecurityPolicyState } from "./security-policy.js";
import { STUCK_SCAN_WINDOW, StuckDetector } from "./stuck-detector.js";

export { ConversationAlreadyRunningError, ConversationClosedError } from "./conversation-errors.js";

/** Statuses a run loop stops in after a step. */
const STOPPING: readonly ExecutionStatus[] = ["finished", "paused", "stuck", "error", "waiting_for_confirmation"];

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class AgentConversation {
  readonly id: string;
  private status: ExecutionStatus;
  private readonly security: SecurityPolicyState;
  private lifecycle: ConversationLifecycleStatus | undefined;
  private usage: ConversationStats;
  private tools = new Map<string, AgentTool>();
  private readonly factory: EventFactory;
  /** Stamps `parent_id` on what is recorded and knows the active branch. */
  private readonly tree: EventTree;
  private readonly stuck: StuckDetector | undefined;
  /** The conversation's own `max_iterations` (recorded at its start), over the settings'. */
  private readonly iterationLimit: number | undefined;
  /** The project skills and the system prompt, readied at the first message or run. */
  private readonly context: ConversationContext;
  private masker = new SecretMasker([]);
  private mcp: McpTools | undefined;
  private problemList: string[] = [];

  // Per run, from the settings read when it starts.
  private llm: Llm | undefined;
  private condenserLlm: Llm | undefined;
  private condenser: SummarizingCondenser | undefined;
  private contextWindow = 0;
  private chatTools: ChatTool[] = [];
  /** Whether this run reads the actions' `security_risk` (the LLM analyzer when the run started). */
  private riskRated = false;

  private loop: Promise<void> | undefined;
  private stepAbort: AbortController | undefined;
  private stepping = false;
  private interrupted = false;
  private pauseRequested = false;
  private pauseWaiters: Array<() => void> = [];
  private rerun = false;
  private readonly held = new HeldMessages();
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
    this.tree = new EventTree(events);
    const restored = restoredState(events, settings);
    this.stuck = deps.stuckDetection && restored.stuckDetection ? new StuckDetector(deps.stuckDetection === true ? {} : deps.stuckDetection) : undefined;
    this.iterationLimit = restored.maxIterations;
    this.status = restored.status;
    this.usage = restored.usage;
    this.security = new SecurityPolicyState(restored, (key, value) => this.record(this.factory.stateUpdate(key, value)));
    this.context = new ConversationContext({ conversationId: this.id, workspaceDir: host.workspaceDir, sandboxed: deps.sandbox !== undefined, inlinePrompt: deps.systemPrompt, clock: deps.clock, logger: deps.logger });
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

  /** HEAD of the conversation tree (OpenHands' `leaf_event_id`): the parent of the next event; undefined while none. */
  get leafEventId(): string | undefined {
    return this.tree.leafId;
  }

  /** The tools offered to the LLM, by name. */
  get toolNames(): string[] {
    return [...this.tools.keys()];
  }

  private async setUp(): Promise<void> {
    const { workspaceDir, tmpDir } = this.host;
    ({ tools: this.tools, mcp: this.mcp, masker: this.masker, problems: this.problemList } = await setUpTools(
      { id: this.id, workspaceDir, tmpDir, settings: this.settings, events: this.events },
      this.deps,
    ));
    // A conversation stored as running was cut off by a restart.
    if (this.status === "running") {
      await this.setExecutionStatus("error");
      const error = restartError(this.events, this.factory);
      if (error) await this.record(error);
    }
    await this.reportLifecycle();
  }

  // ── recording ──────────────────────────────────────────────────────────────

  /**
   * Records events in call order (the host stores them one batch after another), each with its
   * `parent_id`; resolves with them as stored.
   */
  private record(...events: RecordedEvent[]): Promise<RecordedEvent[]> {
    const stamped = events.map((event) => this.tree.append(event));
    const stored = this.recording.then(() => this.host.record(stamped));
    this.recording = stored.catch(() => {});
    return stored.then(() => stamped);
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
    await this.host.setStatus(status, this.host.recordsStatusEvents ? this.tree.recordedOutside() : undefined);
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
    await this.security.setPolicy(policy, await this.host.settings());
  }

  /**
   * Sets the security analyzer (`POST …/security_analyzer`; null: none), recorded when it changes and
   * applied from the next run (the actions' `security_risk` counts). It stays until set again or
   * until the settings' analyzer changes.
   */
  async setSecurityAnalyzer(analyzer: SecurityAnalyzer | null): Promise<void> {
    if (this.closed) throw new ConversationClosedError(this.id);
    await this.security.setAnalyzer(analyzer, await this.host.settings());
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
    await this.prepare();
    const event = await this.accept(() => this.context.userMessage(this.factory.userMessage(message), this.events), true);
    if (options.run) this.runNowOrAfter();
    return event;
  }

  /**
   * For a host that records user messages itself: the message `event` is stored already. Same
   * status and `run` semantics as {@link sendMessage}.
   */
  async userMessageRecorded(event: MessageEvent, options: { run?: boolean } = {}): Promise<void> {
    if (this.closed) throw new ConversationClosedError(this.id);
    await this.prepare();
    await this.accept(() => event, false);
    if (options.run) this.runNowOrAfter();
  }

  /**
   * Reads the workspace's project skills (AGENTS.md, `.openhands/skills/`…) and records the
   * SystemPromptEvent if the conversation has none, as OpenHands readies its agent at the first
   * message or run. `sendMessage`, `userMessageRecorded` and `run` call it; a host that records
   * user messages itself calls it before recording a new conversation's first one.
   */
  async prepare(): Promise<void> {
    if (this.closed) throw new ConversationClosedError(this.id);
    await this.context.ready(
      this.events,
      () => this.host.settings(),
      ({ prompt, dynamicContext }) => this.record(this.factory.systemPrompt(prompt, [...this.tools.values()].map((tool) => tool.definition), dynamicContext)),
    );
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
    this.held.refuse(() => new ConversationClosedError(this.id));
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
    if (this.stepping) return this.held.hold(make, record);
    return this.take(make(), record);
  }

  private async take(event: MessageEvent, record: boolean): Promise<MessageEvent> {
    if (record) [event] = (await this.record(event)) as [MessageEvent];
    else this.tree.adopt(event);
    if (this.status === "finished" || this.status === "stuck") await this.setExecutionStatus("idle");
    return event;
  }

  private flushMessages(): Promise<void> {
    return this.held.release((event, record) => this.take(event, record));
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
      const maxIterations = this.iterationLimit ?? this.settings.max_iterations ?? 500;
      for (let iteration = 0; ; ) {
        if (this.interrupted) throw new Interrupted();
        if (this.pauseRequested) {
          await this.enterPause();
          break;
        }
        if (await this.checkStuck()) break;
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
    await this.prepare();
    this.settings = await this.host.settings();
    // The state fields change with the settings, recorded as OpenHands records a state change.
    await this.security.followSettings(this.settings);
    this.masker = new SecretMasker(secretEnvironment(this.settings).values);
    ({ llm: this.llm, contextWindow: this.contextWindow, condenser: this.condenser, condenserLlm: this.condenserLlm } = runModels(this.settings, this.deps));
    this.riskRated = this.security.llmRatesRisk;
    this.chatTools = chatToolsOf(this.tools.values());
    warnOfUnpricedBudget(this.id, this.settings, this.deps);
  }

  /**
   * The stuck detector before a step (openhands-sdk/openhands/sdk/conversation/impl/local_conversation.py
   * `_check_stuck_or_nudge`): a nudge is recorded and the step runs; a stuck agent gets status
   * `stuck` and the run stops (true).
   */
  private async checkStuck(): Promise<boolean> {
    const verdict = this.stuck?.check(this.tree.branch(STUCK_SCAN_WINDOW));
    if (verdict === "stuck") await this.setExecutionStatus("stuck");
    else if (verdict) await this.record(this.factory.environmentMessage(this.masker.mask(verdict.nudge)));
    return verdict === "stuck";
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
    const code = failureCodeOf(error);
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
        await executeActions(this.actionContext(), pending, abort.signal);
        return;
      }
      const view = viewOf(this.events);
      const plan = this.condenser?.plan(view, this.chatTools);
      if (plan) {
        await this.condense(plan, abort.signal);
        return;
      }
      checkBudget(this.settings.max_budget_per_task, this.usage.totalCost);
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
        const action = await recordActionFor(this.actionContext(), call, response, index === 0, this.riskRated);
        if (action) actions.push(action);
      }
      if (needsConfirmation(actions, this.security.policy)) {
        await this.setExecutionStatus("waiting_for_confirmation");
        return;
      }
      await executeActions(this.actionContext(), actions, abort.signal);
    } finally {
      this.stepAbort = undefined;
    }
  }

  /** Adds a completion to the stats and records them (`stats`, snapshot form). */
  private async account(usageId: string, llm: Llm, response: LlmResponse): Promise<void> {
    const model = resolveModel(llm.model, this.settings.llm_base_url).model;
    const cost = costOf(response.usage, priceOf(model, this.deps.prices));
    this.usage.add(usageId, llm.model, response.usage, cost, this.settings.max_budget_per_task ?? null, this.contextWindow);
    await this.record(this.factory.stateUpdate("stats", this.usage.snapshot()));
  }

  private async condense(plan: CondensationPlan, signal: AbortSignal): Promise<void> {
    const response = await this.condenserLlm!.complete({ messages: [{ role: "user", content: plan.prompt }], tools: [], signal });
    await this.account("condenser", this.condenserLlm!, response);
    await this.record(this.factory.condensation(plan.forgottenEventIds, this.masker.mask(response.content ?? ""), plan.summaryOffset, response.id));
  }

  /** What recording and executing actions needs, with this run's masker. */
  private actionContext(): ActionContext {
    return {
      tools: this.tools,
      factory: this.factory,
      ids: this.deps.ids,
      masker: this.masker,
      workspaceDir: this.host.workspaceDir,
      record: (event) => this.record(event),
      finished: () => this.setExecutionStatus("finished"),
    };
  }
}
