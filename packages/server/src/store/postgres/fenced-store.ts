/**
 * Fencing of an agent's writes on a PostgreSQL store shared by several instances: while this
 * instance holds a conversation's lease (agent_leases, migration 12), every append and status change
 * of the conversation made here checks, in its own transaction, that the lease is still this
 * instance's at the generation it took. An owner that was only slow (stopped, partitioned) while
 * another instance took the lease over finds the generation moved and writes nothing
 * (LeaseLostError). The check locks the lease row FOR SHARE: a takeover (an UPDATE of that row)
 * waits for an append in flight to commit, and an append after the takeover sees its generation.
 */
import type { ConversationLifecycleStatus } from "@acs-toolkit/schema";
import { prepareEvent } from "../prepare.js";
import { StoreUnavailableError, type ConversationRecord, type EventToStore, type StoredEvent } from "../types.js";
import { found, setStatusRow, type RowQuery } from "./catalog.js";
import type { Queryable } from "./connection.js";
import { toRecord } from "./conversation-row.js";
import { PostgresEventStore } from "./store.js";

/** The lease a write of this instance must still hold: its owner (this instance) and generation. */
interface LeaseFence {
  owner: string;
  generation: number;
}

/**
 * A write refused because this instance no longer holds the conversation's lease (another instance
 * took it over): nothing of it was stored. A 503 for a request that meets it (send it again: it goes
 * to the new owner).
 */
export class LeaseLostError extends StoreUnavailableError {
  constructor(
    readonly conversationId: string,
    /** The generation the write was fenced with (the lease this instance had). */
    readonly generation: number,
  ) {
    super(`another server instance took over this conversation's agent; nothing was done here: send it again`);
  }
}

/** Fails with LeaseLostError unless the conversation's lease is still `fence`'s; holds the lease row (FOR SHARE) until the transaction ends. */
async function checkFence(tx: Queryable, conversationId: string, fence: LeaseFence): Promise<void> {
  const [lease] = (await tx.query<{ owner: string | null; generation: number }>("select owner, generation from agent_leases where conversation_id = $1 for share", [conversationId])).rows;
  if (!lease || lease.owner !== fence.owner || Number(lease.generation) !== fence.generation) throw new LeaseLostError(conversationId, fence.generation);
}

/** The PostgreSQL store with fences (see the module comment); without one, a conversation's writes are the store's own. */
export class FencedPostgresStore extends PostgresEventStore {
  private readonly fences = new Map<string, LeaseFence>();

  /** Fences this instance's writes to the conversation with `fence` from now on; undefined lifts it. */
  fence(conversationId: string, fence: LeaseFence | undefined): void {
    if (fence) this.fences.set(conversationId, fence);
    else this.fences.delete(conversationId);
  }

  // A fenced append is a transaction (the fence, then the store's own append), never the
  // one-statement append: an agent appends a few events a step.
  override appendEvents(conversationId: string, events: readonly EventToStore[]): Promise<StoredEvent[]> {
    const fence = this.fences.get(conversationId);
    if (!fence) return super.appendEvents(conversationId, events);
    return this.serial(conversationId, () =>
      this.appendInTransaction(
        conversationId,
        events,
        events.map((entry, index) => prepareEvent(entry, index)),
        (tx) => checkFence(tx, conversationId, fence),
      ),
    );
  }

  override setStatus(conversationId: string, status: ConversationLifecycleStatus): Promise<ConversationRecord> {
    const fence = this.fences.get(conversationId);
    if (!fence) return super.setStatus(conversationId, status);
    return this.serial(conversationId, () =>
      this.transaction(async (tx) => {
        await checkFence(tx, conversationId, fence);
        const query: RowQuery = async (text, values) => (await tx.query(text, values)).rows as never[];
        return toRecord(found(await setStatusRow(query, conversationId, status), conversationId));
      }),
    );
  }
}
