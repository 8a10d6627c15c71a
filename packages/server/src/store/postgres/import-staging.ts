/**
 * Staged creation (EventStore.beginImport … finishImport): the conversation's row is written with a
 * null id, so that no read finds it while its rows are added batch by batch; finishImport gives it
 * its id, or discardImport removes it. The store runs these statements in its own transactions.
 */
import { ConversationExistsError, type ConversationRecord, type ImportHandle, type NewConversation } from "../types.js";
import type { Queryable } from "./connection.js";
import { toRecord, type ConversationRow } from "./conversation-row.js";

/** A staged import untouched this long belongs to a process that died: removed at open. */
const STALE_IMPORT_MS = 60 * 60 * 1000;

export class StagedImport implements ImportHandle {
  written = 0;
  constructor(
    readonly pk: number,
    readonly finalId: string,
  ) {}
}

/** The staged conversation's row, written with id null. @throws ConversationExistsError when `conversation.id` is taken */
export async function stageConversation(db: Queryable, conversation: NewConversation): Promise<StagedImport> {
  if ((await db.query("select 1 from conversations where id = $1", [conversation.id])).rows.length > 0) throw new ConversationExistsError(conversation.id);
  // id null: no read finds it until finishImport sets it.
  const [row] = (
    await db.query<{ pk: number }>(
      `insert into conversations (id, status, created_at, updated_at, repository, selected_branch, git_provider)
       values (null, $1, $2, $2, $3, $4, $5) returning pk`,
      [conversation.status, new Date().toISOString(), conversation.repository ?? null, conversation.selectedBranch ?? null, conversation.gitProvider ?? null],
    )
  ).rows;
  return new StagedImport(row!.pk, conversation.id);
}

/** Inside a transaction: the staged conversation's next_seq, its row locked. */
export async function lockStaged(tx: Queryable, pk: number): Promise<number | undefined> {
  return (await tx.query<{ next_seq: number }>("select next_seq from conversations where pk = $1 and id is null for update", [pk])).rows[0]?.next_seq;
}

/** Inside finishImport's transaction, its rows written: gives the staged conversation its id. @throws ConversationExistsError when the id is taken */
export async function publishStaged(tx: Queryable, staged: StagedImport, now: string): Promise<ConversationRecord> {
  if ((await tx.query("select 1 from conversations where id = $1", [staged.finalId])).rows.length > 0) throw new ConversationExistsError(staged.finalId);
  try {
    const { rows: [row] } = await tx.query<ConversationRow>("update conversations set id = $2, created_at = $3, updated_at = $3 where pk = $1 returning *", [staged.pk, staged.finalId, now]);
    return toRecord(row!);
  } catch (error) {
    // Another instance took the id between the check and the update.
    if ((error as { code?: string }).code === "23505") throw new ConversationExistsError(staged.finalId);
    throw error;
  }
}

/** Inside a transaction: removes up to ~maxRows rows of a staged conversation, newest first; true when it is gone. */
export async function discardStagedRows(tx: Queryable, pk: number, maxRows: number): Promise<boolean> {
  const n = Math.max(1, Math.floor(maxRows));
  const next = await lockStaged(tx, pk);
  if (next === undefined) return true;
  const from = Math.max(1, next - n);
  await tx.query("delete from events where conv = $1 and seq >= $2", [pk, from]);
  await tx.query("delete from message_texts where conv = $1 and seq >= $2", [pk, from]);
  if (from > 1) {
    await tx.query("update conversations set next_seq = $2 where pk = $1", [pk, from]);
    return false;
  }
  await tx.query("delete from conversations where pk = $1", [pk]); // cascades to its counters
  return true;
}

/** The staged conversations untouched for an hour (their process died mid-import). */
export async function staleImports(db: Queryable): Promise<number[]> {
  const before = new Date(Date.now() - STALE_IMPORT_MS).toISOString();
  return (await db.query<{ pk: number }>("select pk from conversations where id is null and updated_at < $1", [before])).rows.map((r) => r.pk);
}
