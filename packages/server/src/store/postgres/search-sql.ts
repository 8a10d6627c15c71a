/**
 * The SQL of a search's and a count's filters: WHERE clauses with their parameters, over events or
 * (with a body) message_texts, and over the (kind, source) pairs of a conversation.
 */
import type { SearchFilters, SearchQuery } from "../types.js";

/** The key of events_kind_source_time after conv (migration 9), as the planner must see it to use the index. */
const KIND_SOURCE_KEY = "hashtext(kind || ' ' || source)";

/** `%`, `_` and the escape character itself stand for themselves in a LIKE pattern. */
export const likeSubstring = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Whether a body search walks the messages (BODY_SCAN_BUDGET): pg_trgm finds no trigram in a body without a run of 3 letters or digits. */
export const walked = (body: string) => body !== "" && !/[\p{L}\p{N}]{3}/u.test(body);

/** A page's ORDER BY in `order`, on the columns ts and seq of `table` (a prefix such as `e.`). */
export const orderBy = (order: SearchQuery["order"], table = "") => (order === "asc" ? `order by ${table}ts, ${table}seq` : `order by ${table}ts desc, ${table}seq desc`);

/** A WHERE clause under construction: its text and its parameters. */
export class Where {
  readonly parts: string[] = [];
  constructor(readonly values: unknown[]) {}
  /** Adds `clause`, where `?` stands for `value`'s parameter. */
  add(clause: string, ...values: unknown[]): this {
    let text = clause;
    for (const value of values) {
      this.values.push(value);
      text = text.replace("?", `$${this.values.length}`);
    }
    this.parts.push(text);
    return this;
  }
  get text(): string {
    return this.parts.join(" and ");
  }
}

/**
 * The clauses of a statement over the (kind, source) pairs of a conversation that match `f`
 * (`pairs`, on event_counts as c, $1 the conversation's id) and of each pair's rows in the time
 * range (`branch`, on events_kind_source_time, `recheck` appended): kindSourcePage and count.
 */
export function pairWhere(conversationId: string, f: SearchFilters, recheck: string): { values: unknown[]; branch: Where; pairs: Where } {
  const values: unknown[] = [conversationId];
  const branch = new Where(values).add(`conv = c.conv and ${KIND_SOURCE_KEY} = hashtext(c.kind || ' ' || c.source)${recheck}`);
  if (f.timestampGte !== undefined) branch.add("ts >= ?", f.timestampGte);
  if (f.timestampLt !== undefined) branch.add("ts < ?", f.timestampLt);
  const pairs = new Where(values).add("c.conv = (select pk from conversations where id = $1)");
  if (f.kind !== undefined) pairs.add("c.kind = ?", f.kind);
  if (f.source !== undefined) pairs.add("c.source = ?", f.source);
  return { values, branch, pairs };
}

/**
 * The WHERE clause of the filters, or undefined when nothing can match: over events, or with a
 * body over message_texts (only MessageEvents have one; its columns conv, seq, ts and source are
 * the event's). For a `page`, a body that is walked (BODY_SCAN_BUDGET) is left to the walk.
 */
export function filtersWhere(conversationId: string, f: SearchFilters, page = false): Where | undefined {
  if (f.body !== undefined && f.kind !== undefined && f.kind !== "MessageEvent") return undefined;
  const where = new Where([]).add("conv = (select pk from conversations where id = ?)", conversationId);
  // Only MessageEvents have a body: with one, the query reads message_texts (which has no kind
  // column), and kind = 'MessageEvent' says nothing more.
  if (f.kind !== undefined && f.body === undefined) where.add("kind = ?", f.kind);
  if (f.source !== undefined) where.add("source = ?", f.source);
  // An empty body: every message (every row of message_texts).
  if (f.body !== undefined && f.body !== "" && !(page && walked(f.body))) where.add("body like ?", likeSubstring(f.body.toLowerCase()));
  if (f.timestampGte !== undefined) where.add("ts >= ?", f.timestampGte);
  if (f.timestampLt !== undefined) where.add("ts < ?", f.timestampLt);
  return where;
}
