/**
 * The agent runtime: one object per server, holding every open conversation and the dependencies
 * they share (the LLM factory, the sandbox, the clock, the id generator), all passed in.
 */
import type { Clock, IdGenerator } from "../events/clock.js";
import { systemClock, uuidIds } from "../events/clock.js";
import { SummarizingCondenser, type CondenserOptions } from "../history/condenser.js";
import type { ConversationHost } from "../host.js";
import { openAiLlmFactory } from "../llm/openai.js";
import { DEFAULT_CONTEXT_WINDOWS } from "../llm/model.js";
import { DEFAULT_PRICES, type ModelPrice } from "../llm/stats.js";
import type { LlmFactory } from "../llm/types.js";
import { silentLogger, type Logger } from "../logger.js";
import { openSandboxCgroups, type SandboxCgroups } from "../sandbox/cgroups.js";
import { hostExecution, NO_SANDBOX_MESSAGE, probeBubblewrap, sandboxLimits, type Sandbox, type SandboxLimits } from "../sandbox/sandbox.js";
import { ForkServer, SANDBOX_NICE } from "../sandbox/fork-server.js";
import { runOneShot, type OneShotCommand, type OneShotResult } from "../sandbox/one-shot.js";
import { AgentConversation } from "./conversation.js";
import type { StuckThresholds } from "./stuck-detector.js";

export interface AgentRuntimeOptions {
  /** Builds each conversation's LLM from its settings (default: the official `openai` client, {@link openAiLlmFactory}). */
  llm?: LlmFactory;
  /**
   * Where commands run: `"auto"` (default) uses bubblewrap when it works here; a {@link Sandbox} is
   * used as given; `"none"` runs nothing unless `allowHostExecution`.
   */
  sandbox?: Sandbox | "auto" | "none";
  /**
   * Let commands run on the host, unconfined, when no sandbox is available (default false: the
   * terminal tool then answers with an error and stdio MCP servers are not started).
   */
  allowHostExecution?: boolean;
  /** Give sandboxed commands the network (default false). Only for `sandbox: "auto"`. */
  allowNetwork?: boolean;
  /** More host paths visible read-only in the sandbox (tool chains). Only for `sandbox: "auto"`. */
  readOnlyPaths?: string[];
  /** Resource limits of each conversation's commands (defaults: `DEFAULT_SANDBOX_LIMITS`). Only for `sandbox: "auto"`. */
  limits?: Partial<SandboxLimits>;
  /** The unprivileged host user commands run as when the server runs as root (default 65534:65534). Only for `sandbox: "auto"`. */
  runAs?: { uid: number; gid: number };
  /**
   * Where each conversation's sandbox gets control groups (`openSandboxCgroups`): a memory group
   * that bounds its processes together (`limits.memoryBytes`), and a CPU group whose weight, with
   * every other sandbox's, is that of a nice-10 process against the server. `"auto"` (default):
   * below the server's own groups when it can make them (cgroup v1, or v2 with the controllers
   * delegated); a cgroup v2 directory delegated to the server; or `false` (memory is bounded per
   * process, CPU by nice 10 alone). Only for `sandbox: "auto"`.
   */
  cgroup?: "auto" | string | false;
  /** Stream LLM tokens as StreamingDeltaEvent (default false, as OpenHands' LLM default). */
  stream?: boolean;
  /**
   * The condenser's thresholds (OpenHands' defaults: 240 events, the first 2 kept, and the agent
   * model's context window as token limit; `maxTokens` lowers it).
   */
  condenser?: CondenserOptions;
  /**
   * Context windows (max input tokens) by model-name prefix, added to (and overriding)
   * {@link DEFAULT_CONTEXT_WINDOWS}: a model's window bounds the condenser's tokens.
   */
  contextWindows?: Record<string, number>;
  /**
   * Stop a run whose agent is stuck in a loop, status `stuck` (default true, as OpenHands'
   * `stuck_detection`); thresholds may be given (defaults `DEFAULT_STUCK_THRESHOLDS`).
   */
  stuckDetection?: boolean | Partial<StuckThresholds>;
  /** Terminal limits (soft timeout 10 s, `timeout` capped at 3,600 s, 30,000 characters of output). */
  terminal?: { softTimeoutSeconds?: number; maxTimeoutSeconds?: number; maxOutputChars?: number };
  /** MCP limits (30 s to connect and list tools; 300 s per call unless the server entry says). */
  mcp?: { connectTimeoutMs?: number; callTimeoutMs?: number };
  /** USD per million tokens by model-name prefix, added to (and overriding) {@link DEFAULT_PRICES}. */
  pricing?: Record<string, ModelPrice>;
  /**
   * What a host's validator must know: `interruptEvent` (v1.23; else a PauseEvent is recorded on
   * interrupt) and `classification` on ConversationErrorEvent (v1.40). Both default true.
   */
  emit?: { interruptEvent?: boolean; classification?: boolean };
  /**
   * A system prompt of the operator's, recorded verbatim instead of OpenHands' (which is built for
   * each conversation's model from OpenHands' sections); the dynamic context is added either way.
   */
  systemPrompt?: string;
  clock?: Clock;
  ids?: IdGenerator;
  logger?: Logger;
}

/**
 * Runs agents for a server.
 *
 * @example
 * const runtime = new AgentRuntime({ allowNetwork: false });
 * const conversation = await runtime.open(host);          // tools, MCP servers
 * await conversation.sendMessage({ role: "user", content: [{ type: "text", text: "Hi" }] }, { run: true });
 * await conversation.idle();
 */
export class AgentRuntime {
  private readonly conversations = new Map<string, AgentConversation>();
  private readonly opening = new Map<string, Promise<AgentConversation>>();
  private sandboxChoice: Promise<Sandbox | undefined> | undefined;
  /** Starts the conversations' shells (a fork server: the server's own loop never pays for a fork). */
  private readonly spawner = new ForkServer();
  private cgroups: SandboxCgroups | undefined;

  constructor(private readonly options: AgentRuntimeOptions = {}) {
    const given = options.sandbox;
    if (typeof given === "object" && given.name === "host" && !options.allowHostExecution) {
      throw new Error("hostExecution() runs commands unconfined on the host: it needs allowHostExecution: true.");
    }
    sandboxLimits(options.limits); // a bad limit is an error now, not at the first command
    new SummarizingCondenser(options.condenser); // so are bad condenser thresholds
  }

  /** The sandbox commands run in (bubblewrap, host) or undefined when the terminal is refused; resolved once. */
  sandbox(): Promise<Sandbox | undefined> {
    this.sandboxChoice ??= this.chooseSandbox().then((sandbox) => {
      // Started while the server is small: its own start is the one fork the server pays for.
      if (sandbox) this.spawner.start();
      return sandbox;
    });
    return this.sandboxChoice;
  }

  private async chooseSandbox(): Promise<Sandbox | undefined> {
    const { sandbox = "auto", allowHostExecution = false } = this.options;
    if (typeof sandbox === "object") return sandbox;
    const logger = this.options.logger ?? silentLogger;
    if (sandbox === "auto") {
      const { allowNetwork = false, readOnlyPaths = [], limits, runAs, cgroup = "auto" } = this.options;
      const groups = cgroup === false ? undefined : openSandboxCgroups(cgroup === "auto" ? {} : { cgroupDir: cgroup });
      if (groups?.problem) {
        logger.warn({ sandbox: "bubblewrap", memoryBound: "process", problem: groups.problem }, `the memory limit bounds each process, not a conversation's processes together: ${groups.problem}`);
      }
      const cpu = groups?.cgroups?.cpu;
      const cpuGroup = cpu?.problem === undefined ? cpu : undefined;
      if (!cpuGroup) {
        const problem = groups?.problem ?? cpu?.problem ?? "cgroups are off";
        logger.warn({ sandbox: "bubblewrap", cpuBound: "nice", problem }, `agent commands run at nice ${SANDBOX_NICE} without a CPU group of their own (a command that starts a session of its own can weigh as much as the server where the kernel groups by session): ${problem}`);
      }
      this.cgroups = groups?.cgroups;
      const probe = await probeBubblewrap({ allowNetwork, readOnlyPaths, limits, runAs, cgroups: groups?.cgroups });
      if (probe.sandbox) {
        const memory = groups?.cgroups ? `a memory cgroup per conversation below ${groups.cgroups.dir}` : "each process (RLIMIT_DATA)";
        const share = cpuGroup ? `; together they weigh ${cpuGroup.weight} against the server's processes for CPU (${cpuGroup.dir})` : "";
        logger.info({ sandbox: "bubblewrap", memoryBound: probe.sandbox.memoryBound, cpuBound: cpuGroup ? "cgroup" : "nice", limits: probe.sandbox.limits }, `agent commands run in bubblewrap; the memory limit bounds ${memory}${share}`);
        return probe.sandbox;
      }
      logger.warn({ sandbox: "bubblewrap", problem: probe.problem }, `bubblewrap cannot confine the agent's commands here: ${probe.problem}`);
    }
    if (allowHostExecution) {
      logger.warn({ sandbox: "host" }, "no sandbox: agent commands run unconfined on the host (allowHostExecution)");
      return hostExecution();
    }
    logger.warn({ sandbox: null }, NO_SANDBOX_MESSAGE);
    return undefined;
  }

  /**
   * Opens a conversation: reads its stored events and settings, starts its tools (and MCP
   * servers), and applies the restart rule: a conversation stored as `running` becomes `error`, with an
   * AgentErrorEvent for its first unanswered action. Opening an open conversation returns it; one
   * being closed is opened anew once its close has finished (its shell stopped, STOPPED reported).
   * The SystemPromptEvent is recorded at the first message or run, with the workspace's project
   * skills read then, as OpenHands does (`AgentConversation.prepare`).
   */
  open(host: ConversationHost): Promise<AgentConversation> {
    const id = host.conversationId;
    const open = this.conversations.get(id);
    if (open && !open.isClosed) return Promise.resolve(open);
    const pending = this.opening.get(id);
    if (pending) return pending;
    const opening = (open ? open.close().then(() => this.openNew(host)) : this.openNew(host)).finally(() => this.opening.delete(id));
    this.opening.set(id, opening);
    return opening;
  }

  private async openNew(host: ConversationHost): Promise<AgentConversation> {
    const options = this.options;
    const conversation = await AgentConversation.open(host, {
      llm: options.llm ?? openAiLlmFactory(),
      sandbox: await this.sandbox(),
      spawner: this.spawner,
      clock: options.clock ?? systemClock,
      ids: options.ids ?? uuidIds,
      stream: options.stream ?? false,
      condenser: options.condenser ?? {},
      contextWindows: { ...DEFAULT_CONTEXT_WINDOWS, ...options.contextWindows },
      stuckDetection: options.stuckDetection ?? true,
      terminal: options.terminal ?? {},
      mcp: options.mcp ?? {},
      prices: { ...DEFAULT_PRICES, ...options.pricing },
      interruptEvent: options.emit?.interruptEvent ?? true,
      classification: options.emit?.classification ?? true,
      systemPrompt: options.systemPrompt,
      logger: options.logger ?? silentLogger,
      onClosed: (closed) => {
        if (this.conversations.get(closed) === conversation) this.conversations.delete(closed);
      },
    });
    this.conversations.set(host.conversationId, conversation);
    return conversation;
  }

  /**
   * Runs one command in a conversation's sandbox, in a process of its own (the agent's shell is not
   * touched): the sandbox and limits of the conversation's commands, started as they are.
   * @throws NoSandboxError when commands cannot run here (no sandbox, host execution not allowed)
   */
  async exec(command: OneShotCommand): Promise<OneShotResult> {
    const sandbox = await this.sandbox();
    if (!sandbox) throw new NoSandboxError();
    return runOneShot(sandbox, this.spawner, command);
  }

  /** The open conversation with this id (not one being closed). */
  get(conversationId: string): AgentConversation | undefined {
    const conversation = this.conversations.get(conversationId);
    return conversation?.isClosed ? undefined : conversation;
  }

  /** Closes every open conversation (runs are interrupted; the lifecycle becomes STOPPED). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.opening.values()]);
    await Promise.all([...this.conversations.values()].map((conversation) => conversation.close()));
    this.spawner.close();
    this.cgroups?.close();
  }
}

/** Commands cannot run: no sandbox is available and host execution is not allowed (the message says what to do). */
export class NoSandboxError extends Error {
  override readonly name = "NoSandboxError";
  constructor() {
    super(NO_SANDBOX_MESSAGE);
  }
}
