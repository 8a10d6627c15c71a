/**
 * Judging a conversation as the implementation lists it against what the suite put in it. An
 * implementation may record events of its own (an agent's actions, state updates): they are allowed
 * anywhere the order permits. The suite's events must all be there, unchanged, in their order.
 */
import { ensure, expectSameIds, fail } from "./check.js";
import { expectedIds, filteredIds, instantMicros, matches, type AnyEvent, type SearchFilters } from "./data.js";

/**
 * Where `received` differs from what was `sent`, or undefined when it holds everything sent. Absent
 * and `null` are the same (recordings omit nulls, APIs send them) and defaults the server fills in
 * are allowed; key order does not matter.
 */
function firstDifference(sent: unknown, received: unknown, pointer = ""): string | undefined {
  const at = pointer || "/";
  const shown = (value: unknown) => JSON.stringify(value)?.slice(0, 120);
  if (sent === null || sent === undefined) return received === null || received === undefined ? undefined : `${at}: sent null, got ${shown(received)}`;
  if (Array.isArray(sent)) {
    if (!Array.isArray(received) || received.length !== sent.length) return `${at}: sent ${sent.length} items, got ${shown(received)}`;
    for (let i = 0; i < sent.length; i++) {
      const found = firstDifference(sent[i], received[i], `${pointer}/${i}`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof sent === "object") {
    if (typeof received !== "object" || received === null || Array.isArray(received)) return `${at}: sent an object, got ${shown(received)}`;
    for (const [key, value] of Object.entries(sent)) {
      const found = firstDifference(value, (received as Record<string, unknown>)[key], `${pointer}/${key}`);
      if (found) return found;
    }
    return undefined;
  }
  return sent === received ? undefined : `${at}: sent ${JSON.stringify(sent)}, got ${JSON.stringify(received)}`;
}

/** No id twice. */
export function expectNoDuplicate(ids: readonly string[], what: string): void {
  const seen = new Set<string>();
  for (const id of ids) {
    ensure(!seen.has(id), `${what}: ${id} is listed twice`);
    seen.add(id);
  }
}

/** Timestamps (as instants) never go backwards in ascending order, never forwards in descending. */
export function expectMonotone(events: readonly AnyEvent[], order: "TIMESTAMP" | "TIMESTAMP_DESC", what: string): void {
  for (let i = 1; i < events.length; i++) {
    const [before, after] = [instantMicros(events[i - 1]!.timestamp), instantMicros(events[i]!.timestamp)];
    if (order === "TIMESTAMP" ? after < before : after > before) {
      fail(`${what}: ${events[i]!.id} (${events[i]!.timestamp}) is listed after ${events[i - 1]!.id} (${events[i - 1]!.timestamp})`);
    }
  }
}

/**
 * The listing (ascending, every page) holds every known event once, unchanged, in the order the
 * spec gives them (instant, then append order), and is in timestamp order; returns how many events
 * the implementation added of its own.
 */
export function expectHolds(listed: readonly AnyEvent[], known: readonly AnyEvent[], what: string): number {
  expectNoDuplicate(listed.map((e) => e.id), what);
  const byId = new Map(listed.map((event) => [event.id, event]));
  const missing = known.filter((event) => !byId.has(event.id));
  ensure(missing.length === 0, () => `${what}: ${missing.length} of the ${known.length} events it was given are missing (${missing.slice(0, 3).map((e) => e.id).join(", ")}${missing.length > 3 ? ", …" : ""})`);
  for (const [i, event] of known.entries()) {
    const difference = firstDifference(event, byId.get(event.id));
    if (difference) fail(`${what}: event ${i} (${event.kind} ${event.id}) came back changed: ${difference}`);
  }
  const knownIds = new Set(known.map((e) => e.id));
  const order = listed.filter((e) => knownIds.has(e.id)).map((e) => e.id);
  const expected = expectedIds(known);
  const at = order.findIndex((id, i) => id !== expected[i]);
  ensure(at < 0, () => `${what}: order differs at position ${at} of the given events: ${order[at]} where ${expected[at]} belongs (order: instant, then append order)`);
  expectMonotone(listed, "TIMESTAMP", what);
  return listed.length - known.length;
}

/**
 * A search's result (every page) judged between two listings of a conversation that may record
 * events of its own while the suite reads it: `before` was taken before the search, `after` after
 * it. Every event of `before` that the filters keep must be there, once, in the search's order; an
 * event recorded meanwhile (only in `after`) may be there too, if the filters keep it and it stands
 * where `after` puts it; anything else fails.
 */
export function expectSearchBetween(
  received: readonly AnyEvent[],
  before: readonly AnyEvent[],
  after: readonly AnyEvent[],
  filters: SearchFilters,
  order: "TIMESTAMP" | "TIMESTAMP_DESC",
  what: string,
): void {
  const ids = received.map((e) => e.id);
  expectNoDuplicate(ids, what);
  const earlier = new Set(before.map((e) => e.id));
  expectSameIds(
    ids.filter((id) => earlier.has(id)),
    filteredIds(before, filters, order),
    what,
  );
  const later = new Map(after.map((e) => [e.id, e]));
  for (const event of received) {
    if (earlier.has(event.id)) continue;
    ensure(later.has(event.id), `${what}: ${event.id} (${event.kind}) is listed, but neither before nor after the search`);
    ensure(matches(event, filters), `${what}: ${event.id} (${event.kind}, recorded during the search) does not match the filters`);
  }
  const shown = new Set(ids);
  expectSameIds(
    ids,
    filteredIds(after, filters, order).filter((id) => shown.has(id)),
    `${what} (order, events recorded during the search included)`,
  );
}
