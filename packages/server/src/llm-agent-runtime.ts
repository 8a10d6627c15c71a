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
 * - Restart: the ids of open conversations are kept in the document `agent-runtime:open`. At start
 *   each is reopened, and the agent applies the reference's rule (openhands-versions §2 #7): a
 *   conversation stored as `running` becomes `error`, with an AgentErrorEvent for its first
 *   unanswered action. A clean stop interrupts runs (paused + InterruptEvent) and marks them STOPPED.
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
const OPEN_DOCUMENT = "agent-runtime:open";
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

export class AgentConversationRuntime implements ConversationRuntime {
  readonly initialStatus = "STARTING" as const;
  readonly agent: AgentRuntime;
  /** Conversations known to be the agent's (the marker read or written). */
  private readonly owned = new Set<string>();
  private readonly openIds = new Set<string>();
  private openWrite: Promise<void> = Promise.resolve();
  private closing = false;
  /** When each open conversation was last used (opened, or seen running). */
  private readonly lastUsed = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  readonly controls: RuntimeControls;
  /** The bash routes' commands: each in a fresh process of its conversation's sandbox. */
  readonly commands: CommandRunner;

  constructor(private readonly options: AgentConversationRuntimeOptions) {
    this.agent = new AgentRuntime({ logger: options.log, ...options.agent });
    this.commands = new SandboxCommands(this.agent, options.dataDir);
    const idleMs = options.idleCloseMs ?? 30 * 60_000;
    this.sweeper = setInterval(() => void this.closeIdle(idleMs), Math.max(100, Math.min(idleMs / 2, 60_000)));
    this.sweeper.unref();
    this.controls = {
      run: (id, context) =>
        this.withConversation(id, context, (open) => {
          try {
            void open.run();
          } catch (error) {
            if (error instanceof ConversationAlreadyRunningError) throw new HttpError(409, "Conversation already running. Wait for completion or pause first.");
            throw error;
          }
        }),
      pause: async (id, context) => {
        if (!(await this.owns(id))) return;
        await this.withConversation(id, context, (open) => open.pause());
      },
      interrupt: async (id, context) => {
        if (!(await this.owns(id))) return;
        await this.withConversation(id, context, (open) => open.interrupt());
      },
      respondToConfirmation: (id, response: ConfirmationResponseRequest, context) =>
        this.withConversation(id, context, (open) => open.respondToConfirmation({ accept: response.accept, reason: response.reason ?? "User rejected the action." })),
      setConfirmationPolicy: (id, policy, context) => this.withConversation(id, context, (open) => open.setConfirmationPolicy(policy)),
      setSecurityAnalyzer: (id, analyzer, context) => this.withConversation(id, context, (open) => open.setSecurityAnalyzer(analyzer)),
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
      const conversation = await this.conversation(record.id, context);
      if (initial) await conversation.sendMessage(initial, { run: true });
    })().catch((error: unknown) => this.failedToStart(record.id, context, error));
  }

  async sendMessage(conversationId: string, message: UserMessage, context: RuntimeContext, options: { run: boolean }): Promise<MessageEvent | undefined> {
    if (!(await this.owns(conversationId))) return undefined;
    return this.withConversation(conversationId, context, (open) => open.sendMessage(message, options));
  }

  /** Reopens the conversations that were open when the server stopped (a crash leaves them listed). */
  async open(contextOf: (conversationId: string) => RuntimeContext): Promise<void> {
    // Probed at start, so that a sandbox that cannot confine commands is in the log before any run.
    await this.agent.sandbox();
    const text = await this.options.store.getDocument(OPEN_DOCUMENT);
    const ids = text ? (JSON.parse(text) as string[]) : [];
    for (const id of ids) {
      if (!(await this.options.store.getConversation(id))) continue;
      this.owned.add(id);
      await this.conversation(id, contextOf(id)).catch((error: unknown) => this.options.log.error({ conversationId: id, err: error }, "reopening an agent conversation after a restart failed"));
    }
    await this.saveOpen();
  }

  /** Closes the conversation's agent (a run interrupted, its shell and MCP servers stopped), empties its /tmp and forgets it. */
  async forget(conversationId: string): Promise<void> {
    this.openIds.delete(conversationId);
    this.lastUsed.delete(conversationId);
    const owned = await this.owns(conversationId);
    this.owned.delete(conversationId);
    await this.agent.get(conversationId)?.close();
    if (owned) await this.options.store.putDocument(OWNED(conversationId), NOT_OWNED);
    await this.saveOpen();
    await removeTree(path.join(this.options.dataDir, "tmp", conversationId)).catch((error: unknown) => this.options.log.warn({ conversationId, err: error }, "removing a deleted conversation's /tmp failed"));
  }

  /** Interrupts every run, stops shells and MCP servers; the conversations become STOPPED. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    await this.agent.close();
    this.openIds.clear();
    await this.saveOpen();
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
          await this.saveOpen();
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

  /**
   * Calls `use` with the open conversation. One closed between its lookup and `use` (the idle
   * sweep) is reopened and `use` called again; a close that keeps winning (three times) is a 503
   * to send again, as is a request while the server stops (spec: components/responses/Unavailable).
   */
  private async withConversation<T>(id: string, context: RuntimeContext, use: (conversation: AgentConversation) => T | Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
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
    if (this.closing) throw stopping();
    if (!(await this.owns(id))) throw new HttpError(400, NO_AGENT_DETAIL);
    const conversation = await this.agent.open(await this.host(id, context));
    // Opening can take long (MCP servers): the idle clock starts when it is open.
    this.lastUsed.set(id, Date.now());
    if (!this.openIds.has(id)) {
      this.openIds.add(id);
      await this.saveOpen();
    }
    return conversation;
  }

  private saveOpen(): Promise<void> {
    const write = this.openWrite.then(() => this.options.store.putDocument(OPEN_DOCUMENT, JSON.stringify([...this.openIds])));
    this.openWrite = write.catch(() => {});
    return write;
  }

  private async host(id: string, context: RuntimeContext): Promise<ConversationHost> {
    const { store, cipher, dataDir } = this.options;
    const workspaceDir = path.join(dataDir, "uploads", id);
    await mkdir(workspaceDir, { recursive: true, mode: 0o700 });
    // A fresh `/tmp` on disk each time the conversation opens. Removed without following links:
    // the last shell's processes may still be dying, and one could swap a folder for a link.
    const tmpDir = path.join(dataDir, "tmp", id);
    await removeTree(tmpDir).catch((error: unknown) => this.options.log.warn({ conversationId: id, err: error }, "emptying the conversation's /tmp failed"));
    return {
      conversationId: id,
      workspaceDir,
      tmpDir,
      record: (events) => context.record(events as RecordedEvent[]),
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
      setStatus: (status, parentId) => context.setStatus(status, parentId),
      recordsStatusEvents: true,
      stateSettled: () => {
        context.publishState().catch((error: unknown) => this.options.log.warn({ conversationId: id, err: error }, "publishing the full_state failed"));
      },
    };
  }

  private failedToStart(id: string, context: RuntimeContext, error: unknown): void {
    this.options.log.error({ conversationId: id, err: error }, "the agent could not start the conversation");
    context.setStatus("ERROR").catch(() => {});
  }
}
