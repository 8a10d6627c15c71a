/**
 * The agent runtime on several instances sharing one PostgreSQL database: each conversation's agent
 * runs on the one instance that holds its lease (store/postgres/leases.ts), as OpenHands' agent
 * server 1.43.1 leases a conversation (conversation_lease.py: a 45 s lease renewed every 15 s, a
 * generation that fences a stale owner).
 *
 * - Placement: an instance that receives a control or a message for a conversation takes the lease
 *   when it is free (never held, given back, or expired) and runs the agent itself; else it hands
 *   the command to the owner (agent_commands and a notification), and answers with the owner's
 *   answer, errors included. No owner takes the command within `forwardTimeoutMs`: 503 with
 *   Retry-After, the command withdrawn (nothing was done). Once taken, the sender waits for its
 *   answer (a pause waits for the step) as long as the owner keeps its lease.
 * - Renewal: every third of the lease's time to live. A lease the renewal does not find any more
 *   (another instance took it), or one that could not be renewed before it expired, is lost: its
 *   agent is closed here, writing nothing (fenced-store.ts fences every write in between).
 * - Takeover: each renewal also takes a share of the expired leases of open agents (their owner died
 *   or stopped), and opens those agents here: the restart rule applies (running becomes error).
 * - Stop: once the agents are closed (runs interrupted), every lease is given back at once.
 * - full_state: the owner's is announced to every instance, which derives it from the store and
 *   pushes it to its own live subscribers.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { decodeAnswer, encodeAnswer, HERE, type AgentCommand, type ConversationLeases, type LeaseHandlers, type Placement, type Routed } from "./agent-leases.js";
import { HttpError } from "./core/errors.js";
import type { Logger } from "./log.js";
import { agentNotice, AGENTS_CHANNEL, answerCommand, claimCommand, dropCommand, notifyAgents, removeOldCommands, takeAnswer, takeLeaseOrSend, unclaimedCommands, withdrawCommand } from "./store/postgres/agent-commands.js";
import { LeaseLostError, type FencedPostgresStore } from "./store/postgres/fenced-store.js";
import { acquireLease, leaseHolder, releaseLeases, removeLease, renewLeases, takeExpiredLeases } from "./store/postgres/leases.js";
import { PostgresListener } from "./store/postgres/listener.js";
import { postgresDriver } from "./store/postgres/driver.js";
import { poolConfig } from "./store/postgres/open.js";
import { unavailable as unavailableStore } from "./store/postgres/connection.js";
import { StoreUnavailableError } from "./store/types.js";

/** Leases of dead owners one renewal takes at most (the other instances' renewals take the rest). */
const TAKEOVER_BATCH = 20;
/** Commands older than this are removed (their sender gave up long ago). */
const COMMAND_MAX_AGE_MS = 10 * 60_000;
/** Answers noticed before their sender waits for them, remembered at most. */
const EARLY_ANSWERS = 1_000;

interface ClusterLeaseOptions {
  store: FencedPostgresStore;
  log: Logger;
  /** How long a lease lasts without renewal (OpenHands: 45 s); renewed every third of it. */
  ttlMs: number;
  /** Longest wait for the owner to take a command handed to it; past it, 503. */
  forwardTimeoutMs: number;
}

interface Held {
  generation: number;
  /** Until when this instance is sure to hold it (its clock): the renewal's start plus the time to live. */
  until: number;
}

const RETRY = { "Retry-After": "1" };

/** Leases of the agents of conversations in PostgreSQL (see the module comment). */
export class PostgresLeases implements ConversationLeases {
  /** This process: an id of its own each start, so that a restarted instance never mistakes a dead one's leases for its own. */
  readonly instance = randomUUID();
  private readonly held = new Map<string, Held>();
  private readonly placing = new Map<string, Promise<Placement>>();
  /** Conversations whose agent is being closed here after its lease was lost. */
  private readonly losing = new Set<string>();
  /** Per command handed to another instance, what wakes its sender (with the answer, when it came in the notification). */
  private readonly waiting = new Map<string, (answer?: string) => void>();
  /** Answers (or wake-ups) that came before their sender waited for them. */
  private readonly early = new Map<string, string | undefined>();
  private handlers: LeaseHandlers | undefined;
  private listener: PostgresListener | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private ticks = 0;
  private closing = false;
  private readonly renewMs: number;

  /**
   * The commands' connections: their rows and notifications live for milliseconds and matter only
   * while their sender waits, so they commit without waiting for the WAL flush (a database crash
   * loses a command in flight: its sender answers 503). A lease a request takes there (takeLeaseOrSend)
   * is as safe: the first fenced append of its agent commits durably, which flushes the WAL up to
   * it; lost before, the lease falls back to its former state and the fence refuses this instance.
   * Renewals, takeovers and the fenced appends use the store's own pool.
   */
  private readonly commands: pg.Pool;

  constructor(private readonly options: ClusterLeaseOptions) {
    this.renewMs = Math.max(1, Math.floor(options.ttlMs / 3));
    const config = poolConfig({ url: options.store.url, schema: options.store.schema });
    this.commands = new (postgresDriver().pg.Pool)({ ...config, max: 4, application_name: "acs-server agents", options: `${config.options} -c synchronous_commit=off` });
    this.commands.on("error", () => undefined); // an idle connection that dies is dropped, as the store's
  }

  private get store(): FencedPostgresStore {
    return this.options.store;
  }

  async start(handlers: LeaseHandlers): Promise<void> {
    this.handlers = handlers;
    this.listener = new PostgresListener({
      url: this.store.url,
      channel: AGENTS_CHANNEL,
      applicationName: "acs-server-agents",
      notified: (payload) => this.notified(payload),
      connected: () => void this.caughtUp(),
      log: this.options.log,
    });
    await this.listener.ready;
    this.timer = setInterval(() => void this.tick(), this.renewMs);
    this.timer.unref();
    await this.tick();
  }

  holds(conversationId: string): boolean {
    const lease = this.held.get(conversationId);
    return lease !== undefined && Date.now() < lease.until;
  }

  place(conversationId: string): Promise<Placement> {
    if (this.holds(conversationId)) return Promise.resolve(HERE);
    // One placement at a time per conversation here: concurrent requests share its answer.
    let placing = this.placing.get(conversationId);
    if (!placing) {
      placing = this.placeNow(conversationId).finally(() => this.placing.delete(conversationId));
      this.placing.set(conversationId, placing);
    }
    return placing;
  }

  private async placeNow(conversationId: string): Promise<Placement> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const started = Date.now();
      const lease = await acquireLease(this.store.pool, conversationId, this.instance, this.options.ttlMs).catch(unavailable);
      if ("generation" in lease) {
        this.hold(conversationId, lease.generation, started);
        return HERE;
      }
      if (lease.owner !== null && lease.live && lease.owner !== this.instance) {
        // Held here until now, by this process's belief: another instance has it, so this agent is stale.
        if (this.held.has(conversationId)) this.lose(conversationId, this.held.get(conversationId)!.generation);
        return { here: false, owner: lease.owner };
      }
    }
    throw new StoreUnavailableError("the conversation's agent is changing hands between server instances; send it again");
  }

  async opened(): Promise<void> {}

  async closed(conversationId: string, why: "idle" | "deleted" | "lost"): Promise<void> {
    if (why === "lost") {
      this.losing.delete(conversationId);
      // Taken again meanwhile (a request that came after): its fence stands.
      if (!this.held.has(conversationId)) this.store.fence(conversationId, undefined);
      return;
    }
    this.held.delete(conversationId);
    try {
      if (why === "idle") await releaseLeases(this.store.pool, this.instance, [conversationId]);
      else await removeLease(this.store.pool, conversationId);
    } finally {
      if (!this.held.has(conversationId)) this.store.fence(conversationId, undefined);
    }
  }

  async route(conversationId: string, command: AgentCommand): Promise<Routed> {
    if (this.holds(conversationId)) return HERE;
    const text = JSON.stringify(command);
    for (let attempt = 0; attempt < 3; attempt++) {
      const started = Date.now();
      // One statement: the lease taken, or the command handed to its owner (the commands' pool: see `commands`).
      const routed = await takeLeaseOrSend(this.commands, this.store.schema, { conversationId, sender: this.instance, ttlMs: this.options.ttlMs, text }).catch(unavailable);
      if ("generation" in routed) {
        this.hold(conversationId, routed.generation, started);
        return HERE;
      }
      if ("id" in routed) {
        // Held here until now, by this process's belief: another instance has it, so this agent is stale.
        if (this.held.has(conversationId)) this.lose(conversationId, this.held.get(conversationId)!.generation);
        return { here: false, answer: decodeAnswer(await this.answerOf(routed.id, routed.owner, conversationId)) };
      }
    }
    throw new StoreUnavailableError("the conversation's agent is changing hands between server instances; send it again");
  }

  stateChanged(conversationId: string): void {
    notifyAgents(this.commands, this.store.schema, { kind: "state", instance: this.instance, ref: conversationId }).catch((error: unknown) =>
      this.options.log.warn({ conversationId, err: error }, "announcing the full_state to the other instances failed"),
    );
  }

  writeFailed(conversationId: string, error: unknown): boolean {
    if (!(error instanceof LeaseLostError)) return false;
    this.lose(conversationId, error.generation);
    return true;
  }

  close(): Promise<void> {
    this.stopped ??= this.stop();
    return this.stopped;
  }
  private stopped: Promise<void> | undefined;

  private async stop(): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    const ids = [...this.held.keys()];
    this.held.clear();
    try {
      await releaseLeases(this.store.pool, this.instance, ids);
    } catch (error) {
      this.options.log.warn({ err: error, leases: ids.length }, "giving the agents' leases back failed: other instances take them once they expire");
    } finally {
      for (const id of ids) this.store.fence(id, undefined);
    }
    await this.listener?.close();
    await this.commands.end();
  }

  /** Holds the lease at `generation` from `started` (this instance's clock, before the statement that took or renewed it). */
  private hold(conversationId: string, generation: number, started: number): void {
    const current = this.held.get(conversationId);
    if (current && current.generation > generation) return; // an older answer, come late
    this.held.set(conversationId, { generation, until: started + this.options.ttlMs });
    this.store.fence(conversationId, { owner: this.instance, generation });
  }

  /** The lease at `generation` is not this instance's any more: its agent closes here (the runtime's `lost`). */
  private lose(conversationId: string, generation: number): void {
    const lease = this.held.get(conversationId);
    if (lease && lease.generation > generation) return; // a write of an agent already replaced here
    if (!lease && this.losing.has(conversationId)) return; // its agent is being closed already
    this.held.delete(conversationId);
    this.losing.add(conversationId);
    this.options.log.warn({ conversationId, generation }, "this instance lost the lease of a conversation's agent (another instance took it over, or it was not renewed in time); closing the agent here");
    void this.handlers?.lost(conversationId).catch((error: unknown) => this.options.log.error({ conversationId, err: error }, "closing an agent whose lease was lost failed"));
  }

  /** Renews the leases held here, loses those gone, then takes over expired ones. One at a time. */
  private async tick(): Promise<void> {
    if (this.ticking || this.closing) return;
    this.ticking = true;
    try {
      await this.renew();
      if (!this.closing) await this.takeOver();
      if (++this.ticks % 30 === 0) await removeOldCommands(this.commands, COMMAND_MAX_AGE_MS);
    } catch (error) {
      this.options.log.warn({ err: error }, "the agents' lease renewal failed");
    } finally {
      this.ticking = false;
    }
  }

  private async renew(): Promise<void> {
    const started = Date.now();
    let renewed;
    try {
      renewed = await renewLeases(this.store.pool, this.instance, this.options.ttlMs);
    } catch (error) {
      // Not renewed: a lease whose time is up may be another instance's by now.
      for (const [id, lease] of this.held) if (Date.now() >= lease.until) this.lose(id, lease.generation);
      throw error;
    }
    const current = new Map(renewed.map((lease) => [lease.conversationId, lease.generation]));
    for (const [id, lease] of this.held) {
      const generation = current.get(id);
      if (generation === undefined) {
        if (lease.until <= started || !(await this.stillHeld(id))) this.lose(id, lease.generation);
      } else if (generation >= lease.generation) lease.until = started + this.options.ttlMs;
    }
  }

  /** Whether a lease taken while the renewal ran (not in its answer) is still this instance's. */
  private async stillHeld(conversationId: string): Promise<boolean> {
    const holder = await leaseHolder(this.store.pool, conversationId);
    return holder?.owner === this.instance;
  }

  private async takeOver(): Promise<void> {
    const started = Date.now();
    for (const lease of await takeExpiredLeases(this.store.pool, this.instance, this.options.ttlMs, TAKEOVER_BATCH)) {
      const known = this.held.has(lease.conversationId);
      this.hold(lease.conversationId, lease.generation, started);
      if (known) continue; // its agent is open here: this instance was only late renewing it
      this.options.log.info({ conversationId: lease.conversationId, generation: lease.generation }, "took over the agent of a conversation whose owner stopped renewing its lease");
      void this.handlers?.taken(lease.conversationId).catch((error: unknown) => this.options.log.error({ conversationId: lease.conversationId, err: error }, "opening a taken-over agent failed"));
    }
  }

  private notified(payload: string): void {
    const notice = agentNotice(this.store.schema, payload);
    if (!notice) return;
    if (notice.kind === "command" && notice.instance === this.instance) void this.runCommand(notice.ref);
    else if (notice.kind === "answer" && notice.instance === this.instance) this.wake(notice.ref, notice.answer);
    else if (notice.kind === "state" && notice.instance !== this.instance) this.handlers?.stateChanged(notice.ref);
  }

  /** After (re)connecting: the commands sent here meanwhile, and every answer waited for, read again. */
  private async caughtUp(): Promise<void> {
    for (const id of [...this.waiting.keys()]) this.wake(id);
    try {
      for (const id of await unclaimedCommands(this.commands, this.instance)) void this.runCommand(id);
    } catch (error) {
      this.options.log.warn({ err: error }, "reading the agents' commands after a reconnection failed");
    }
  }

  /** Claims a command sent here, runs it, answers it. */
  private async runCommand(id: string): Promise<void> {
    const handlers = this.handlers;
    if (!handlers) return;
    try {
      const command = await claimCommand(this.commands, id, this.instance);
      if (!command) return; // withdrawn, or claimed already
      let outcome: { value: unknown } | { error: unknown };
      try {
        outcome = { value: await handlers.execute(command.conversationId, JSON.parse(command.text) as AgentCommand) };
      } catch (error) {
        outcome = { error };
      }
      await answerCommand(this.commands, this.store.schema, id, command.sender, encodeAnswer(outcome));
    } catch (error) {
      this.options.log.warn({ err: error, command: id }, "answering a command of another instance failed");
    }
  }

  private wake(id: string, answer?: string): void {
    const waiter = this.waiting.get(id);
    if (waiter) return waiter(answer);
    if (this.early.size >= EARLY_ANSWERS) this.early.clear();
    if (answer !== undefined || !this.early.has(id)) this.early.set(id, answer);
  }

  /** The answer of command `id`, once notified or after `ms`: `waiting` while there is none, `gone` when it was lost. */
  private async answerWithin(id: string, ms: number): Promise<{ answer: string } | "waiting" | "gone"> {
    let answer: string | undefined;
    if (this.early.has(id)) {
      answer = this.early.get(id);
      this.early.delete(id);
    } else {
      answer = await new Promise<string | undefined>((resolve) => {
        const timer = setTimeout(() => resolve(undefined), ms);
        this.waiting.set(id, (text) => {
          clearTimeout(timer);
          resolve(text);
        });
      });
      this.waiting.delete(id);
    }
    return answer !== undefined ? { answer } : takeAnswer(this.commands, id).catch(unavailable);
  }

  /**
   * Waits for the owner's answer: a 503 when the owner does not take the command within
   * forwardTimeoutMs (withdrawn: it never runs), or when it stops holding the lease before answering.
   */
  private async answerOf(id: string, owner: string, conversationId: string): Promise<string> {
    const first = await this.answerWithin(id, this.options.forwardTimeoutMs);
    if (typeof first === "object") return first.answer;
    if (first === "waiting" && (await withdrawCommand(this.commands, id).catch(unavailable))) {
      throw new HttpError(503, `The server instance running this conversation's agent did not answer within ${this.options.forwardTimeoutMs} ms: nothing was done; send it again (another instance takes the agent over once its lease expires)`, RETRY);
    }
    for (let state: { answer: string } | "waiting" | "gone" = first; ; ) {
      if (state === "gone") throw new HttpError(503, "The answer of the server instance running this conversation's agent was lost on its way here: it may have been done; send it again", RETRY);
      state = await this.answerWithin(id, this.renewMs);
      if (typeof state === "object") return state.answer;
      if (state === "gone") continue;
      const holder = await leaseHolder(this.store.pool, conversationId).catch(unavailable);
      if (holder?.owner !== owner || !holder.live) {
        await dropCommand(this.commands, id).catch(() => undefined);
        throw new HttpError(503, "The server instance running this conversation's agent stopped before it answered: it may have been done; send it again", RETRY);
      }
    }
  }
}

/** A database failure as the 503 it is (StoreUnavailableError); any other error as it is. */
function unavailable(error: unknown): never {
  throw unavailableStore(error) ?? error;
}
