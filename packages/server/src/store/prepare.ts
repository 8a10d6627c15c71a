/**
 * Events as rows: the column values the store writes for an event, computed from the event alone
 * (its time as an instant, its source with the kind's default, the text the body filter searches),
 * so that a worker thread can compute them for a large replay and the request thread only writes.
 */
import type { MessageEvent } from "@acs-toolkit/schema";
import { eventSource, searchableText } from "@acs-toolkit/schema/search";
import { eventTimeMicros } from "./time.js";
import type { EventToStore } from "./types.js";

export interface PreparedEvent {
  id: string;
  /** The stored JSON text. */
  json: string;
  /** The timestamp as microseconds UTC. */
  ts: number;
  kind: string;
  source: string;
  /**
   * The lower-cased text the body filter searches; null for events other than MessageEvents;
   * undefined when `message` is there to compute it from when it is written.
   */
  text: string | null | undefined;
  message?: MessageEvent;
}

/** The text the body filter searches (the toolkit's one definition, `searchableText`). */
export const messageSearchText = (event: MessageEvent): string => searchableText(event) ?? "";


/**
 * An event as a row. The message text is left to compute when it is written (from `message`)
 * unless `withText`, which computes it now (for a row that crosses threads).
 * @throws TypeError for a timestamp that is not ISO-8601, or a kind without a default source
 */
export function prepareEvent({ event, json }: EventToStore, index: number, withText = false): PreparedEvent {
  const ts = eventTimeMicros(event.timestamp);
  if (ts === undefined) throw new TypeError(`events[${index}]: timestamp ${JSON.stringify(event.timestamp)} is not an ISO-8601 date-time`);
  const source = eventSource(event);
  if (!source) throw new TypeError(`events[${index}]: a ${event.kind} needs a source`);
  const message = event.kind === "MessageEvent" ? (event as MessageEvent) : undefined;
  if (withText) return { id: event.id, json, ts, kind: event.kind, source, text: message ? messageSearchText(message).toLowerCase() : null };
  return { id: event.id, json, ts, kind: event.kind, source, text: message ? undefined : null, message };
}

/** The lower-cased searchable text of a prepared row, or null when it is not a MessageEvent. */
export function searchTextOf(row: PreparedEvent): string | null {
  if (row.text !== undefined) return row.text;
  return row.message ? messageSearchText(row.message).toLowerCase() : null;
}

/**
 * Rows on their way to a store across threads (an event batch, appendBatch): each chunk is one
 * `v8.serialize` of PreparedEvent[] (row-batch.ts, Node only) whose `text` is computed, so that the request thread hands the
 * bytes on to the import writer without decoding them (a thousand rows decoded and encoded again
 * there cost it 10–30 ms).
 */
export interface RowBatch {
  /** Rows in all chunks. */
  count: number;
  chunks: readonly Uint8Array[];
}
