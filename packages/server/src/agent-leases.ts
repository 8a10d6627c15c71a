/**
 * Where each conversation's agent runs (`--runtime agent`): one instance at a time holds a
 * conversation's lease, and a control or message another instance receives is handed to it.
 * {@link LocalLeases} is the single process (SQLite, memory: everything here); `agent-cluster.ts`
 * is several instances on one PostgreSQL database. The runtime (llm-agent-runtime.ts) asks
 * {@link ConversationLeases.place} before it opens or reaches a conversation's agent.
 */
import type { ConfirmationPolicy, ConfirmationResponseRequest, SecurityAnalyzer, UserMessage } from "@acs-toolkit/schema";
import { HttpError, RequestValidationError } from "./core/errors.js";
import { ConversationNotFoundError, StoreUnavailableError, type EventStore } from "./store/types.js";

/** A control or message for a conversation's agent, as it crosses instances (JSON). */
export type AgentCommand =
  | { op: "open" }
  | { op: "run" }
  | { op: "pause" }
  | { op: "interrupt" }
  | { op: "respond"; response: ConfirmationResponseRequest }
  | { op: "policy"; policy: ConfirmationPolicy }
  | { op: "analyzer"; analyzer: SecurityAnalyzer | null }
  | { op: "message"; message: UserMessage; run: boolean }
  | { op: "forget" };

/** Where a conversation's agent runs: here (this instance holds its lease), or at its owner. */
export type Placement = { here: true } | { here: false; owner: string };
export const HERE = { here: true } as const;

/** A command routed: to be run here (this instance holds the lease), or run by the owner, whose answer this is. */
export type Routed = { here: true } | { here: false; answer: unknown };

/** What the leases call in the runtime. */
export interface LeaseHandlers {
  /** Runs a command another instance handed over; AgentMovedError when this instance does not hold the lease (and cannot take it). */
  execute(conversationId: string, command: AgentCommand): Promise<unknown>;
  /** This instance lost the conversation's lease (taken over, or not renewed in time): close its agent here, writing nothing. */
  lost(conversationId: string): Promise<void>;
  /** This instance took the lease of an agent that was open (its owner died, or this process restarted): open it here. */
  taken(conversationId: string): Promise<void>;
  /** Another instance published the conversation's full_state: push it to the live subscribers here. */
  stateChanged(conversationId: string): void;
}

export interface ConversationLeases {
  /** Starts (forwarded commands, renewal, takeovers); resolves once the conversations to reopen now are open. */
  start(handlers: LeaseHandlers): Promise<void>;
  /** Where the conversation's agent runs: here when this instance holds the lease or has just taken it (free or expired), else its owner. */
  place(conversationId: string): Promise<Placement>;
  /**
   * {@link place}, and a command not placed here handed to the owner: resolves with its answer,
   * rejects with its error (the owner's status and detail), AgentMovedError, or a 503.
   */
  route(conversationId: string, command: AgentCommand): Promise<Routed>;
  /** Whether this instance holds the lease now (no database round trip). */
  holds(conversationId: string): boolean;
  /** The conversation's agent opened here. */
  opened(conversationId: string): Promise<void>;
  /** The conversation's agent closed here: `idle` gives the lease back, `deleted` removes it, `lost` only forgets it. */
  closed(conversationId: string, why: "idle" | "deleted" | "lost"): Promise<void>;
  /** The conversation's full_state changed here: the other instances push it to their subscribers. */
  stateChanged(conversationId: string): void;
  /** Whether a write of the conversation failed because another instance took its lease over (fenced); if so, the runtime's `lost` follows. */
  writeFailed(conversationId: string, error: unknown): boolean;
  /** Gives back every lease (after the agents closed) and stops. */
  close(): Promise<void>;
}

/** The instance a command was handed to no longer holds the lease: place it again. */
export class AgentMovedError extends Error {
  override readonly name = "AgentMovedError";
}

const OPEN_DOCUMENT = "agent-runtime:open";

/**
 * One process runs every agent: every conversation is placed here. The ids of the open ones are
 * kept in the document `agent-runtime:open`, so that after a crash the next start reopens them (the
 * restart rule then applies); a clean stop empties it.
 */
export class LocalLeases implements ConversationLeases {
  private readonly openIds = new Set<string>();
  private write: Promise<void> = Promise.resolve();

  constructor(private readonly store: Pick<EventStore, "getDocument" | "putDocument">) {}

  async start(handlers: LeaseHandlers): Promise<void> {
    const text = await this.store.getDocument(OPEN_DOCUMENT);
    for (const id of text ? (JSON.parse(text) as string[]) : []) await handlers.taken(id);
    await this.save();
  }

  place(): Promise<Placement> {
    return Promise.resolve(HERE);
  }

  route(): Promise<Routed> {
    return Promise.resolve(HERE);
  }

  holds(): boolean {
    return true;
  }

  async opened(conversationId: string): Promise<void> {
    if (this.openIds.has(conversationId)) return;
    this.openIds.add(conversationId);
    await this.save();
  }

  async closed(conversationId: string): Promise<void> {
    if (this.openIds.delete(conversationId)) await this.save();
  }

  stateChanged(): void {}

  writeFailed(): boolean {
    return false;
  }

  async close(): Promise<void> {
    this.openIds.clear();
    await this.save();
  }

  private save(): Promise<void> {
    const write = this.write.then(() => this.store.putDocument(OPEN_DOCUMENT, JSON.stringify([...this.openIds])));
    this.write = write.catch(() => {});
    return write;
  }
}

/** An answer as it crosses instances: the value, the error (what the API answers for it), or "moved". */
type Answer = { ok: unknown } | { moved: true } | { error: { kind: "http"; status: number; detail: string; headers: Record<string, string> } | { kind: "validation"; detail: RequestValidationError["detail"] } | { kind: "notFound"; id: string } | { kind: "unavailable"; detail: string } | { kind: "other"; message: string; code?: string } };

/** The answer of a command run here, as JSON text. */
export function encodeAnswer(outcome: { value: unknown } | { error: unknown }): string {
  if ("value" in outcome) return JSON.stringify({ ok: outcome.value ?? null } satisfies Answer);
  const error = outcome.error;
  let answer: Answer;
  if (error instanceof AgentMovedError) answer = { moved: true };
  else if (error instanceof RequestValidationError) answer = { error: { kind: "validation", detail: error.detail } };
  else if (error instanceof HttpError) answer = { error: { kind: "http", status: error.status, detail: error.detail, headers: error.headers } };
  else if (error instanceof ConversationNotFoundError) answer = { error: { kind: "notFound", id: error.conversationId } };
  else if (error instanceof StoreUnavailableError) answer = { error: { kind: "unavailable", detail: error.detail } };
  else {
    const code = typeof error === "object" && error !== null && "code" in error ? String((error as { code: unknown }).code) : undefined;
    answer = { error: { kind: "other", message: error instanceof Error ? error.message : String(error), ...(code !== undefined && { code }) } };
  }
  return JSON.stringify(answer);
}

/** An answer's value, or the error it carries thrown as the owner threw it (so that this instance answers the same status and body). */
export function decodeAnswer(text: string): unknown {
  const answer = JSON.parse(text) as Answer;
  if ("ok" in answer) return answer.ok ?? undefined;
  if ("moved" in answer) throw new AgentMovedError("the agent moved to another instance");
  const error = answer.error;
  switch (error.kind) {
    case "http":
      throw new HttpError(error.status, error.detail, error.headers);
    case "validation":
      throw new RequestValidationError(error.detail);
    case "notFound":
      throw new ConversationNotFoundError(error.id);
    case "unavailable":
      throw new StoreUnavailableError(error.detail);
    default:
      throw Object.assign(new Error(error.message), error.code === undefined ? {} : { code: error.code });
  }
}
