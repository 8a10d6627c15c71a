/**
 * The body filter of the SQLite store: its storage, and the plan of a page (FTS or an ordered walk).
 *
 * Only MessageEvents match. Their searchable text (text content + extended_content + reasoning
 * content, joined by a space as the reference joins them) is stored lower-cased (String#toLowerCase,
 * the equivalent of Python's str.lower()) in `message_texts`, with the message's seq, ts and
 * source, and indexed by an FTS5 trigram table (`message_fts`, contentless) that the store fills
 * in the inserting transaction, each text followed by two U+0001 so that every character of it
 * begins a trigram. A match is always confirmed with `instr(text, lower(body))`, so the semantics
 * are exactly `body.lower() in text.lower()`; FTS only narrows the candidates.
 * A body of 3 or more characters goes to FTS as at most FTS_TERMS of its distinct trigrams, each a
 * quoted string (`"` doubled, so `AND`, `NEAR(`, `*`, `:` are literal), joined by AND: a text
 * holding the body holds all of them. (As one phrase, a body of 1,000 repeated characters was 998
 * copies of one trigram, and FTS5 matched such a phrase against each candidate's positions in
 * quadratic time: seconds for 1,500 messages, minutes for 30,000.) A body of 1–2 ASCII characters
 * goes as the indexed trigrams that begin with it, ORed (read from the FTS vocabulary; none: no
 * text holds it), unless more than SHORT_BODY_TRIGRAMS do (a common character: the walk is fast).
 *
 * The FTS rowid is `events.key = (conversation << 32) | seq`: `rowid BETWEEN conv<<32 AND
 * conv<<32|0xFFFFFFFF` restricts an FTS query to one conversation inside the full-text index, so
 * other conversations' messages cost nothing, and no query reads a candidate's events row.
 *
 * Every page does bounded work (a page must not hold the event loop, whatever the body),
 * and none grows with the conversation:
 *  - FTS, sorted: when the conversation has at most FTS_CANDIDATES candidates (counted by a probe
 *    that stops at FTS_CANDIDATES + 1, the FTS iterator only), they are confirmed, filtered and
 *    sorted: cheap for a rare term, and bounded by FTS_CANDIDATES.
 *  - FTS in append order: more candidates, in a conversation whose timestamps never decrease in
 *    append order (`conversations.ts_ordered`, kept by every insert; recordings are), where search
 *    order is append order. The page's bounds become two seqs (the time index, O(log n)) and FTS
 *    hands out the candidates between them in rowid order, each confirmed, until the page is full:
 *    a term in 1% of the messages costs about a page's worth of candidates at any size.
 *  - walk: otherwise (a conversation out of time order, a body FTS cannot narrow), the
 *    (conversation, kind=MessageEvent[, source], ts, seq) index is walked in query order, each
 *    message tested with instr (index + one text row, no events row). A frequent term fills the
 *    page in a few hundred messages.
 * The last two read at most SCAN_BUDGET candidates or messages: when the budget runs out first (a
 * term frequent elsewhere but sparse here), the page is shorter than `limit` — possibly empty —
 * and its cursor resumes after the last row tested, so the pages together are exactly the
 * matching events, in order, none twice.
 * A page therefore costs at most ~FTS_CANDIDATES candidates or SCAN_BUDGET walked messages (at 1M
 * events, tens of milliseconds at worst; a fraction of a millisecond to a few ms in the common
 * cases). `count` with a body is exact, O(its candidates): the server runs it off the request
 * thread (read-worker.ts).
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
const FTS_CANDIDATES = 1024;
/** Messages a walk tests for one page; past it the page ends short and its cursor resumes the walk. */
const SCAN_BUDGET = 20_000;
/** Distinct trigrams of the body that an FTS query asks for (spread over the body). */
const FTS_TERMS = 16;

/**
 * The FTS5 query of a (lower-cased) body: up to FTS_TERMS of its distinct trigrams, spread over it,
 * each an FTS5 string (`"` doubled: nothing else is syntax), joined by AND. Undefined when the body
 * has fewer than 3 characters or a NUL (which would end the FTS query string early).
 */
export function ftsQuery(needle: string): string | undefined {
  return ftsTerms(needle)?.join(" AND ");
}

/** The FTS5 strings of an FTS query (see ftsQuery): a term `"` doubled, quoted. */
const ftsString = (term: string) => `"${term.replaceAll('"', '""')}"`;

function ftsTerms(needle: string): string[] | undefined {
  const chars = [...needle];
  if (chars.length < 3 || needle.includes("\u0000")) return undefined;
  const trigrams = [...new Set(chars.slice(2).map((_, i) => chars.slice(i, i + 3).join("")))];
  const step = trigrams.length / Math.min(FTS_TERMS, trigrams.length);
  const chosen = Array.from({ length: Math.min(FTS_TERMS, trigrams.length) }, (_, i) => trigrams[Math.floor(i * step)]!);
  return chosen.map(ftsString);
}

/**
 * Of the indexed trigrams, at most this many that begin with a body of 1–2 characters are ORed
 * into its FTS query; a body that begins more is common enough for the walk to fill a page fast.
 */
const SHORT_BODY_TRIGRAMS = 64;
/** Past every character (U+10FFFF twice): the upper bound of the trigrams that begin with a prefix. */
const BEYOND = "\u{10FFFF}\u{10FFFF}";
/** The "query" of a body that no indexed text holds: nothing is read. */
const NOTHING = "";
/** Messages a page of a 1–2 character body walks before it asks FTS (see page). */
const SHORT_WALK = 256;
/** 1–2 ASCII characters (see ftsMatch). */
const isShortAscii = (needle: string) => needle.length >= 1 && needle.length <= 2 && [...needle].every((c) => c > "\u0000" && c < "\u0080");

interface WalkRow extends Position {
  hit: 0 | 1;
}

/** The two thresholds of the plan (see the module comment); tests lower them to reach each branch with a few events. */
export interface BodySearchTuning {
  ftsCandidates?: number;
  scanBudget?: number;
  /** Messages a page of a 1–2 character body walks before it asks FTS (SHORT_WALK). */
  shortWalk?: number;
}

/** The codes (names.ts) a body search binds: MessageEvent's, and the source's when filtered on. */
interface BodyCodes {
  source?: number;
  messageKind?: number;
}

/** Pages and counts of body-filtered searches (see the module comment). */
export class BodySearch {
  readonly ftsCandidates: number;
  readonly scanBudget: number;
  readonly shortWalk: number;

  constructor(
    private readonly statements: Statements,
    tuning: BodySearchTuning = {},
  ) {
    this.ftsCandidates = tuning.ftsCandidates ?? FTS_CANDIDATES;
    this.scanBudget = Math.max(1, tuning.scanBudget ?? SCAN_BUDGET);
    this.shortWalk = Math.max(1, tuning.shortWalk ?? SHORT_WALK);
  }

  /**
   * The FTS5 query of a (lower-cased) body, or undefined when FTS cannot narrow it. Three or more
   * characters: ftsQuery. One or two ASCII characters: the indexed trigrams that begin with them,
   * ORed (each text is indexed followed by two U+0001, so every occurrence begins one: migrations.ts,
   * version 4), unless there are more than SHORT_BODY_TRIGRAMS; NOTHING when none does. ASCII only,
   * because the trigrams are case-folded by SQLite and an ASCII lower-case letter is the only kind
   * sure to fold to itself. (Listing the trigrams reads their postings: cheap for a rare pair, which
   * is what it is asked for, see page.)
   */
  ftsMatch(needle: string): string | undefined {
    if (!isShortAscii(needle)) return ftsQuery(needle);
    const terms = this.statements.fixed.trigramsFrom.all({ from: needle, to: needle + BEYOND, k: SHORT_BODY_TRIGRAMS + 1 }) as { term: string }[];
    if (terms.length === 0) return NOTHING;
    return terms.length > SHORT_BODY_TRIGRAMS ? undefined : terms.map((t) => ftsString(t.term)).join(" OR ");
  }

  /** A page of `query` (which has a body) in conversation `conv`, within `bounds`. */
  page(conv: number, query: SearchQuery, bounds: Bounds, codes: BodyCodes): SearchPage {
    const { limit, order } = query;
    const needle = query.body!.toLowerCase();
    const source = query.source !== undefined;
    const want = limit + 1;
    const hits: Position[] = [];
    const walk = () => this.statements.get(`walk:${source}:${order}`, () => SEARCH_SQL.walk(source, order)).iterate({ conv, ...codes, needle, ...bounds }) as IterableIterator<WalkRow>;
    let resumeAfter: Position | undefined;
    let match: string | undefined;

    if (isShortAscii(needle)) {
      // A pair in many messages fills the page in a short walk; a rare one goes to FTS, whose
      // trigrams that begin with it are then few and cheap to list.
      const budget = Math.min(this.shortWalk, this.scanBudget);
      resumeAfter = this.collect(walk(), hits, want, budget);
      if (resumeAfter === undefined || budget === this.scanBudget) return this.finish(conv, hits, limit, resumeAfter);
      hits.length = 0;
      resumeAfter = undefined;
      match = this.ftsMatch(needle);
      if (match === NOTHING) return { items: [], hasMore: false };
    } else {
      match = ftsQuery(needle);
    }

    if (match === undefined) {
      // Nothing FTS can narrow it with (or a character in almost every message): walk.
      resumeAfter = this.collect(walk(), hits, want, this.scanBudget);
    } else if ((this.statements.fixed.tsOrdered.get(conv) as { ordered: number }).ordered === 1) {
      // Search order is append order here: FTS hands out candidates in rowid order from the page's
      // start, read until the page is full (or the budget is spent), whatever the conversation's size.
      const first = this.statements.fixed.firstSeqIn.get({ conv, ...bounds }) as { seq: number } | undefined;
      const last = first && (this.statements.fixed.lastSeqIn.get({ conv, ...bounds }) as { seq: number });
      if (first && last) {
        const ordered = this.statements.get(`ftsOrdered:${source}:${order}`, () => SEARCH_SQL.ftsOrdered(source, order));
        resumeAfter = this.collect(ordered.iterate({ conv, ...codes, needle, match, fromSeq: first.seq, toSeq: last.seq }) as IterableIterator<WalkRow>, hits, want, this.scanBudget);
      }
    } else if ((this.statements.fixed.probe.get({ conv, match, k: this.ftsCandidates + 1 }) as { n: number }).n <= this.ftsCandidates) {
      // Few candidates in the whole conversation: sorting them all is cheaper than any walk.
      const fts = this.statements.get(`fts:${source}:${order}`, () => SEARCH_SQL.fts(source, order));
      hits.push(...(fts.all({ conv, ...codes, needle, match, ...bounds, n: want }) as Position[]));
    } else {
      // A frequent term in a conversation out of time order: walk the messages in order.
      resumeAfter = this.collect(walk(), hits, want, this.scanBudget);
    }
    return this.finish(conv, hits, limit, resumeAfter);
  }

  /** The page of `hits` (positions in query order, up to limit + 1 of them): its events read in one statement. */
  private finish(conv: number, hits: Position[], limit: number, resumeAfter: Position | undefined): SearchPage {
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

  /**
   * Hits of `rows` (messages in query order, each tested) into `hits`, until `want` of them or
   * `budget` rows; returns where the next page resumes when the budget ran out first (a short
   * page: its cursor resumes after the last row tested, so pages together are exactly the hits).
   */
  private collect(rows: IterableIterator<WalkRow>, hits: Position[], want: number, budget: number): Position | undefined {
    let tested = 0;
    for (const row of rows) {
      if (row.hit && hits.push({ ts: row.ts, seq: row.seq }) === want) return undefined;
      if (++tested >= budget) return { ts: row.ts, seq: row.seq };
    }
    return undefined;
  }

  /** How many events match `filters` (which have a body) in conversation `conv`, within `bounds`: exact, O(its candidates). */
  count(conv: number, filters: SearchFilters, bounds: Bounds, codes: BodyCodes): number {
    const source = filters.source !== undefined;
    const needle = filters.body!.toLowerCase();
    // 1–2 characters are counted by a walk (listing their trigrams may cost more than it saves).
    const match = ftsQuery(needle);
    const params = { conv, ...codes, needle, match, ...bounds };
    const stmt = match !== undefined
      ? this.statements.get(`ftsCount:${source}`, () => SEARCH_SQL.ftsCount(source))
      : this.statements.get(`walkCount:${source}`, () => SEARCH_SQL.walkCount(source));
    return (stmt.get(params) as { n: number }).n;
  }
}
