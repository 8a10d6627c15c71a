/**
 * The statements of the agents' leases (agent_leases, migration 12). Every expiry is the database's
 * clock (clock_timestamp()), never an instance's: instances whose clocks differ agree on which lease
 * has expired. A lease changes hands only when it is free (released, or expired) and every change of
 * hands takes its generation up: the fence of the new owner's writes (fenced-store.ts). Its owner
 * taking it again keeps the generation: nobody else can have written meanwhile, and its agent's
 * writes in flight, fenced with it, stay valid.
 */
import type { Queryable } from "./connection.js";

/** A lease this instance holds: its conversation and generation. */
interface HeldLease {
  conversationId: string;
  generation: number;
}

const TTL = "clock_timestamp() + $3 * interval '1 millisecond'";

/**
 * Takes the conversation's lease for `owner` when it is free (never held, released, or expired) or
 * already `owner`'s, its agent marked open: `{ generation }`. Else who
 * holds it, `{ owner, live }`, as the statement's snapshot saw it (an owner that appeared after the
 * snapshot, a lease taken at the same moment, reads as none: ask again).
 */
export async function acquireLease(db: Queryable, conversationId: string, owner: string, ttlMs: number): Promise<{ generation: number } | { owner: string | null; live: boolean }> {
  const { rows } = await db.query<{ generation: number | null; owner: string | null; live: boolean | null }>(
    `with taken as (
       insert into agent_leases (conversation_id, owner, generation, expires_at, open) values ($1, $2, 1, ${TTL}, true)
       on conflict (conversation_id) do update set owner = excluded.owner, expires_at = excluded.expires_at, open = true,
         generation = case when agent_leases.owner = excluded.owner then agent_leases.generation else agent_leases.generation + 1 end
         where agent_leases.owner is null or agent_leases.owner = excluded.owner or agent_leases.expires_at <= clock_timestamp()
       returning generation
     )
     select (select generation from taken) as generation, l.owner, l.expires_at > clock_timestamp() as live
     from (select 1) as one left join agent_leases l on l.conversation_id = $1`,
    [conversationId, owner, ttlMs],
  );
  const row = rows[0]!;
  return row.generation !== null ? { generation: Number(row.generation) } : { owner: row.owner, live: row.live === true };
}

/** Who holds the conversation's lease and whether it is still live; undefined when nobody does. */
export async function leaseHolder(db: Queryable, conversationId: string): Promise<{ owner: string; live: boolean } | undefined> {
  const { rows } = await db.query<{ owner: string | null; live: boolean }>("select owner, expires_at > clock_timestamp() as live from agent_leases where conversation_id = $1", [conversationId]);
  const row = rows[0];
  return row?.owner ? { owner: row.owner, live: row.live } : undefined;
}

/** Pushes the expiry of every lease `owner` holds forward; returns them (a lease missing is one another instance took). */
export async function renewLeases(db: Queryable, owner: string, ttlMs: number): Promise<HeldLease[]> {
  const { rows } = await db.query<{ conversation_id: string; generation: number }>(
    "update agent_leases set expires_at = clock_timestamp() + $2 * interval '1 millisecond' where owner = $1 returning conversation_id, generation",
    [owner, ttlMs],
  );
  return rows.map((row) => ({ conversationId: row.conversation_id, generation: Number(row.generation) }));
}

/**
 * Takes up to `limit` leases of open agents whose owner stopped renewing them (killed, partitioned,
 * stopped); each instance's sweep takes a share (SKIP LOCKED), and opens their agents.
 */
export async function takeExpiredLeases(db: Queryable, owner: string, ttlMs: number, limit: number): Promise<HeldLease[]> {
  const { rows } = await db.query<{ conversation_id: string; generation: number }>(
    `with expired as (
       select conversation_id from agent_leases where open and expires_at <= clock_timestamp() order by expires_at limit $3 for update skip locked
     )
     update agent_leases l set owner = $1, generation = case when l.owner = $1 then l.generation else l.generation + 1 end, expires_at = clock_timestamp() + $2 * interval '1 millisecond'
     from expired where l.conversation_id = expired.conversation_id
     returning l.conversation_id, l.generation`,
    [owner, ttlMs, limit],
  );
  return rows.map((row) => ({ conversationId: row.conversation_id, generation: Number(row.generation) }));
}

/** Gives the leases back (the agents closed here): free at once for any instance, not to be taken over. */
export async function releaseLeases(db: Queryable, owner: string, conversationIds: readonly string[]): Promise<void> {
  if (conversationIds.length === 0) return;
  await db.query("update agent_leases set owner = null, open = false, expires_at = clock_timestamp() where owner = $1 and conversation_id = any($2)", [owner, conversationIds]);
}

/** Forgets a deleted conversation's lease. */
export async function removeLease(db: Queryable, conversationId: string): Promise<void> {
  await db.query("delete from agent_leases where conversation_id = $1", [conversationId]);
}
