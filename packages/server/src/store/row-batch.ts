/**
 * A RowBatch's chunks (prepare.ts) encoded and decoded with `v8.serialize`: Node only, so apart
 * from prepare.ts, which the browser-safe core and the memory store import.
 */
import { deserialize, serialize } from "node:v8";
import type { PreparedEvent, RowBatch } from "./prepare.js";

/** Rows (prepared with `withText`) as one chunk of a RowBatch. */
export function encodeRows(rows: readonly PreparedEvent[]): Uint8Array {
  return serialize(rows);
}

/** The rows of a RowBatch, in order. */
export function decodeRows(batch: RowBatch): PreparedEvent[] {
  const rows: PreparedEvent[] = [];
  for (const chunk of batch.chunks) for (const row of deserialize(chunk) as PreparedEvent[]) rows.push(row);
  return rows;
}
