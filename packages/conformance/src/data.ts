/**
 * The data the checks create through the interface itself (`replay_json`), and what a conforming
 * search must answer for it, computed here from the spec's rules: one total order (timestamp as an
 * instant, then append order; DESC its exact reverse), filters on kind, source (with the kind's
 * default), message text and timestamps.
 */
import { randomUUID } from "node:crypto";
import type { Event, operations } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { eventMatches, instantMicros as parseInstant } from "@acs-toolkit/schema/search";

/** An event as the checks handle it: loosely typed, as it is sent and received. */
export type AnyEvent = Record<string, any> & { id: string; kind: string; timestamp: string };

/** The search filters of the spec: the query parameters of countEvents (those of searchEvents that filter). */
export type SearchFilters = NonNullable<operations["countEvents"]["parameters"]["query"]>;

/** The word of the body-filter checks, in several cases and places. */
export const BODY_WORD = "zephyr";

/**
 * Microseconds since the epoch of a timestamp (the toolkit's one parser: ISO-8601, no offset means
 * UTC, as the spec says); throws for text that is not one.
 */
export function instantMicros(timestamp: string): number {
  const micros = parseInstant(timestamp);
  if (micros === undefined) throw new Error(`not a timestamp: ${timestamp}`);
  return micros;
}

/**
 * The timestamp text of an instant (microseconds), in one of the forms real recordings and clients
 * use: no offset (UTC, as the reference records), `Z`, `+00:00`, or a non-zero offset.
 */
export function timestampText(micros: number, form: "none" | "Z" | "+00:00" | "+01:00" | "-02:00"): string {
  const shift = { none: 0, Z: 0, "+00:00": 0, "+01:00": 60, "-02:00": -120 }[form];
  const wall = new Date(Math.floor(micros / 1000) + shift * 60_000).toISOString().slice(0, 19);
  const fraction = String(micros % 1_000_000).padStart(6, "0");
  return `${wall}.${fraction}${form === "none" ? "" : form}`;
}

/** Replaces every example id (and every reference to it) by a fresh UUID, so that runs never collide. */
function withFreshIds(events: Event[]): AnyEvent[] {
  const fresh = new Map<string, string>();
  const text = JSON.stringify(events).replace(/[0-9a-f]{8}-0000-4000-8000-[0-9a-f]{12}/g, (id) => {
    let replacement = fresh.get(id);
    if (!replacement) fresh.set(id, (replacement = randomUUID()));
    return replacement;
  });
  return JSON.parse(text) as AnyEvent[];
}

const text = (value: string) => ({ cache_prompt: false, type: "text" as const, text: value });

/** 2020-03-01T10:00:00Z: well before any server-assigned timestamp of an appended event. */
const BASE_MICROS = Date.UTC(2020, 2, 1, 10, 0, 0) * 1000;

/**
 * The first `size` events of the example trajectory with fresh ids, timestamps 1 ms apart from
 * 2020-03-01 (so that events appended now come after them in search order).
 */
export function freshTrajectory(size: number, seed = 0xc0f7): AnyEvent[] {
  return withFreshIds(exampleEvents({ seed, start: new Date(BASE_MICROS / 1000) }).slice(0, size));
}

/**
 * The main trajectory: 110 events of every kind (more than one page at the largest limit),
 * timestamps never going backwards in append order but tied in pairs and written in several forms,
 * a few events without `source` (their kind's default applies), and the body word in a message's
 * text, extended content and reasoning content, and in an ActionEvent thought (which must not match).
 */
export function mainTrajectory(): AnyEvent[] {
  const events = withFreshIds([...exampleEvents({ seed: 0xc0f1 }), ...exampleEvents({ seed: 0xc0f2 })]);
  events.forEach((event, i) => {
    const micros = BASE_MICROS + Math.floor(i / 2) * 1_000_000 + 123_456;
    event.timestamp = timestampText(micros, i % 10 === 3 ? "Z" : i % 10 === 7 ? "+00:00" : "none");
  });
  const messages = events.filter((e) => e.kind === "MessageEvent");
  const [first, second, third, fourth] = messages;
  first!.llm_message.content = [text("Please look at the ZEPHYR module")];
  second!.llm_message.content = [text("Done.")];
  second!.extended_content = [text("context: Zephyr notes")];
  third!.llm_message.content = [text("hello")];
  third!.llm_message.reasoning_content = "thinking about zePHyr";
  fourth!.llm_message.content = [text("nothing relevant here")];
  const action = events.find((e) => e.kind === "ActionEvent")!;
  action.thought = [text("a zephyr in a thought is not a message")];
  // Kinds with a default source may omit it; the source filter must apply the default.
  for (const kind of ["ActionEvent", "ObservationEvent", "PauseEvent", "CondensationRequest"]) {
    const event = events.filter((e) => e.kind === kind).at(-1)!;
    delete event.source;
  }
  return events;
}

/**
 * A trajectory whose timestamps are out of append order: ties, and offsets of +01:00 and -02:00
 * whose wall-clock text sorts differently from the instant. Search must order it by instant, then
 * by append order.
 */
export function shuffledTrajectory(): AnyEvent[] {
  const events = withFreshIds(exampleEvents({ seed: 0xc0f3 }).slice(0, 40));
  const forms = ["none", "Z", "+01:00", "none", "-02:00", "+00:00"] as const;
  events.forEach((event, i) => {
    const slot = (i * 7) % 15; // 40 events over 15 instants: out of order, with ties
    event.timestamp = timestampText(BASE_MICROS + slot * 1_000_000, forms[i % forms.length]!);
  });
  return events;
}

/**
 * True when the event passes every filter (each event judged by its own fields), by the toolkit's
 * one definition of search (`eventMatches` of @acs-toolkit/validator).
 */
export function matches(event: AnyEvent, filters: SearchFilters): boolean {
  return eventMatches(event, {
    kind: filters.kind,
    source: filters.source,
    body: filters.body,
    timestampGte: filters.timestamp__gte === undefined ? undefined : instantMicros(filters.timestamp__gte),
    timestampLt: filters.timestamp__lt === undefined ? undefined : instantMicros(filters.timestamp__lt),
  });
}

/**
 * The ids a conforming search lists for these filters and this order (all pages together), for
 * events given in append order: by instant, then append order; DESC the exact reverse.
 */
export function expectedIds(events: readonly AnyEvent[], filters: SearchFilters = {}, order: "TIMESTAMP" | "TIMESTAMP_DESC" = "TIMESTAMP"): string[] {
  const ids = events
    .map((event, seq) => ({ event, seq, at: instantMicros(event.timestamp) }))
    .filter(({ event }) => matches(event, filters))
    .sort((a, b) => a.at - b.at || a.seq - b.seq)
    .map(({ event }) => event.id);
  return order === "TIMESTAMP_DESC" ? ids.reverse() : ids;
}

/**
 * What a search lists, given the conversation as the implementation lists it in ascending order
 * (its own events included: an implementation with an agent records more than the suite sent).
 */
export function filteredIds(listed: readonly AnyEvent[], filters: SearchFilters = {}, order: "TIMESTAMP" | "TIMESTAMP_DESC" = "TIMESTAMP"): string[] {
  const ids = listed.filter((event) => matches(event, filters)).map((event) => event.id);
  return order === "TIMESTAMP_DESC" ? ids.reverse() : ids;
}

/** JSON Lines, the form recordings come in. */
export const asJsonLines = (events: readonly unknown[]): string => events.map((e) => JSON.stringify(e)).join("\n");

/** A user Message (the body of an appended message and of an inbound WebSocket frame). */
export const userMessage = (words: string) => ({ role: "user", content: [text(words)] });
