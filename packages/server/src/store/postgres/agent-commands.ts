/**
 * Controls and messages handed from one instance to the owner of a conversation's agent
 * (agent_commands, migration 12), and the notifications that carry them: on channel `acs_agents`,
 * `<schema>:<kind>:<instance>:<ref>` where kind is `command` (for the owner `instance`, ref the
 * command's id), `answer` (for the sender `instance`; a small answer follows, `:<answer>`, its row
 * removed), or `state` (the conversation `ref`'s full_state changed on the owner `instance`). The row
 * holds the command (and a large answer): a lost wake-up costs a wait, a lost small answer a 503.
 */
import type { Queryable } from "./connection.js";

/** The channel of the agents' notifications. */
export const AGENTS_CHANNEL = "acs_agents";

type AgentNotice = { kind: "command" | "answer" | "state"; instance: string; ref: string; answer?: string };

/**
 * Answers up to this many bytes travel in their notification (a payload holds at most 8,000 bytes):
 * the sender reads no row. Larger ones (a long message echoed back) are read from the row.
 */
const INLINE_ANSWER_BYTES = 7_000;

/** A notification's payload in `schema` as a notice; undefined for another schema's or a malformed one. */
export function agentNotice(schema: string, payload: string): AgentNotice | undefined {
  const parts = payload.split(":");
  if (parts.length < 4 || parts[0] !== schema) return undefined;
  const [, kind, instance, ref] = parts as [string, string, string, string];
  if ((kind !== "command" && kind !== "answer" && kind !== "state") || !instance || !ref) return undefined;
  if (parts.length === 4) return { kind, instance, ref };
  return kind === "answer" ? { kind, instance, ref, answer: parts.slice(4).join(":") } : undefined;
}

/** Notifies `notice` (delivered when the statement's transaction commits). */
export async function notifyAgents(db: Queryable, schema: string, notice: AgentNotice): Promise<void> {
  await db.query("select pg_notify($1, $2)", [AGENTS_CHANNEL, `${schema}:${notice.kind}:${notice.instance}:${notice.ref}`]);
}

/**
 * What an instance that does not hold a conversation's lease does with a command, in one statement:
 * takes the lease when it is free (never held, given back, expired; leases.ts acquireLease's rule),
 * or else stores the command for the live owner and wakes it. `{ generation }` when taken, `{ id,
 * owner }` when sent, else who held it as the statement's snapshot saw it (ask again).
 */
export async function takeLeaseOrSend(
  db: Queryable,
  schema: string,
  command: { conversationId: string; sender: string; ttlMs: number; text: string },
): Promise<{ generation: number } | { id: string; owner: string } | { owner: string | null; live: boolean }> {
  const { rows } = await db.query<{ generation: number | null; owner: string | null; live: boolean | null; id: string | null }>(
    `with taken as (
       insert into agent_leases (conversation_id, owner, generation, expires_at, open) values ($1, $2, 1, clock_timestamp() + $3 * interval '1 millisecond', true)
       on conflict (conversation_id) do update set owner = excluded.owner, expires_at = excluded.expires_at, open = true,
         generation = case when agent_leases.owner = excluded.owner then agent_leases.generation else agent_leases.generation + 1 end
         where agent_leases.owner is null or agent_leases.owner = excluded.owner or agent_leases.expires_at <= clock_timestamp()
       returning generation
     ),
     holder as (select l.owner, l.expires_at > clock_timestamp() as live from (select 1) as one left join agent_leases l on l.conversation_id = $1),
     sent as (
       insert into agent_commands (conversation_id, target, sender, command)
       select $1, holder.owner, $2, $4 from holder
       where not exists (select from taken) and holder.owner is not null and holder.owner <> $2 and holder.live
       returning id, target
     )
     select (select generation from taken) as generation, holder.owner, holder.live, (select id::text from sent) as id,
       (select pg_notify($5, $6 || target || ':' || id) from sent) as notified
     from holder`,
    [command.conversationId, command.sender, command.ttlMs, command.text, AGENTS_CHANNEL, `${schema}:command:`],
  );
  const row = rows[0]!;
  if (row.generation !== null) return { generation: Number(row.generation) };
  if (row.id !== null) return { id: row.id, owner: row.owner! };
  return { owner: row.owner, live: row.live === true };
}

/** Claims a command sent to `target` (once: a second claim, or one of a withdrawn command, gets nothing). */
export async function claimCommand(db: Queryable, id: string, target: string): Promise<{ conversationId: string; sender: string; text: string } | undefined> {
  const { rows } = await db.query<{ conversation_id: string; sender: string; command: string }>(
    "update agent_commands set claimed = true where id = $1 and target = $2 and not claimed returning conversation_id, sender, command",
    [id, target],
  );
  const row = rows[0];
  return row && { conversationId: row.conversation_id, sender: row.sender, text: row.command };
}

/** The ids of the commands sent to `target` that it has not claimed (missed while its LISTEN connection was down). */
export async function unclaimedCommands(db: Queryable, target: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>("select id::text from agent_commands where target = $1 and not claimed order by id", [target]);
  return rows.map((row) => row.id);
}

/** Hands a claimed command's answer to its sender, in one statement: in the notification (the row removed) when it is small, else in the row. */
export async function answerCommand(db: Queryable, schema: string, id: string, sender: string, answer: string): Promise<void> {
  if (Buffer.byteLength(answer) <= INLINE_ANSWER_BYTES) {
    await db.query(
      `with answered as (delete from agent_commands where id = $1 returning id)
       select pg_notify($2, $3 || id || ':' || $4) from answered`,
      [id, AGENTS_CHANNEL, `${schema}:answer:${sender}:`, answer],
    );
    return;
  }
  await db.query(
    `with answered as (update agent_commands set answer = $2 where id = $1 returning id)
     select pg_notify($3, $4 || id) from answered`,
    [id, answer, AGENTS_CHANNEL, `${schema}:answer:${sender}:`],
  );
}

/**
 * The command's answer from its row, removed with it; `waiting` while it has none, `gone` when the
 * row is gone (its answer went in a notification this instance did not get).
 */
export async function takeAnswer(db: Queryable, id: string): Promise<{ answer: string } | "waiting" | "gone"> {
  const { rows } = await db.query<{ answer: string | null; present: boolean }>(
    `with taken as (delete from agent_commands where id = $1 and answer is not null returning answer)
     select (select answer from taken) as answer, exists (select from agent_commands where id = $1) as present`,
    [id],
  );
  const row = rows[0]!;
  if (row.answer !== null) return { answer: row.answer };
  return row.present ? "waiting" : "gone";
}

/** Removes a command nobody claimed yet: true when it was removed (its owner will never run it). */
export async function withdrawCommand(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query("delete from agent_commands where id = $1 and not claimed returning id", [id]);
  return rows.length > 0;
}

/** Removes a command whatever its state (its sender gave up waiting for its answer). */
export async function dropCommand(db: Queryable, id: string): Promise<void> {
  await db.query("delete from agent_commands where id = $1", [id]);
}

/** Removes commands older than `ageMs` (their sender died waiting, or their owner never answered). */
export async function removeOldCommands(db: Queryable, ageMs: number): Promise<void> {
  await db.query("delete from agent_commands where created_at < clock_timestamp() - $1 * interval '1 millisecond'", [ageMs]);
}
