/**
 * What the store contract's tests build stores from: events of every kind, messages with chosen
 * texts, and the naive model of search (filter, sort, page) that the stores are compared with.
 */
import { expect } from "vitest";
import { DEFAULT_EVENT_SOURCE, type Event, type EventKind, type EventSource, type MessageEvent } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { instantMicros } from "@acs-toolkit/schema/search";
import { messageBodyText } from "@acs-toolkit/test-kit/trajectory";
import type { EventStore, EventToStore, JsonPage, Position, SearchFilters, SearchPage, SearchQuery } from "../../../src/store/types.js";

export const CONV = "4c0d5e8a-1f2b-4c3d-8e9f-0a1b2c3d4e5f";
export const OTHER = "9e8d7c6b-5a49-4837-a261-5f4e3d2c1b0a";

/** Each example event with its own id and a timestamp 1 ms apart from `start`. */
export function events(count: number, { seed = 1, start = Date.UTC(2026, 1, 5, 11, 0, 0) } = {}): EventToStore[] {
  const templates = exampleEvents({ seed });
  return Array.from({ length: count }, (_, i) => {
    const base = templates[i % templates.length]!;
    const event = { ...base, id: `${seed}-${i}`, timestamp: new Date(start + i).toISOString().replace("Z", "") } as Event;
    return { event, json: JSON.stringify(event) };
  });
}

const templates = exampleEvents();
export const template = (kind: EventKind) => templates.find((e) => e.kind === kind)!;
export const toStore = (event: Event): EventToStore => ({ event, json: JSON.stringify(event) });
export const iso = (micros: number) => {
  const d = new Date(Math.floor(micros / 1000)).toISOString();
  return `${d.slice(0, 19)}.${String(micros % 1_000_000).padStart(6, "0")}`;
};
export const T0 = Date.UTC(2026, 1, 5, 11, 0, 0) * 1000;

export function message(
  id: string,
  timestamp: string,
  text: string,
  extra: { reasoning?: string; extended?: string[]; image?: boolean; source?: EventSource } = {},
): Event {
  const base = template("MessageEvent") as MessageEvent;
  const content: NonNullable<MessageEvent["llm_message"]["content"]> = [{ type: "text", text }];
  if (extra.image) content.push({ type: "image", image_urls: ["https://example.com/needle.png"] });
  const event: MessageEvent = {
    ...base,
    id,
    timestamp,
    source: extra.source ?? "user",
    llm_message: { ...base.llm_message, content, reasoning_content: extra.reasoning ?? null },
    extended_content: (extra.extended ?? []).map((t) => ({ type: "text", text: t })),
  };
  return event;
}

/** Every page of a query, concatenated; checks hasMore on the way. */
export async function pages(store: EventStore, query: Omit<SearchQuery, "after"> & { after?: Position }, id = CONV): Promise<string[]> {
  const out: string[] = [];
  let after = query.after;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await store.search(id, { ...query, after });
    expect(readable(await store.searchJson(id, { ...query, after }))).toEqual(jsonPageFor(page)); // the page as bytes is the same page
    out.push(...page.items.map((e) => e.id));
    if (!page.hasMore) return out;
    if (!page.resumeAfter) expect(page.items).toHaveLength(query.limit); // short only when the scan budget ran out
    after = nextAfter(page)!;
  }
  throw new Error("runaway paging");
}

interface Row {
  id: string;
  ts: number;
  seq: number;
  kind: string;
  source: string;
  event: Event;
}

export function naive(rows: Row[], f: SearchFilters & { order?: "asc" | "desc" }): string[] {
  const out = rows
    .filter(
      (r) =>
        (f.kind === undefined || r.kind === f.kind) &&
        (f.source === undefined || r.source === f.source) &&
        (f.timestampGte === undefined || r.ts >= f.timestampGte) &&
        (f.timestampLt === undefined || r.ts < f.timestampLt) &&
        (f.body === undefined || (r.kind === "MessageEvent" && messageBodyText(r.event as MessageEvent).includes(f.body.toLowerCase()))),
    )
    .sort((a, b) => a.ts - b.ts || a.seq - b.seq)
    .map((r) => r.id);
  return f.order === "desc" ? out.reverse() : out;
}

/** Stores `events` in batches of `batch` and returns their rows as the naive model sees them. */
export async function fill(store: EventStore, events: Event[], batch = 17, id = CONV): Promise<Row[]> {
  for (let i = 0; i < events.length; i += batch) {
    const chunk = events.slice(i, i + batch).map(toStore);
    if (i === 0) await store.createConversation({ id, status: "RUNNING" }, chunk);
    else await store.appendEvents(id, chunk);
  }
  return events.map((event, i) => ({
    id: event.id,
    ts: instantMicros(event.timestamp)!,
    seq: i + 1,
    kind: event.kind,
    source: event.source ?? DEFAULT_EVENT_SOURCE[event.kind]!,
    event,
  }));
}

/** Every example kind, several times, timestamps out of append order with ties. */
export function mixedEvents(): Event[] {
  const out: Event[] = [];
  for (let round = 0; round < 4; round++) {
    exampleEvents({ seed: round + 1 }).forEach((e, i) => {
      const micros = T0 + ((i * 7919 + round * 104729) % 50) * 1000; // 50 distinct instants: many ties
      out.push({ ...e, timestamp: iso(micros) } as Event);
    });
  }
  return out;
}

/** Every event id of a conversation, in search order, a page of 100 at a time. */
export async function allIds(store: EventStore, id = CONV): Promise<string[]> {
  const out: string[] = [];
  let after: Position | undefined;
  for (;;) {
    const page = await store.search(id, { order: "asc", limit: 100, after });
    out.push(...page.items.map((e) => e.id));
    if (!page.hasMore) return out;
    after = page.items[page.items.length - 1];
  }
}

/** A JsonPage with its bytes as text (comparable with jsonPageFor). */
interface ReadableJsonPage extends Omit<JsonPage, "json"> {
  json: string;
}

/** What searchJson must give for the query that gave `page`: the same JSON texts, joined by `,`. */
export function jsonPageFor(page: SearchPage): ReadableJsonPage {
  const last = nextAfter(page);
  return { json: page.items.map((e) => e.json).join(","), count: page.items.length, last: last && { ts: last.ts, seq: last.seq }, hasMore: page.hasMore };
}

/** Where the next page of `page` starts after: its last item, or where its scan budget ran out. */
export function nextAfter(page: SearchPage): Position | undefined {
  const last = page.resumeAfter ?? page.items.at(-1);
  return last && { ts: last.ts, seq: last.seq };
}

export function readable(page: JsonPage): ReadableJsonPage {
  return { ...page, json: new TextDecoder().decode(page.json) };
}
