/**
 * What a batch's rows become on their way into the tables: the parameters of an INSERT … SELECT
 * FROM unnest(…) (packRows, read back in SQL by unnestRows and unpackedTexts), and what they add to
 * their conversation (RowTally).
 */
import { searchTextOf, type PreparedEvent } from "../prepare.js";

/**
 * What a batch's rows add to their conversation, taken as they come: how many there are per
 * (kind, source) (event_counts), and whether their timestamps never decrease, the first and the
 * largest (conversations.ts_ordered, migration 3).
 */
export class RowTally {
  private readonly counts = new Map<string, { kind: string; source: string; n: number }>();
  count = 0;
  ordered = true;
  first = 0;
  last = 0;
  add(rows: readonly PreparedEvent[]): void {
    for (const r of rows) {
      if (this.count++ === 0) this.first = this.last = r.ts;
      if (r.ts < this.last) this.ordered = false;
      else this.last = r.ts;
      const key = `${r.kind}\u0000${r.source}`;
      const c = this.counts.get(key);
      if (c) c.n++;
      else this.counts.set(key, { kind: r.kind, source: r.source, n: 1 });
    }
  }
  counters(): Array<{ kind: string; source: string; n: number }> {
    return [...this.counts.values()];
  }
}

export const tallyOf = (rows: readonly PreparedEvent[]) => {
  const tally = new RowTally();
  tally.add(rows);
  return tally;
};

/**
 * The rows' searchable texts and JSON texts as one buffer, sent as one binary parameter, with each
 * text's 1-based byte offset (interleaved: body, json) and byte length (-1: no body). As text[]
 * parameters, the client escapes every `"` and `\\` of every JSON text into an array literal and the
 * server parses it back: 70% of the client's CPU time of a replay (2.9 s against 0.86 s per 100k
 * events). The server cuts the texts out with substring (UTF-8 checked by convert_from).
 */
export function packRows(rows: readonly PreparedEvent[]): { bytes: Buffer; offsets: number[]; bodyLengths: number[]; jsonLengths: number[] } {
  const bodies = rows.map((r) => searchTextOf(r));
  let max = 0;
  for (let i = 0; i < rows.length; i++) max += (rows[i]!.json.length + (bodies[i]?.length ?? 0)) * 3; // ≤ 3 bytes per UTF-16 unit
  const bytes = Buffer.allocUnsafe(max);
  const offsets: number[] = new Array(rows.length * 2);
  const bodyLengths: number[] = new Array(rows.length);
  const jsonLengths: number[] = new Array(rows.length);
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    const body = bodies[i];
    offsets[2 * i] = at + 1;
    if (body === null || body === undefined) bodyLengths[i] = -1;
    else at += bodyLengths[i] = bytes.write(body, at, "utf8");
    offsets[2 * i + 1] = at + 1;
    at += jsonLengths[i] = bytes.write(rows[i]!.json, at, "utf8");
  }
  return { bytes: bytes.subarray(0, at), offsets, bodyLengths, jsonLengths };
}

/** `unnest(ts, id, kind, source, body length, json length) with ordinality as t(…, o)` from parameter $first on. */
export const unnestRows = (first: number) =>
  `unnest($${first}::bigint[], $${first + 1}::text[], $${first + 2}::text[], $${first + 3}::text[], $${first + 4}::int[], $${first + 5}::int[]) with ordinality as t(ts, id, kind, source, bl, jl, o)`;

/** The columns body and json of row `o`, cut out of packRows' buffer ($bytes) at its offsets ($offsets). */
export const unpackedTexts = (bytes: number, offsets: number) =>
  `case when bl < 0 then null else convert_from(substring($${bytes}::bytea from ($${offsets}::int[])[2 * o - 1] for bl), 'UTF8') end as body,
   convert_from(substring($${bytes}::bytea from ($${offsets}::int[])[2 * o] for jl), 'UTF8') as json`;
