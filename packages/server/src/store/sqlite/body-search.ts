/**
 * The body filter of the SQLite store: its storage, and the plan of a page (FTS or an ordered walk).
 *
 * Only MessageEvents match. Their searchable text (text content + extended_content + reasoning
 * content, joined by a space as the reference joins them) is stored lower-cased (String#toLowerCase,
 * the equivalent of Python's str.lower()) in `message_texts`, with the message's seq, ts and
 * source, and indexed by an FTS5 trigram table (`message_fts`, external content) that the store
 * fills in the inserting transaction. A match is always confirmed with `instr(text, lower(body))`,
 * so the semantics are exactly `body.lower() in text.lower()`; FTS only narrows the candidates.
 * The body goes to FTS as at most FTS_TERMS of its distinct trigrams, each a quoted string (`"`
 * doubled, so `AND`, `NEAR(`, `*`, `:` are literal), joined by AND: a text holding the body holds
 * all of them. (As one phrase, a body of 1,000 repeated characters was 998 copies of one trigram,
 * and FTS5 matched such a phrase against each candidate's positions in quadratic time: seconds
 * for 1,500 messages, minutes for 30,000.)
 *
 * The FTS rowid is `events.key = (conversation << 32) | seq`: `rowid BETWEEN conv<<32 AND
 * conv<<32|0xFFFFFFFF` restricts an FTS query to one conversation inside the full-text index, so
 * other conversations' messages cost nothing, and no query reads a candidate's events row.
 *
 * Every page does bounded work (issue 13: a page must not hold the event loop, whatever the body):
 *  - FTS: when the conversation has at most FTS_CANDIDATES candidates (counted by a probe that
 *    stops at FTS_CANDIDATES + 1, the FTS iterator only), they are confirmed, filtered and sorted:
 *    cheap for a rare term, and bounded by FTS_CANDIDATES.
 *  - walk: otherwise (a frequent term, or a body of 1–2 characters, which trigrams cannot serve),
 *    the (conversation, kind=MessageEvent[, source], ts, seq) index is walked in query order, each
 *    message tested with instr (index + one text row, no events row), until `limit + 1` hits or
 *    SCAN_BUDGET messages. A frequent term fills the page in a few hundred messages. When the
 *    budget runs out first (a term frequent elsewhere but sparse here), the page is shorter than
 *    `limit` — possibly empty — and its cursor resumes the walk after the last message tested, so
 *    the pages together are exactly the matching events, in order, none twice.
 * A page therefore costs at most ~FTS_CANDIDATES candidates or SCAN_BUDGET walked messages (at 1M
 * events, tens of milliseconds at worst; a fraction of a millisecond to a few ms in the common
 * cases). `count` with a body is exact, O(its candidates): the server runs it off the request
 * thread (workers/read-worker.ts).
 * `instr` on pre-lower-cased text is used rather than LIKE: it is an exact substring test with no
 * wildcard escaping, and SQLite's LIKE folds ASCII only.
 */
import type { Position, SearchFilters, SearchPage, SearchQuery, StoredEvent } from "../types.js";
import type { Bounds } from "./paging.js";
import { SEARCH_SQL, type Statements } from "./statements.js";

/**
 * The plan (see the module comment): up to this many FTS candidates in a conversation, a page
 * is served by sorting them; beyond, by walking the messages in order.
 */
export const FTS_CANDIDATES = 1024;
/** Messages a walk tests for one page; past it the page ends short and its cursor resumes the walk. */
export const SCAN_BUDGET = 20_000;
/** Distinct trigrams of the body that an FTS query asks for (spread over the body). */
export const FTS_TERMS = 16;

/**
 * The FTS5 query of a (lower-cased) body: up to FTS_TERMS of its distinct trigrams, spread over it,
 * each an FTS5 string (`"` doubled: nothing else is syntax), joined by AND. Undefined when the body
 * has fewer than 3 characters or a NUL (which would end the FTS query string early).
 */
export function ftsQuery(needle: string): string | undefined {
  const chars = [...needle];
  if (chars.length < 3 || needle.includes("\u0000")) return undefined;
  const trigrams = [...new Set(chars.slice(2).map((_, i) => chars.slice(i, i + 3).join("")))];
  const step = trigrams.length / Math.min(FTS_TERMS, trigrams.length);
  const chosen = Array.from({ length: Math.min(FTS_TERMS, trigrams.length) }, (_, i) => trigrams[Math.floor(i * step)]!);
  return chosen.map((trigram) => `"${trigram.replaceAll('"', '""')}"`).join(" AND ");
}

interface WalkRow extends Position {
  hit: 0 | 1;
}

/** The two thresholds of the plan (see the module comment); tests lower them to reach each branch with a few events. */
export interface BodySearchTuning {
  ftsCandidates?: number;
  scanBudget?: number;
}

/** The codes (names.ts) a body search binds: MessageEvent's, and the source's when filtered on. */
export interface BodyCodes {
  source?: number;
  messageKind?: number;
}

/** Pages and counts of body-filtered searches (see the module comment). */
export class BodySearch {
  readonly ftsCandidates: number;
  readonly scanBudget: number;

  constructor(
    private readonly statements: Statements,
    tuning: BodySearchTuning = {},
  ) {
    this.ftsCandidates = tuning.ftsCandidates ?? FTS_CANDIDATES;
    this.scanBudget = Math.max(1, tuning.scanBudget ?? SCAN_BUDGET);
  }

  /** A page of `query` (which has a body) in conversation `conv`, within `bounds`. */
  page(conv: number, query: SearchQuery, bounds: Bounds, codes: BodyCodes): SearchPage {
    const { limit, order } = query;
    const needle = query.body!.toLowerCase();
    const match = ftsQuery(needle);
    const source = query.source !== undefined;
    const want = limit + 1;
    const params = { conv, ...codes, needle, match, ...bounds };
    const hits: Position[] = [];
    let resumeAfter: Position | undefined;

    if (match !== undefined && (this.statements.fixed.probe.get({ conv, match, k: this.ftsCandidates + 1 }) as { n: number }).n <= this.ftsCandidates) {
      // Few candidates in the whole conversation: sorting them all is cheaper than any walk.
      const fts = this.statements.get(`fts:${source}:${order}`, () => SEARCH_SQL.fts(source, order));
      hits.push(...(fts.all({ ...params, n: want }) as Position[]));
    } else {
      // A frequent term (or 1–2 characters): walk the messages in order, at most scanBudget of them.
      const walk = this.statements.get(`walk:${source}:${order}`, () => SEARCH_SQL.walk(source, order));
      let walked = 0;
      for (const row of walk.iterate(params) as IterableIterator<WalkRow>) {
        if (row.hit && hits.push({ ts: row.ts, seq: row.seq }) === want) break;
        if (++walked >= this.scanBudget) {
          // Out of budget: a short page; the next one resumes after the last message tested.
          resumeAfter = { ts: row.ts, seq: row.seq };
          break;
        }
      }
    }

    const full = hits.length > limit;
    if (full) hits.length = limit;
    const rows = this.statements.fixed.eventsAt.all({ conv, seqs: JSON.stringify(hits.map((h) => h.seq)) }) as { seq: number; id: string; json: string }[];
    const bySeq = new Map(rows.map((r) => [r.seq, r]));
    const items = hits.map(({ ts, seq }): StoredEvent => {
      const { id, json } = bySeq.get(seq)!;
      return { id, json, ts, seq };
    });
    if (full) return { items, hasMore: true };
    return resumeAfter ? { items, hasMore: true, resumeAfter } : { items, hasMore: false };
  }

  /** How many events match `filters` (which have a body) in conversation `conv`, within `bounds`: exact, O(its candidates). */
  count(conv: number, filters: SearchFilters, bounds: Bounds, codes: BodyCodes): number {
    const source = filters.source !== undefined;
    const needle = filters.body!.toLowerCase();
    const match = ftsQuery(needle);
    const params = { conv, ...codes, needle, match, ...bounds };
    const stmt = match !== undefined
      ? this.statements.get(`ftsCount:${source}`, () => SEARCH_SQL.ftsCount(source))
      : this.statements.get(`walkCount:${source}`, () => SEARCH_SQL.walkCount(source));
    return (stmt.get(params) as { n: number }).n;
  }
}
