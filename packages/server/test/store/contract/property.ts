/**
 * The store contract, property test of search (seeded, deterministic): random conversations (every
 * kind, explicit and default sources, timestamps with many ties written with and without zone
 * offsets, message texts with FTS syntax and non-ASCII letters, appended in random batches next to a
 * decoy conversation) × random filters × page sizes 1..100 × both orders × random starting cursors.
 * Concatenating the pages must equal the filtered, sorted list computed naively in JS — no
 * duplicate, no gap — with hasMore false exactly at the last page, searchJson the same page as
 * bytes, and count() its length. Rounds go through the store's variants (the SQLite store's
 * body-search thresholds, so that every plan runs).
 */
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { DEFAULT_EVENT_SOURCE, EVENT_KINDS, type Event, type EventKind, type EventSource, type MessageEvent } from "@acs-toolkit/schema";
import { exampleEvents, seededRandom } from "@acs-toolkit/schema/examples";
import { messageBodyText } from "@acs-toolkit/test-kit/trajectory";
import type { Position, SearchFilters, SearchQuery, StoredEvent } from "../../../src/store/types.js";
import type { StoreContext } from "./index.js";
import { jsonPageFor, nextAfter, readable } from "./fixtures.js";

const ROUNDS = 20;
const QUERIES_PER_ROUND = 30;
const CONV = "00000000-0000-4000-8000-00000000000a";
const DECOY = "00000000-0000-4000-8000-00000000000b";
const SOURCES: EventSource[] = ["agent", "user", "environment"];
const WORDS = [
  "Alpha", "beta", "GAMMA", "delta", "fix", "the", "failing", "Test", '"quoted"', '"', "AND", "OR", "NOT",
  "NEAR(", "x*", "col:umn", "^start", "100%", "a_b", "Größe", "straße", "ΣΊΣΥΦΟΣ", "ok", "zz", "é", "-",
];

interface Row {
  id: string;
  ts: number;
  seq: number;
  kind: string;
  source: string;
  text: string | null;
}

function expected(rows: Row[], q: SearchFilters & { order: "asc" | "desc"; after?: Position }): string[] {
  const body = q.body?.toLowerCase();
  const out = rows.filter(
    (r) =>
      (q.kind === undefined || r.kind === q.kind) &&
      (q.source === undefined || r.source === q.source) &&
      (q.timestampGte === undefined || r.ts >= q.timestampGte) &&
      (q.timestampLt === undefined || r.ts < q.timestampLt) &&
      (body === undefined || (r.text !== null && r.text.includes(body))),
  );
  const cmp = (a: Position, b: Position) => a.ts - b.ts || a.seq - b.seq;
  out.sort(cmp);
  if (q.order === "desc") out.reverse();
  const after = q.after;
  const rest = after ? out.filter((r) => (q.order === "asc" ? cmp(r, after) > 0 : cmp(r, after) < 0)) : out;
  return rest.map((r) => r.id);
}

/** An instant written in one of several equivalent ways. */
function writeInstant(micros: number, random: () => number): string {
  const fraction = micros % 1_000_000;
  const fractionText = (digits: number) => (fraction === 0 && random() < 0.5 ? "" : `.${String(fraction).padStart(6, "0").slice(0, digits)}`);
  const at = (offsetMinutes: number) => new Date(Math.floor(micros / 1000) + offsetMinutes * 60_000).toISOString().slice(0, 19);
  const pick = random();
  if (pick < 0.4) return `${at(0)}${fractionText(6)}`; // the reference's form: no offset
  if (pick < 0.6) return `${at(0)}${fractionText(6)}Z`;
  const offset = [60, -300, 330, 0][Math.floor(random() * 4)]!;
  const sign = offset < 0 ? "-" : "+";
  const hh = String(Math.floor(Math.abs(offset) / 60)).padStart(2, "0");
  const mm = String(Math.abs(offset) % 60).padStart(2, "0");
  return `${at(offset)}${fractionText(6)}${sign}${hh}:${mm}`;
}

function randomText(random: () => number): string {
  const n = Math.floor(random() * 7);
  const words = Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]!);
  return words.join(random() < 0.8 ? " " : "");
}

/** `inOrder`: timestamps never decrease in append order (as recorded trajectories), with ties. */
function generate(random: () => number, count: number, idPrefix: string, inOrder = false): Event[] {
  const templates = exampleEvents();
  const byKind = new Map<EventKind, Event>(templates.map((e) => [e.kind, e]));
  // 200 µs apart at most, on few distinct instants: many ties, out of append order.
  const instants = Array.from({ length: Math.max(3, Math.floor(count / 4)) }, () => Date.UTC(2026, 1, 5, 11) * 1000 + Math.floor(random() * 200) * 1000 + (random() < 0.5 ? 0 : Math.floor(random() * 1000)));
  const chosen = Array.from({ length: count }, () => instants[Math.floor(random() * instants.length)]!);
  if (inOrder) chosen.sort((a, b) => a - b);
  const events: Event[] = [];
  for (let i = 0; i < count; i++) {
    const kind: EventKind = random() < 0.4 ? "MessageEvent" : EVENT_KINDS[Math.floor(random() * EVENT_KINDS.length)]!;
    const timestamp = writeInstant(chosen[i]!, random);
    let event = { ...byKind.get(kind)!, id: `${idPrefix}${i}`, timestamp } as Event & { source?: EventSource };
    if (DEFAULT_EVENT_SOURCE[kind] === null || random() < 0.3) event.source = SOURCES[Math.floor(random() * 3)]!;
    else delete event.source;
    if (kind === "MessageEvent") {
      const m = event as MessageEvent;
      const content: NonNullable<MessageEvent["llm_message"]["content"]> = [{ type: "text", text: randomText(random) }];
      if (random() < 0.2) content.push({ type: "text", text: randomText(random) });
      if (random() < 0.1) content.push({ type: "image", image_urls: ["https://example.com/alpha.png"] });
      event = {
        ...m,
        llm_message: { ...m.llm_message, content, reasoning_content: random() < 0.2 ? randomText(random) : null },
        extended_content: random() < 0.2 ? [{ type: "text" as const, text: randomText(random) }] : [],
      };
    }
    events.push(event);
  }
  return events;
}

function randomBody(random: () => number, rows: Row[]): string {
  const pick = random();
  const texts = rows.filter((r) => r.text).map((r) => r.text!);
  if (pick < 0.4 || texts.length === 0) {
    const w = WORDS[Math.floor(random() * WORDS.length)]!;
    return random() < 0.5 ? w.toUpperCase() : w;
  }
  if (pick < 0.9) {
    const t = texts[Math.floor(random() * texts.length)]!;
    const start = Math.floor(random() * t.length);
    const s = t.slice(start, start + 1 + Math.floor(random() * 6));
    return random() < 0.3 ? s.toUpperCase() : s;
  }
  return ["absent-word", "q", "ßx", "\"\"\"", "*", "NEAR(a b)"][Math.floor(random() * 6)]!;
}

export function propertyContract({ open, variants, scanBudget }: StoreContext): void {
  describe("search, property", () => {
    it(`${ROUNDS} random conversations × ${QUERIES_PER_ROUND} random queries: pages equal the naive answer`, async () => {
      const random = seededRandom(20260205);
      let checked = 0;
      let bodyQueries = 0;
      let multiPage = 0;
      let budgetPages = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const store = await open(round % variants);
        try {
          const count = 20 + Math.floor(random() * 380);
          // Every other turn through the variants, conversations in time order: search order is append order there, which
          // the SQLite store's body search reads FTS in (body-search.ts).
          const events = generate(random, count, "e", Math.floor(round / variants) % 2 === 1);
          // The decoy shares ids and words: nothing of it may appear in CONV's results.
          await store.createConversation({ id: DECOY, status: "RUNNING" }, generate(random, 60, "e").map((event) => ({ event, json: JSON.stringify(event) })));
          const rows: Row[] = [];
          for (let i = 0; i < events.length; ) {
            const size = 1 + Math.floor(random() * 60);
            const batch = events.slice(i, i + size).map((event) => ({ event, json: JSON.stringify(event) }));
            let stored: StoredEvent[] | undefined;
            if (i === 0) await store.createConversation({ id: CONV, status: "RUNNING" }, batch);
            else stored = await store.appendEvents(CONV, batch);
            for (const [j, { event }] of batch.entries()) {
              const seq = i + j + 1;
              const position = (await store.positionOf(CONV, event.id))!;
              if (stored) expect(stored[j]!.seq).toBe(seq);
              expect(position.seq).toBe(seq);
              rows.push({
                id: event.id,
                ts: position.ts,
                seq,
                kind: event.kind,
                source: event.source ?? DEFAULT_EVENT_SOURCE[event.kind]!,
                text: event.kind === "MessageEvent" ? messageBodyText(event) : null,
              });
            }
            i += size;
          }
          const instants = [...new Set(rows.map((r) => r.ts))];
          const anInstant = () => instants[Math.floor(random() * instants.length)]! + [0, 0, 1, -1][Math.floor(random() * 4)]!;

          for (let k = 0; k < QUERIES_PER_ROUND; k++) {
            const filters: SearchFilters = {};
            if (random() < 0.3) filters.kind = random() < 0.5 ? "MessageEvent" : EVENT_KINDS[Math.floor(random() * EVENT_KINDS.length)]!;
            if (random() < 0.3) filters.source = SOURCES[Math.floor(random() * 3)]!;
            if (random() < 0.25) filters.timestampGte = anInstant();
            if (random() < 0.25) filters.timestampLt = anInstant();
            if (random() < 0.5) filters.body = randomBody(random, rows);
            for (const order of ["asc", "desc"] as const) {
              const limit = 1 + Math.floor(random() ** 2 * 100);
              let after: Position | undefined;
              if (random() < 0.25) {
                const r = rows[Math.floor(random() * rows.length)]!;
                after = random() < 0.7 ? { ts: r.ts, seq: r.seq } : { ts: anInstant(), seq: Math.floor(random() * (rows.length + 2)) };
              }
              const want = expected(rows, { ...filters, order, after });
              const got: string[] = [];
              let cursor = after;
              let pagesSeen = 0;
              let resumed = false;
              for (;;) {
                const query = { ...filters, order, limit, after: cursor } satisfies SearchQuery;
                const page = await store.search(CONV, query);
                // The page as bytes is the same page.
                const asJson = readable(await store.searchJson(CONV, query));
                const want = jsonPageFor(page);
                if (!isDeepStrictEqual(asJson, want)) expect({ query, asJson }).toEqual({ query, asJson: want });
                pagesSeen++;
                got.push(...page.items.map((e) => e.id));
                // Short (or empty) only where the scan budget ran out; empty only after such a page.
                if (page.hasMore && page.items.length !== limit && !page.resumeAfter) throw new Error(`short page with hasMore: ${JSON.stringify({ filters, order, limit })}`);
                if (pagesSeen > 1 && page.items.length === 0 && !resumed) throw new Error(`empty page after hasMore: ${JSON.stringify({ filters, order, limit })}`);
                if (page.resumeAfter) budgetPages++;
                resumed = page.resumeAfter !== undefined;
                if (!page.hasMore) break;
                cursor = nextAfter(page);
                if (pagesSeen > rows.length + 2) throw new Error("runaway paging");
              }
              if (got.length !== want.length || got.some((id, i) => id !== want[i])) {
                expect({ round, filters, order, limit, after, got }).toEqual({ round, filters, order, limit, after, got: want });
              }
              if (pagesSeen > 1) multiPage++;
              checked++;
            }
            if (filters.body !== undefined) bodyQueries++;
            const counted = await store.count(CONV, filters);
            if (counted !== expected(rows, { ...filters, order: "asc" }).length) {
              expect({ round, filters, counted }).toEqual({ round, filters, counted: expected(rows, { ...filters, order: "asc" }).length });
            }
          }
        } finally {
          await store.close();
        }
      }
      expect(checked).toBe(ROUNDS * QUERIES_PER_ROUND * 2);
      // The generator really exercised what it claims to.
      expect(bodyQueries).toBeGreaterThan(ROUNDS * QUERIES_PER_ROUND * 0.3);
      expect(multiPage).toBeGreaterThan(checked * 0.3);
      if (scanBudget) expect(budgetPages).toBeGreaterThan(100); // pages the scan budget ended
      else expect(budgetPages).toBe(0);
    });
  });
}
