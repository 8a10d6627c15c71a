/**
 * The agent runtime of `@acs-toolkit/agent` behind the server's {@link ConversationRuntime}
 * (`--runtime agent`): each conversation created without `replay_json` is opened by the agent,
 * which records its SystemPromptEvent, then the initial user message, and runs on it with the LLM
 * of the stored settings. Everything it records goes through the conversation service (validated,
 * stored in order, pushed to live subscribers once).
 *
 * - Ownership: a conversation the agent runs is marked in the store's document space
 *   (`agent-conversation:<id>`), so that after a restart a message or a control reopens it.
 *   Recorded and replayed conversations are never opened: run and respond_to_confirmation answer
 *   400, pause and interrupt change nothing.
 * - Workspace: `<data-dir>/uploads/<id>`, the folder uploads land in (so an uploaded file is in the
 *   agent's working directory, and a file the agent writes there can be downloaded). The commands'
 *   `/tmp` is `<data-dir>/tmp/<id>` (on disk), emptied whenever the conversation opens.
 * - Idle: a conversation that has not run for `idleCloseMs` is closed (shell and MCP servers stop,
 *   STOPPED); the next message or control reopens it.
 * - Restart: the ids of open conversations are kept (agent-leases.ts: the document
 *   `agent-runtime:open` in one process; the leases on a cluster). At start each is reopened, and the
 *   agent applies the reference's rule (openhands-versions §2 #7): a conversation stored as
 *   `running` becomes `error`, with an AgentErrorEvent for its first unanswered action. A clean stop
 *   interrupts runs (paused + InterruptEvent) and marks them STOPPED.
 * - Placement: every control and message reaches the agent through `leases` (agent-leases.ts): here,
 *   or, with several instances on one PostgreSQL database (agent-cluster.ts), at the instance that
 *   holds the conversation's lease, never a second copy. An agent whose lease another instance took
 *   over writes nothing more and is closed here.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import {
  AgentRuntime,
  ConversationAlreadyRunningError,
  ConversationClosedError,
  removeTree,
  type AgentConversation,
  type AgentRuntimeOptions,
  type AgentSettings,
  type ConversationHost,
  type RecordedEvent,
} from "@acs-toolkit/agent";
import type { ConfirmationResponseRequest, ConversationCreateRequest, MessageEvent, UserMessage } from "@acs-toolkit/schema";
import { AgentMovedError, LocalLeases, type AgentCommand, type ConversationLeases } from "./agent-leases.js";
import { HttpError } from "./core/errors.js";
import type { Logger } from "./log.js";
import { NO_AGENT_DETAIL, type ConversationRuntime, type RuntimeContext, type RuntimeControls } from "./core/runtime.js";
import type { SecretCipher } from "./secrets.js";
import { decryptedSecrets, readStoredSettings } from "./sealed-settings.js";
import type { ConversationRecord, EventStore } from "./store/types.js";
import type { CommandRunner } from "./api/bash.js";
import { SandboxCommands } from "./sandbox-commands.js";

/** The settings document (routes/settings.ts). */
const SETTINGS_DOCUMENT = "settings";
const OWNED = (id: string) => `agent-conversation:${id}`;
/** The marker of a deleted conversation (documents are never removed): its id, created again, is a record until the agent starts it. */
const NOT_OWNED = "deleted";
/** Events read per page when a conversation opens. */
const PAGE = 500;


interface AgentConversationRuntimeOptions {
  store: EventStore;
  cipher: SecretCipher;
  /** The server's data directory: workspaces are `<dataDir>/uploads/<id>`. */
  dataDir: string;
  log: Logger;
  /** The agent runtime's options (sandbox, host execution, network, LLM factory, …). */
  agent?: AgentRuntimeOptions;
  /**
   * A conversation that has not run for this long is closed (its shell and MCP servers stop; its
   * lifecycle status becomes STOPPED); a message or a control reopens it. Default 30 minutes.
   */
  idleCloseMs?: number;
  /** Where each conversation's agent runs: this process (default), or one of several instances (agent-cluster.ts). */
  leases?: ConversationLeases;
}

/** What an agent open here writes through: `lost` once its lease is another instance's (nothing it writes is stored any more). */
interface HostState {
  lost: boolean;
}

/**
 * What the agent reads from the stored settings, secrets decrypted (never logged): the LLM
 * (`llm_model` in LiteLLM's `provider/model`, `llm_api_key`, `llm_base_url`), the limits, the
 * confirmation mode, the condenser, MCP servers, and custom secrets and provider tokens (given to
 * commands as environment variables). No stored settings: an empty object (a run then fails with a
 * configuration error naming `llm_model`).
 */
async function loadAgentSettings(store: Pick<EventStore, "getDocument">, cipher: SecretCipher): Promise<AgentSettings> {
  const text = await store.getDocument(SETTINGS_DOCUMENT);
  if (text === undefined) return {};
  const { settings } = readStoredSettings(text, cipher);
  const secrets = decryptedSecrets(settings, cipher);
  return {
    llm_model: settings.llm_model,
    llm_api_key: secrets.llm_api_key,
    llm_base_url: settings.llm_base_url,
    max_iterations: settings.max_iterations,
    confirmation_mode: settings.confirmation_mode,
    security_analyzer: settings.security_analyzer,
    enable_default_condenser: settings.enable_default_condenser,
    max_budget_per_task: settings.max_budget_per_task,
    mcp_config: secrets.mcp_config,
    secrets_store: { provider_tokens: secrets.provider_tokens, custom_secrets: secrets.custom_secrets },
  };
}

const RETRY = { "Retry-After": "1" };
/** A request for an agent while the server stops: 503, as for an unavailable store (nothing was done). */
const stopping = () => new HttpError(503, "The server is stopping: nothing was done; send it again (to this server once it is back, or another)", RETRY);
const ALREADY_RUNNING = "Conversation already running. Wait for completion or pause first.";

export class AgentConversationRuntime implements ConversationRuntime {
  readonly initialStatus = "STARTING" as const;
  readonly agent: AgentRuntime;
  /** Conversations known to be the agent's (the marker read or written). */
  private readonly owned = new Set<string>();
  private readonly openIds = new Set<string>();
  /** Opens in progress here: a second request waits for the first one's. */
  private readonly opening = new Map<string, Promise<AgentConversation>>();
  private readonly hosts = new Map<string, HostState>();
  private readonly leases: ConversationLeases;
  private contextOf: ((conversationId: string) => RuntimeContext) | undefined;
  private closing = false;
  /** When each open conversation was last used (opened, or seen running). */
  private readonly lastUsed = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  readonly controls: RuntimeControls;
  /** The bash routes' commands: each in a fresh process of its conversation's sandbox. */
  readonly commands: CommandRunner;

  constructor(private readonly options: AgentConversationRuntimeOptions) {
    this.agent = new AgentRuntime({ logger: options.log, ...options.agent });
    this.leases = options.leases ?? new LocalLeases(options.store);
    this.commands = new SandboxCommands(this.agent, options.dataDir);
    const idleMs = options.idleCloseMs ?? 30 * 60_000;
    this.sweeper = setInterval(() => void this.closeIdle(idleMs), Math.max(100, Math.min(idleMs / 2, 60_000)));
    this.sweeper.unref();
    this.controls = {
      run: async (id, context) => {
        await this.requireOwned(id);
        await this.dispatch(id, { op: "run" }, context);
      },
      pause: async (id, context) => {
        if (await this.owns(id)) await this.dispatch(id, { op: "pause" }, context);
      },
      interrupt: async (id, context) => {
        if (await this.owns(id)) await this.dispatch(id, { op: "interrupt" }, context);
      },
      respondToConfirmation: async (id, response: ConfirmationResponseRequest, context) => {
        await this.requireOwned(id);
        await this.dispatch(id, { op: "respond", response }, context);
      },
      setConfirmationPolicy: async (id, policy, context) => {
        await this.requireOwned(id);
        await this.dispatch(id, { op: "policy", policy }, context);
      },
      setSecurityAnalyzer: async (id, analyzer, context) => {
        await this.requireOwned(id);
        await this.dispatch(id, { op: "analyzer", analyzer }, context);
      },
    };
  }

  /** Replays are records; every other new conversation is the agent's. */
  takesInitialMessage(request: ConversationCreateRequest): boolean {
    return !request.replay_json;
  }

  initialStatusFor(request: ConversationCreateRequest): "STARTING" | "STOPPED" {
    return request.replay_json ? "STOPPED" : "STARTING";
  }

  start(record: ConversationRecord, context: RuntimeContext, initial?: UserMessage): void {
    if (record.status !== "STARTING") return; // a replay: a record only
    void (async () => {
      await this.options.store.putDocument(OWNED(record.id), "{}");
      this.owned.add(record.id);
      // The instance that creates it takes its lease (nobody can hold it yet) and runs it.
      await this.dispatch(record.id, initial ? { op: "message", message: initial, run: true } : { op: "open" }, context);
    })().catch((error: unknown) => this.failedToStart(record.id, context, error));
  }

  async sendMessage(conversationId: string, message: UserMessage, context: RuntimeContext, options: { run: boolean }): Promise<MessageEvent | undefined> {
    if (!(await this.owns(conversationId))) return undefined;
    return (await this.dispatch(conversationId, { op: "message", message, run: options.run }, context)) as MessageEvent;
  }

  /**
   * Starts the leases: the conversations that were open when the server stopped (a crash leaves
   * them listed), or whose owner died (a cluster), are reopened; controls from other instances run.
   */
  async open(contextOf: (conversationId: string) => RuntimeContext): Promise<void> {
    this.contextOf = contextOf;
    // Probed at start, so that a sandbox that cannot confine commands is in the log before any run.
    await this.agent.sandbox();
    await this.leases.start({
      execute: async (id, command) => {
        if (this.closing) throw stopping();
        if (!this.leases.holds(id) && !(await this.leases.place(id)).here) throw new AgentMovedError("the agent moved to another instance");
        return this.execute(id, command, this.contextFor(id));
      },
      lost: (id) => this.lost(id),
      taken: async (id) => {
        if (!(await this.options.store.getConversation(id))) return this.leases.closed(id, "deleted");
        this.owned.add(id);
        await this.conversation(id, this.contextFor(id)).catch((error: unknown) => this.options.log.error({ conversationId: id, err: error }, "reopening an agent conversation after a restart failed"));
      },
      stateChanged: (id) => {
        this.contextFor(id)
          .publishState()
          .catch((error: unknown) => this.options.log.warn({ conversationId: id, err: error }, "publishing another instance's full_state failed"));
      },
    });
  }

  /** Closes the conversation's agent (a run interrupted, its shell and MCP servers stopped) wherever it runs, empties its /tmp and forgets it. */
  async forget(conversationId: string): Promise<void> {
    const owned = await this.owns(conversationId);
    if (owned) await this.dispatch(conversationId, { op: "forget" }, undefined);
    else await this.closeHere(conversationId, "deleted");
    this.owned.delete(conversationId);
    if (owned) await this.options.store.putDocument(OWNED(conversationId), NOT_OWNED);
    await removeTree(path.join(this.options.dataDir, "tmp", conversationId)).catch((error: unknown) => this.options.log.warn({ conversationId, err: error }, "removing a deleted conversation's /tmp failed"));
  }

  /** Interrupts every run, stops shells and MCP servers (the conversations become STOPPED), then gives the leases back. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    await this.agent.close();
    this.openIds.clear();
    await this.leases.close();
  }

  /**
   * Closes the open conversations that have not run for `idleMs` (the sweep every
   * `idleCloseMs / 2` calls it). A message or control that comes meanwhile reopens the conversation
   * once its close has finished.
   */
  async closeIdle(idleMs: number): Promise<void> {
    const now = Date.now();
    for (const id of [...this.openIds]) {
      const conversation = this.agent.get(id);
      if (!conversation || this.closing) continue;
      if (conversation.running) this.lastUsed.set(id, now);
      else if (now - (this.lastUsed.get(id) ?? now) >= idleMs) {
        this.openIds.delete(id);
        this.lastUsed.delete(id);
        try {
          await conversation.close();
          // Reopened meanwhile (a request that came during the close): it stays this instance's.
          if (!this.openIds.has(id) && !this.opening.has(id)) {
            this.hosts.delete(id);
            await this.leases.closed(id, "idle");
          }
        } catch (error) {
          this.options.log.warn({ conversationId: id, err: error }, "closing an idle agent conversation failed");
        }
      }
    }
  }

  /** Whether the agent runs the conversation: it created it (or reopened it after a restart); a replay, or one deleted since, is not its. */
  async owns(id: string): Promise<boolean> {
    if (this.owned.has(id)) return true;
    const marker = await this.options.store.getDocument(OWNED(id));
    if (marker === undefined || marker === NOT_OWNED) return false;
    this.owned.add(id);
    return true;
  }

  /** @throws HttpError 400 when no agent runs the conversation (a recording) */
  private async requireOwned(id: string): Promise<void> {
    if (this.closing) throw stopping();
    if (!(await this.owns(id))) throw new HttpError(400, NO_AGENT_DETAIL);
  }

  /**
   * Runs a command on the conversation's agent where it runs: here when this instance holds its
   * lease (or has just taken it), else at its owner, whose answer (or error) is this one's. An owner
   * that no longer holds it sends the command back to be placed again (three times at most).
   */
  private async dispatch(id: string, command: AgentCommand, context: RuntimeContext | undefined): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      if (this.closing) throw stopping();
      try {
        const routed = await this.leases.route(id, command);
        return routed.here ? await this.execute(id, command, context ?? this.contextFor(id)) : routed.answer;
      } catch (error) {
        if (!(error instanceof AgentMovedError)) throw error;
        if (attempt === 3) throw new HttpError(503, "The conversation's agent kept moving between server instances while this request was handled; send it again", RETRY);
      }
    }
  }

  /** Runs a command on the agent here (this instance holds the lease). */
  private async execute(id: string, command: AgentCommand, context: RuntimeContext): Promise<unknown> {
    switch (command.op) {
      case "open":
        await this.conversation(id, context);
        return undefined;
      case "run":
        return this.withConversation(id, context, (open) => {
          try {
            // A run never rejects, but for an agent whose lease was lost as it stopped (closed here then).
            open.run().catch(() => {});
          } catch (error) {
            if (error instanceof ConversationAlreadyRunningError) throw new HttpError(409, ALREADY_RUNNING);
            throw error;
          }
        });
      case "pause":
        return this.withConversation(id, context, (open) => open.pause());
      case "interrupt":
        return this.withConversation(id, context, (open) => open.interrupt());
      case "respond":
        return this.withConversation(id, context, (open) => open.respondToConfirmation({ accept: command.response.accept, reason: command.response.reason ?? "User rejected the action." }));
      case "policy":
        return this.withConversation(id, context, (open) => open.setConfirmationPolicy(command.policy));
      case "analyzer":
        return this.withConversation(id, context, (open) => open.setSecurityAnalyzer(command.analyzer));
      case "message":
        return this.withConversation(id, context, (open) => open.sendMessage(command.message, { run: command.run }));
      case "forget":
        this.owned.delete(id);
        await this.closeHere(id, "deleted");
        return undefined;
    }
  }

  /**
   * Calls `use` with the open conversation. One closed between its lookup and `use` (the idle
   * sweep) is reopened and `use` called again; a close that keeps winning (three times) is a 503
   * to send again, as is a request while the server stops (spec: components/responses/Unavailable).
   * One whose lease was lost meanwhile goes where the agent runs now (AgentMovedError).
   */
  private async withConversation<T>(id: string, context: RuntimeContext, use: (conversation: AgentConversation) => T | Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (!this.leases.holds(id)) throw new AgentMovedError("the agent moved to another instance");
      const conversation = await this.conversation(id, context);
      try {
        return await use(conversation);
      } catch (error) {
        if (!(error instanceof ConversationClosedError)) throw error;
        if (this.closing) throw stopping();
        if (attempt === 3) throw new HttpError(503, "The conversation's agent was closed while this request was handled (idle); send it again", RETRY);
      }
    }
  }

  /** The open conversation, opened (reopened after a restart or an idle close) when needed. @throws HttpError 400 when it is not the agent's */
  private async conversation(id: string, context: RuntimeContext): Promise<AgentConversation> {
    this.lastUsed.set(id, Date.now());
    const open = this.agent.get(id);
    if (open) return open;
    const opening = this.opening.get(id);
    if (opening) return opening;
    if (this.closing) throw stopping();
    if (!(await this.owns(id))) throw new HttpError(400, NO_AGENT_DETAIL);
    const started = (async () => {
      const conversation = await this.agent.open(await this.host(id, context));
      // Opening can take long (MCP servers): the idle clock starts when it is open.
      this.lastUsed.set(id, Date.now());
      if (!this.openIds.has(id)) {
        this.openIds.add(id);
        await this.leases.opened(id);
      }
      return conversation;
    })().finally(() => this.opening.delete(id));
    this.opening.set(id, started);
    return started;
  }

  /** Closes the agent here and tells the leases (`deleted`: the conversation goes). */
  private async closeHere(id: string, why: "deleted"): Promise<void> {
    this.openIds.delete(id);
    this.lastUsed.delete(id);
    await this.agent.get(id)?.close();
    if (!this.agent.get(id)) this.hosts.delete(id);
    await this.leases.closed(id, why);
  }

  /** Another instance holds the conversation's lease now: its agent here is closed, and nothing it writes is stored. */
  private async lost(id: string): Promise<void> {
    const state = this.hosts.get(id);
    if (state) state.lost = true;
    this.openIds.delete(id);
    this.lastUsed.delete(id);
    await (this.opening.get(id)?.catch(() => undefined) ?? Promise.resolve());
    await this.agent
      .get(id)
      ?.close()
      .catch((error: unknown) => this.options.log.warn({ conversationId: id, err: error }, "closing an agent whose lease was lost failed"));
    if (this.hosts.get(id) === state) this.hosts.delete(id);
    await this.leases.closed(id, "lost");
    this.options.log.warn({ conversationId: id }, "closed the agent of a conversation whose lease another instance holds; it wrote nothing after losing it");
  }

  private contextFor(id: string): RuntimeContext {
    if (!this.contextOf) throw new Error("the agent runtime is not open yet (open() is called once the server listens)");
    return this.contextOf(id);
  }

  /** A write of an agent open here: dropped once its lease is lost; a write the store fenced loses it. */
  private async write(id: string, state: HostState, write: () => Promise<void>): Promise<void> {
    if (state.lost) return;
    try {
      await write();
    } catch (error) {
      if (this.leases.writeFailed(id, error)) state.lost = true;
      throw error;
    }
  }

  private async host(id: string, context: RuntimeContext): Promise<ConversationHost> {
    const { store, cipher, dataDir } = this.options;
    const workspaceDir = path.join(dataDir, "uploads", id);
    await mkdir(workspaceDir, { recursive: true, mode: 0o700 });
    // A fresh `/tmp` on disk each time the conversation opens. Removed without following links:
    // the last shell's processes may still be dying, and one could swap a folder for a link.
    const tmpDir = path.join(dataDir, "tmp", id);
    await removeTree(tmpDir).catch((error: unknown) => this.options.log.warn({ conversationId: id, err: error }, "emptying the conversation's /tmp failed"));
    const state: HostState = { lost: false };
    this.hosts.set(id, state);
    return {
      conversationId: id,
      workspaceDir,
      tmpDir,
      record: (events) => this.write(id, state, () => context.record(events as RecordedEvent[])),
      // Streaming is off (AgentRuntimeOptions.stream): nothing transient is published.
      publish: () => {},
      readEvents: async () => {
        const events: RecordedEvent[] = [];
        for (let after = 0; ; ) {
          const page = await store.readAfter(id, after, PAGE);
          for (const stored of page) events.push(JSON.parse(stored.json) as RecordedEvent);
          if (page.length < PAGE) return events;
          after = page[page.length - 1]!.seq;
        }
      },
      settings: () => loadAgentSettings(store, cipher),
      setStatus: (status, parentId) => this.write(id, state, () => context.setStatus(status, parentId)),
      recordsStatusEvents: true,
      stateSettled: () => {
        if (state.lost) return;
        context.publishState().catch((error: unknown) => this.options.log.warn({ conversationId: id, err: error }, "publishing the full_state failed"));
        // Live subscribers on the other instances get it too (derived there from the store).
        this.leases.stateChanged(id);
      },
    };
  }

  private failedToStart(id: string, context: RuntimeContext, error: unknown): void {
    this.options.log.error({ conversationId: id, err: error }, "the agent could not start the conversation");
    context.setStatus("ERROR").catch(() => {});
  }
}
