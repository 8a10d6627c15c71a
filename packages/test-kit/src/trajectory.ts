/**
 * The search property tests' model, shared by the server's and the mock's: random trajectories full
 * of timestamp ties, and the naive answers (text and source of an event) the pages are held to.
 */
import { DEFAULT_EVENT_SOURCE, type Event, type MessageEvent } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { instantMicros } from "@acs-toolkit/schema/search";

/** Message words: mixed case, accents, a 1-letter one (the body filter's edge cases). */
export const WORDS = ["alpha", "Beta", "GAMMA", "delta", "pwd", "résumé", "naïve", "x"];

/** Events of every kind with timestamps full of ties, some with offsets, and varied message texts. */
export function randomTrajectory(rand: () => number, size: number): Event[] {
  const pool = exampleEvents({ seed: 99 });
  const base = Date.UTC(2026, 1, 5, 11, 0, 0);
  return Array.from({ length: size }, (_, i) => {
    const event = structuredClone(pool[Math.floor(rand() * pool.length)]!) as Event & Record<string, any>;
    event.id = `00000099-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
    const millis = base + Math.floor(rand() * 40) * 1000; // 40 distinct seconds for `size` events: many ties
    const iso = new Date(millis).toISOString();
    const form = rand();
    event.timestamp = form < 0.6 ? iso.replace("Z", "") : form < 0.8 ? iso : new Date(millis).toISOString().replace("Z", "+00:00");
    if (event.kind === "CondensationSummaryEvent") event.id += "-summary";
    if (event.kind === "MessageEvent") {
      event.source = rand() < 0.5 ? "user" : "agent";
      event.llm_message.content = [{ type: "text", text: `${WORDS[Math.floor(rand() * WORDS.length)]} ${WORDS[Math.floor(rand() * WORDS.length)]}` }];
    }
    return event;
  });
}

/**
 * A message's searchable text as the interface defines it: its text content, extended_content and
 * reasoning_content, joined by a space, lower-cased. An oracle written apart from the store's code.
 */
export function messageBodyText(event: MessageEvent): string {
  const parts: string[] = [];
  for (const c of event.llm_message.content ?? []) if (c.type === "text") parts.push(c.text);
  for (const c of event.extended_content ?? []) parts.push(c.text);
  if (event.llm_message.reasoning_content) parts.push(event.llm_message.reasoning_content);
  return parts.join(" ").toLowerCase();
}

/** A random query of the search endpoint: its parameters (filters over `kinds`), page size and order. */
export function randomSearchQuery(rand: () => number, kinds: readonly string[]): { query: Record<string, string | number>; limit: number; desc: boolean } {
  const query: Record<string, string | number> = {};
  const limit = 1 + Math.floor(rand() * (rand() < 0.5 ? 10 : 100));
  const desc = rand() < 0.5;
  if (rand() < 0.3) query.kind = kinds[Math.floor(rand() * kinds.length)]!;
  if (rand() < 0.3) query.source = ["agent", "user", "environment"][Math.floor(rand() * 3)]!;
  if (rand() < 0.25) query.body = WORDS[Math.floor(rand() * WORDS.length)]!.toUpperCase();
  if (rand() < 0.3) query.timestamp__gte = new Date(Date.UTC(2026, 1, 5, 11, 0, Math.floor(rand() * 40))).toISOString();
  if (rand() < 0.3) query.timestamp__lt = new Date(Date.UTC(2026, 1, 5, 11, 0, Math.floor(rand() * 40))).toISOString().replace("Z", "");
  return { query, limit, desc };
}

/**
 * The ids the search endpoint answers for `query` over `events` (in append order), every page
 * together: the naive oracle of the paging property.
 */
export function expectedSearchIds(events: readonly Event[], query: Record<string, string | number>, desc: boolean): string[] {
  const gte = query.timestamp__gte ? instantMicros(String(query.timestamp__gte))! : -Infinity;
  const lt = query.timestamp__lt ? instantMicros(String(query.timestamp__lt))! : Infinity;
  const body = query.body === undefined ? undefined : String(query.body).toLowerCase();
  const ids = events
    .map((event, seq) => ({ event, ts: instantMicros(event.timestamp)!, seq }))
    .sort((a, b) => a.ts - b.ts || a.seq - b.seq)
    .filter(({ event, ts }) => (!query.kind || event.kind === shortKind(String(query.kind))) && (!query.source || sourceOf(event) === query.source) && ts >= gte && ts < lt)
    .filter(({ event }) => body === undefined || (event.kind === "MessageEvent" && messageBodyText(event).includes(body)))
    .map(({ event }) => event.id);
  return desc ? ids.reverse() : ids;
}

/** A kind filter's kind: the last part of a qualified `module.ClassName`. */
const shortKind = (kind: string) => kind.slice(kind.lastIndexOf(".") + 1);

/** An event's source, or its kind's default from the spec. */
export const sourceOf = (event: Event): string => event.source ?? DEFAULT_EVENT_SOURCE[event.kind] ?? "";
