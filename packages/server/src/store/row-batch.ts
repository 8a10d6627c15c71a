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

/**
 * The buffers of a batch's chunks that can be moved to another thread instead of copied: a chunk
 * that is the whole of its (non-shared) ArrayBuffer. Structured-cloning 10,000 encoded rows (~6 MB)
 * held the request thread 35–90 ms per batch of a bulk ingest; moving them costs nothing.
 * The chunks are unusable on the sending side afterwards.
 */
export function transferableChunks(batch: RowBatch): ArrayBuffer[] {
  const buffers: ArrayBuffer[] = [];
  for (const chunk of batch.chunks) {
    const buffer = chunk.buffer;
    if (buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength && !buffers.includes(buffer)) buffers.push(buffer);
  }
  return buffers;
}
