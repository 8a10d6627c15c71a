/**
 * @packageDocumentation
 * What event search means, `@acs-toolkit/schema/search`, for every implementation of it in the toolkit: the server's stores and
 * routes, the mock (which runs the server's code) and the conformance suite's expectations. One
 * module, so that a store, a route and the suite that judges them cannot drift apart (the suite
 * once joined message parts with a newline where the server joins them with a space).
 *
 * - `kind` matches an event's kind by short name: `MessageEvent` and
 *   `openhands.sdk.event.llm_convertible.message.MessageEvent` are the same filter;
 * - `source` matches the event's `source`, or its kind's default source when it carries none;
 * - `body` is a case-insensitive substring of a MessageEvent's searchable text (its text content,
 *   its extended_content and its reasoning_content, joined by a space, as the reference joins
 *   them); any other kind never matches a body filter; an empty body is no filter;
 * - `timestamp__gte` / `timestamp__lt` bound the event's instant (see {@link instantMicros}),
 *   inclusive and exclusive.
 */
import { DEFAULT_EVENT_SOURCE, type EventKind } from "./generated/kinds.js";
import { instantMicros } from "./instant.js";

export { instantError, instantMicros } from "./instant.js";

/** The search filters as instants and short names: what a store is asked for. */
export interface EventFilters {
  /** A kind's short name (see {@link kindShortName}). */
  kind?: string;
  source?: string;
  /** A non-empty body filter, as given (matched case-insensitively). */
  body?: string;
  /** Inclusive lower bound, microseconds since the epoch (UTC). */
  timestampGte?: number;
  /** Exclusive upper bound, microseconds since the epoch (UTC). */
  timestampLt?: number;
}

/** The short name of a kind filter value: the part after its last dot (`a.b.MessageEvent` → `MessageEvent`). */
export function kindShortName(kind: string): string {
  return kind.slice(kind.lastIndexOf(".") + 1);
}

/** An event's source: its own, or its kind's default; undefined for a kind without one that carries none. */
export function eventSource(event: { kind: string; source?: string | null }): string | undefined {
  return event.source ?? (Object.hasOwn(DEFAULT_EVENT_SOURCE, event.kind) ? DEFAULT_EVENT_SOURCE[event.kind as EventKind] : null) ?? undefined;
}

/** The fields of an event that search reads (any event, as stored or as sent). */
export interface SearchableEvent {
  kind: string;
  source?: string | null;
  timestamp?: string;
  llm_message?: { content?: readonly unknown[] | null; reasoning_content?: unknown } | null;
  extended_content?: readonly unknown[] | null;
}

const isTextPart = (part: unknown): part is { text: string } => {
  const value = part as { type?: unknown; text?: unknown } | null;
  return value !== null && typeof value === "object" && (value.type ?? "text") === "text" && typeof value.text === "string";
};

/**
 * The text a body filter searches, before lower-casing: a MessageEvent's text content, its
 * extended_content and its reasoning_content, joined by a space; undefined for any other kind.
 */
export function searchableText(event: SearchableEvent): string | undefined {
  if (event.kind !== "MessageEvent") return undefined;
  const parts: string[] = [];
  for (const part of event.llm_message?.content ?? []) if (isTextPart(part)) parts.push(part.text);
  for (const part of event.extended_content ?? []) if (isTextPart(part)) parts.push(part.text);
  const reasoning = event.llm_message?.reasoning_content;
  if (typeof reasoning === "string" && reasoning !== "") parts.push(reasoning);
  return parts.join(" ");
}

/**
 * Whether an event passes every filter. Stores index these facts instead of calling this per
 * event; this is the definition they implement (and what the conformance suite expects of them).
 */
export function eventMatches(event: SearchableEvent & { timestamp: string }, filters: EventFilters): boolean {
  if (filters.kind !== undefined && event.kind !== kindShortName(filters.kind)) return false;
  if (filters.source !== undefined && eventSource(event) !== filters.source) return false;
  if (filters.timestampGte !== undefined || filters.timestampLt !== undefined) {
    const at = instantMicros(event.timestamp);
    if (at === undefined) return false;
    if (filters.timestampGte !== undefined && at < filters.timestampGte) return false;
    if (filters.timestampLt !== undefined && at >= filters.timestampLt) return false;
  }
  if (filters.body !== undefined && filters.body !== "") {
    const text = searchableText(event);
    if (text === undefined || !text.toLowerCase().includes(filters.body.toLowerCase())) return false;
  }
  return true;
}
