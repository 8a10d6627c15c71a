/**
 * Events as rows: the column values the store writes for an event, computed from the event alone
 * (its time as an instant, its source with the kind's default, the text the body filter searches),
 * so that a worker thread can compute them for a large replay and the request thread only writes.
 */
import { DEFAULT_EVENT_SOURCE, type MessageEvent } from "@acs-toolkit/schema";
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

/**
 * The text the body filter searches, before lower-casing: the message's text content, its
 * extended_content and its reasoning_content, joined by a space (as the reference joins them).
 */
export function messageSearchText(event: MessageEvent): string {
  const parts: string[] = [];
  const isText = (c: unknown): c is { text: string } => {
    const v = c as { type?: unknown; text?: unknown } | null;
    return v !== null && typeof v === "object" && (v.type ?? "text") === "text" && typeof v.text === "string";
  };
  for (const c of event.llm_message.content ?? []) if (isText(c)) parts.push(c.text);
  for (const c of event.extended_content ?? []) if (isText(c)) parts.push(c.text);
  const reasoning = event.llm_message.reasoning_content;
  if (typeof reasoning === "string" && reasoning !== "") parts.push(reasoning);
  return parts.join(" ");
}


/**
 * An event as a row. The message text is left to compute when it is written (from `message`)
 * unless `withText`, which computes it now (for a row that crosses threads).
 * @throws TypeError for a timestamp that is not ISO-8601, or a kind without a default source
 */
export function prepareEvent({ event, json }: EventToStore, index: number, withText = false): PreparedEvent {
  const ts = eventTimeMicros(event.timestamp);
  if (ts === undefined) throw new TypeError(`events[${index}]: timestamp ${JSON.stringify(event.timestamp)} is not an ISO-8601 date-time`);
  const source = event.source ?? DEFAULT_EVENT_SOURCE[event.kind];
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
