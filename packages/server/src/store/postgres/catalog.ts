/**
 * The store's small tables: the conversations as a catalog (one conversation's row read or changed,
 * the rows listed in creation or change order from a keyset, counted, or hidden before a delete) and
 * the documents. Each function takes the store's query function.
 */
import type { ConversationLifecycleStatus } from "@acs-toolkit/schema";
import { ConversationNotFoundError, type ConversationChanges, type ConversationListQuery } from "../types.js";
import type { ConversationRow } from "./conversation-row.js";

export type RowQuery = <R extends Record<string, unknown>>(text: string, values?: unknown[]) => Promise<R[]>;

const now = () => new Date().toISOString();

/** The row a change returned. @throws ConversationNotFoundError when there was none */
export function found(row: ConversationRow | undefined, id: string): ConversationRow {
  if (!row) throw new ConversationNotFoundError(id);
  return row;
}

export async function conversationRow(query: RowQuery, id: string): Promise<ConversationRow | undefined> {
  const [row] = await query<ConversationRow & Record<string, unknown>>("select * from conversations where id = $1", [id]);
  return row;
}

export async function setStatusRow(query: RowQuery, id: string, status: ConversationLifecycleStatus): Promise<ConversationRow | undefined> {
  const [row] = await query<ConversationRow & Record<string, unknown>>("update conversations set status = $2, updated_at = $3 where id = $1 returning *", [id, status, now()]);
  return row;
}

/** A title or tags given replace the stored ones; an absent one stays. */
export async function updateConversationRow(query: RowQuery, id: string, changes: ConversationChanges): Promise<ConversationRow | undefined> {
  const [row] = await query<ConversationRow & Record<string, unknown>>(
    `update conversations set title = case when $2 then $3 else title end, tags = case when $4 then $5 else tags end, updated_at = $6
     where id = $1 returning *`,
    [id, changes.title !== undefined, changes.title ?? null, changes.tags !== undefined, changes.tags === undefined ? null : JSON.stringify(changes.tags), now()],
  );
  return row;
}

/**
 * Takes the row's id away (a staged import's state: no read finds it, and every write to it, from
 * any instance, fails from then on); its pk, for removing its rows, or undefined when there is none.
 */
export async function hideConversationRow(query: RowQuery, id: string): Promise<number | undefined> {
  const [hidden] = await query<{ pk: number }>("update conversations set id = null, updated_at = $2 where id = $1 returning pk", [id, now()]);
  return hidden?.pk;
}

/** Byte order (collate "C") on both keys, as the other stores compare ISO times and ids. */
export async function listConversationRows(query: RowQuery, list: ConversationListQuery): Promise<ConversationRow[]> {
  const column = list.by === "createdAt" ? "created_at" : "updated_at";
  const dir = list.order === "asc" ? "asc" : "desc";
  const values: unknown[] = [Math.max(0, Math.floor(list.limit))];
  let start = "";
  if (list.from) {
    values.push(list.from.key, list.from.id);
    start = ` and (${column} collate "C", id collate "C") ${dir === "asc" ? ">=" : "<="} ($2, $3)`;
  }
  return query<ConversationRow & Record<string, unknown>>(`select * from conversations where id is not null${start} order by ${column} collate "C" ${dir}, id collate "C" ${dir} limit $1`, values);
}

export async function countConversationRows(query: RowQuery): Promise<number> {
  return Number((await query<{ n: string }>("select count(*) as n from conversations where id is not null"))[0]!.n);
}

export async function documentValue(query: RowQuery, key: string): Promise<string | undefined> {
  return (await query<{ value: string }>("select value from documents where key = $1", [key]))[0]?.value;
}

export async function putDocumentValue(query: RowQuery, key: string, value: string): Promise<void> {
  await query("insert into documents (key, value) values ($1, $2) on conflict (key) do update set value = excluded.value", [key, value]);
}
