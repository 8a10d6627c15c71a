/**
 * Event search on the embedded SQLite store, at growing conversation sizes (ONE conversation of
 * 10k, 100k and 1M events; --smoke: 1k and 10k): replay ingest rate through createConversation /
 * appendEvents, and p50/p99 latency of a page of 100 for each query type (searchJson: the page as
 * the bytes the endpoint sends), with the ratio between
 * the largest and the smallest size (the page cost must not grow with the conversation).
 * Targets: ingest ≥ 50,000 events/s; at 1M, p50 ≤ 5 ms without body, ≤ 20 ms with body; ratio ≤ 2.
 * With ACS_BENCH_RESULTS set, every figure is appended to that file as a JSON line (suite "server").
 *
 *   pnpm exec tsx bench/search.bench.ts [--smoke]      (from packages/server)
 */
import { appendFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Event, EventKind, EventSource, MessageEvent } from "@acs-toolkit/schema";
import { exampleEvents, seededRandom } from "@acs-toolkit/schema/examples";
import { openSqliteStore } from "../src/store/sqlite/index.js";
import type { EventStore, EventToStore, Position, SearchQuery } from "../src/store/types.js";

interface LatencyFigures {
  p50: number;
  p99: number;
  /** Mean number of items per page (a sanity check that the query found something). */
  items: number;
}

interface SizeFigures {
  events: number;
  messages: number;
  /** Replay: events per second through createConversation/appendEvents, batches of REPLAY_BATCH. */
  ingestPerSecond: number;
  /** Live: events per second appending batches of LIVE_BATCH to the built conversation. */
  liveAppendPerSecond: number;
  dbMegabytes: number;
  queries: Record<QueryType, LatencyFigures>;
}

interface SearchBenchResult {
  sizes: SizeFigures[];
  /** p50 at the largest size divided by p50 at the smallest, per query type. */
  ratio: Record<QueryType, number>;
}

export const QUERY_TYPES = [
  "no filter",
  "kind",
  "source",
  "body rare",
  "body frequent",
  "body 1%",
  "body 1%, page of 2",
  "body 2 chars",
  "time range",
  "desc",
  "deep cursor",
] as const;
type QueryType = (typeof QUERY_TYPES)[number];

/** A replay stores a recorded trajectory in one call; this many events per call. */
const REPLAY_BATCH = 10_000;
/** Live appends after the build: small commits on a big conversation. */
const LIVE_BATCH = 100;
/** The conversation the benchmarks build. */
export const CONVERSATION = "6f1c7c52-3b0e-4c1a-9d3e-2a6b1f0c9e11";
const INGEST_TARGET = 50_000;
export const RARE = "quasar";
export const FREQUENT = "repository";
export const ONE_PERCENT = "kestrel";
export const TWO_CHARS = "q7";
/**
 * Query types whose page is not the same work at every size, so their 1M/10k ratio has no target:
 * "body 1%" finds 2–3 matches at 10k (a short page) and a full page of 100 at 1M. "body 1%, page of
 * 2" asks both sizes for the same page and carries the ratio's target.
 */
export const UNEQUAL_PAGES: ReadonlySet<QueryType> = new Set(["body 1%"]);
/** The 1% term is in every 100th message, from the 50th: 3 of the 253 messages at 10k, 253 of 25,317 at 1M. */
const ONE_PERCENT_EVERY = 100;


const WORDS = (
  "fix failing test build module import export function class method return value error " +
  "stack trace terminal command output file path directory config option parser token " +
  "request response server client cache index query page cursor order filter search event " +
  "message action observation agent user environment tool call result branch commit merge " +
  "review change patch diff line column type string number boolean array object schema " +
  "validate check run install package version release deploy docker image container log " +
  "debug info warning python typescript node script shell bash editor view create insert " +
  "replace undo edit read write glob grep plan task done todo progress summary condense"
).split(" ");

/** A realistic, varied conversation: the example trajectory's mix, with generated message texts. */
export class ConversationGenerator {
  private readonly random: () => number;
  private readonly template: Event[];
  private readonly systemPrompt: Event;
  private n = 0;
  private micros = Date.UTC(2026, 1, 5, 9, 0, 0) * 1000;
  messages = 0;
  private nextRare: number;

  constructor(
    private readonly total: number,
    seed = 42,
  ) {
    this.random = seededRandom(seed);
    const all = exampleEvents();
    this.systemPrompt = all.find((e) => e.kind === "SystemPromptEvent")!;
    // One system prompt per conversation (first); the rest of the trajectory repeats.
    this.template = all.filter((e) => e.kind !== "SystemPromptEvent");
    this.nextRare = total / 16;
  }

  private text(onePercent = false): string {
    const words: string[] = [];
    const length = 6 + Math.floor(this.random() * 30);
    for (let i = 0; i < length; i++) words.push(WORDS[Math.floor(this.random() * WORDS.length)]!);
    if (this.random() < 0.5) words.splice(Math.floor(this.random() * words.length), 0, FREQUENT);
    // Placed, not drawn: a 1% draw gave 0 of the 253 messages at 10k (seed 42), so the 10k page was empty.
    if (onePercent) words.splice(Math.floor(this.random() * words.length), 0, ONE_PERCENT);
    if (this.random() < 0.0005) words.splice(Math.floor(this.random() * words.length), 0, TWO_CHARS);
    // The rare term: in 8 messages of the whole conversation, spread evenly.
    if (this.n >= this.nextRare) {
      words.push(RARE);
      this.nextRare += this.total / 8;
    }
    const s = words.join(" ");
    return s[0]!.toUpperCase() + s.slice(1) + ".";
  }

  /** A random (seeded) UUID v4, like real event ids: inserts land anywhere in the id index. */
  private uuid(): string {
    const hex = Array.from({ length: 4 }, () => Math.floor(this.random() * 2 ** 32).toString(16).padStart(8, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }

  private timestamp(): string {
    // 0–400 µs apart, 5% exact ties; no zone offset, microseconds, as the reference records.
    if (this.random() >= 0.05) this.micros += 1 + Math.floor(this.random() * 400);
    const iso = new Date(Math.floor(this.micros / 1000)).toISOString();
    return `${iso.slice(0, 19)}.${String(this.micros % 1_000_000).padStart(6, "0")}`;
  }

  /** Up to `count` more events (fewer at the end). */
  next(count: number): EventToStore[] {
    const out: EventToStore[] = [];
    while (out.length < count && this.n < this.total) {
      const base = this.n === 0 ? this.systemPrompt : this.template[(this.n - 1) % this.template.length]!;
      const id = this.uuid();
      let event: Event = { ...base, id, timestamp: this.timestamp() } as Event;
      if (event.kind === "MessageEvent") {
        const onePercent = this.messages % ONE_PERCENT_EVERY === ONE_PERCENT_EVERY / 2;
        this.messages++;
        const m = event as MessageEvent;
        const message: MessageEvent = {
          ...m,
          llm_message: { ...m.llm_message, content: [{ cache_prompt: false, type: "text", text: this.text(onePercent) }] },
        };
        if (this.random() < 0.2) message.llm_message.reasoning_content = this.text();
        if (this.random() < 0.1) message.extended_content = [{ cache_prompt: false, type: "text", text: this.text() }];
        event = message;
      }
      out.push({ event, json: JSON.stringify(event) });
      this.n++;
    }
    return out;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function build(store: EventStore, total: number): Promise<{ ingestPerSecond: number; messages: number; positions: Position[] }> {
  const generator = new ConversationGenerator(total);
  let ms = 0;
  let first = true;
  const positions: Position[] = [];
  for (;;) {
    const batch = generator.next(REPLAY_BATCH);
    if (batch.length === 0) break;
    const start = performance.now();
    if (first) await store.createConversation({ id: CONVERSATION, status: "RUNNING" }, batch);
    else await store.appendEvents(CONVERSATION, batch);
    ms += performance.now() - start;
    first = false;
    // Keep a sample of positions for cursors (1 in 97 events).
    for (let i = 0; i < batch.length; i += 97) positions.push((await store.positionOf(CONVERSATION, batch[i]!.event.id))!);
  }
  return { ingestPerSecond: Math.round((total / ms) * 1000), messages: generator.messages, positions };
}

/** Appends `count` more events in batches of LIVE_BATCH; events per second. */
async function liveAppends(store: EventStore, count: number): Promise<number> {
  const generator = new ConversationGenerator(count, 99);
  generator.next(1); // skip the system prompt
  let ms = 0;
  let appended = 0;
  for (;;) {
    const batch = generator.next(LIVE_BATCH);
    if (batch.length === 0) break;
    const start = performance.now();
    await store.appendEvents(CONVERSATION, batch);
    ms += performance.now() - start;
    appended += batch.length;
  }
  return Math.round((appended / ms) * 1000);
}

export function queriesFor(type: QueryType, count: number, positions: Position[], random: () => number): SearchQuery[] {
  const kinds: EventKind[] = ["ActionEvent", "ObservationEvent", "MessageEvent", "PauseEvent", "AgentErrorEvent"];
  const sources: EventSource[] = ["agent", "user", "environment"];
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const middle = () => positions[Math.floor(positions.length * (0.4 + 0.2 * random()))]!;
  const base = { order: "asc", limit: 100 } as const;
  return Array.from({ length: count }, (): SearchQuery => {
    switch (type) {
      case "no filter":
        return { ...base };
      case "kind":
        return { ...base, kind: pick(kinds) };
      case "source":
        return { ...base, source: pick(sources) };
      case "body rare":
        return { ...base, body: RARE };
      case "body frequent":
        return { ...base, body: FREQUENT.toUpperCase() };
      case "body 1%":
        return { ...base, body: ONE_PERCENT };
      case "body 1%, page of 2":
        return { ...base, body: ONE_PERCENT, limit: 2 };
      case "body 2 chars":
        return { ...base, body: TWO_CHARS };
      case "time range": {
        const from = middle().ts;
        return { ...base, timestampGte: from, timestampLt: from + 5_000_000 };
      }
      case "desc":
        return { ...base, order: "desc" };
      case "deep cursor":
        return { ...base, after: middle() };
    }
  });
}

/** Latency of searchJson, what the search endpoint runs (the page as the bytes it sends); also used by postgres.bench.ts. */
export async function measure(store: EventStore, queries: SearchQuery[]): Promise<LatencyFigures> {
  for (const q of queries.slice(0, 5)) await store.searchJson(CONVERSATION, q); // warm-up
  const times: number[] = [];
  let items = 0;
  for (const q of queries) {
    const start = performance.now();
    const page = await store.searchJson(CONVERSATION, q);
    times.push(performance.now() - start);
    items += page.count;
  }
  times.sort((a, b) => a - b);
  const round = (x: number) => Number(x.toFixed(3));
  return { p50: round(percentile(times, 50)), p99: round(percentile(times, 99)), items: Math.round(items / queries.length) };
}

export async function benchSearch({ smoke = false, log = () => {} }: { smoke?: boolean; log?: (line: string) => void } = {}): Promise<SearchBenchResult> {
  const sizes = smoke ? [1_000, 10_000] : [10_000, 100_000, 1_000_000];
  const queryCount = smoke ? 20 : 300;
  const dir = mkdtempSync(path.join(tmpdir(), "acs-search-bench-"));
  const figures: SizeFigures[] = [];
  try {
    for (const total of sizes) {
      const file = path.join(dir, `events-${total}.db`);
      const store = openSqliteStore({ file });
      try {
        const built = await build(store, total);
        const dbBytes = ["", "-wal"].reduce((sum, suffix) => {
          try {
            return sum + statSync(file + suffix).size;
          } catch {
            return sum;
          }
        }, 0);
        log(`  ${total.toLocaleString("en")} events built: ${built.ingestPerSecond.toLocaleString("en")} events/s`);
        const random = seededRandom(7);
        const queries = {} as Record<QueryType, LatencyFigures>;
        for (const type of QUERY_TYPES) queries[type] = await measure(store, queriesFor(type, queryCount, built.positions, random));
        const liveAppendPerSecond = await liveAppends(store, smoke ? 1_000 : 10_000);
        figures.push({
          events: total,
          messages: built.messages,
          ingestPerSecond: built.ingestPerSecond,
          liveAppendPerSecond,
          dbMegabytes: Number((dbBytes / 1e6).toFixed(1)),
          queries,
        });
      } finally {
        await store.close();
      }
      for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const first = figures[0]!;
  const last = figures[figures.length - 1]!;
  const ratio = Object.fromEntries(
    QUERY_TYPES.map((t) => [t, Number((last.queries[t].p50 / Math.max(first.queries[t].p50, 0.001)).toFixed(2))]),
  ) as Record<QueryType, number>;
  return { sizes: figures, ratio };
}

/** One figure of BENCHMARKS.md (see tools/src/bench-report.ts). */
export interface BenchFigure {
  suite: "server" | "server (PostgreSQL)";
  name: string;
  value: number;
  unit: string;
  peer?: { name: string; value: number; unit: string };
  ratio?: number;
  target?: string;
  met?: boolean;
}

/** Appends `figures` to the file named by ACS_BENCH_RESULTS, one JSON line each; no-op when unset. */
export function appendBenchFigures(figures: readonly BenchFigure[]): void {
  const file = process.env.ACS_BENCH_RESULTS;
  if (file && figures.length > 0) appendFileSync(file, figures.map((f) => JSON.stringify(f)).join("\n") + "\n");
}

const sizeLabel = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`);
const isBodyQuery = (t: QueryType) => t.startsWith("body");

/**
 * Every figure of a run: replay ingest (target ≥ 50,000 events/s), live appends and database size
 * per size; per query type, p50 (target ≤ 5 ms, ≤ 20 ms with a body filter) and p99 per size, and
 * the p50 at the largest size against the smallest (target ≤ 2×).
 */
export function searchBenchFigures(result: SearchBenchResult): BenchFigure[] {
  const figures: BenchFigure[] = [];
  const suite = "server";
  for (const s of result.sizes) {
    const at = `${sizeLabel(s.events)} events`;
    figures.push(
      {
        suite,
        name: `replay ingest (createConversation/appendEvents of ${REPLAY_BATCH.toLocaleString("en")}), ${at}`,
        value: s.ingestPerSecond,
        unit: "events/s",
        target: `≥ ${INGEST_TARGET.toLocaleString("en")} events/s`,
        met: s.ingestPerSecond >= INGEST_TARGET,
      },
      { suite, name: `live appends (appendEvents of ${LIVE_BATCH}) onto ${at}`, value: s.liveAppendPerSecond, unit: "events/s" },
      { suite, name: `database size, ${at}`, value: s.dbMegabytes, unit: "MB" },
    );
    for (const t of QUERY_TYPES) {
      const q = s.queries[t];
      const bound = isBodyQuery(t) ? 20 : 5;
      figures.push(
        { suite, name: `search "${t}" p50, ${at}`, value: q.p50, unit: "ms", target: `p50 ≤ ${bound} ms`, met: q.p50 <= bound },
        { suite, name: `search "${t}" p99, ${at}`, value: q.p99, unit: "ms" },
      );
    }
  }
  const first = result.sizes[0]!;
  const last = result.sizes[result.sizes.length - 1]!;
  for (const t of QUERY_TYPES) {
    const unequal = UNEQUAL_PAGES.has(t);
    figures.push({
      suite,
      name: `search "${t}" p50, ${sizeLabel(last.events)} vs ${sizeLabel(first.events)} events${unequal ? ` (pages of ${last.queries[t].items} and ${first.queries[t].items} events: not the same work)` : ""}`,
      value: last.queries[t].p50,
      unit: "ms",
      peer: { name: `${sizeLabel(first.events)} events`, value: first.queries[t].p50, unit: "ms" },
      ratio: result.ratio[t],
      ...(unequal ? {} : { target: "≤ 2×", met: result.ratio[t] <= 2 }),
    });
  }
  return figures;
}

export function formatSearchBench(result: SearchBenchResult): string {
  const lines: string[] = [];
  const sizes = result.sizes;
  const label = sizeLabel;
  lines.push(
    `ingest, events/s (random UUID v4 ids; target ≥ 50,000): replay = createConversation/appendEvents of ` +
      `${REPLAY_BATCH.toLocaleString("en")} events per call; live = appendEvents of ${LIVE_BATCH} onto the built conversation`,
  );
  for (const s of sizes) {
    lines.push(
      `  ${label(s.events).padStart(4)} events (${s.messages.toLocaleString("en").padStart(6)} messages): ` +
        `replay ${s.ingestPerSecond.toLocaleString("en").padStart(7)}   live ${s.liveAppendPerSecond.toLocaleString("en").padStart(7)}   db ${s.dbMegabytes} MB`,
    );
  }
  lines.push("");
  lines.push("search, page of 100: p50 / p99 in ms (items per page); ratio = p50 largest / p50 smallest (target ≤ 2)");
  const header = ["query".padEnd(18), ...sizes.map((s) => label(s.events).padStart(24)), "ratio".padStart(7)];
  lines.push(header.join(" "));
  for (const t of QUERY_TYPES) {
    const cells = sizes.map((s) => {
      const q = s.queries[t];
      return `${q.p50.toFixed(3)} / ${q.p99.toFixed(3)} (${q.items})`.padStart(24);
    });
    lines.push([t.padEnd(18), ...cells, result.ratio[t].toFixed(2).padStart(7)].join(" "));
  }
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const smoke = process.argv.includes("--smoke");
  console.log(`search benchmark${smoke ? " (smoke)" : ""}`);
  const result = await benchSearch({ smoke, log: (line) => console.log(line) });
  console.log("");
  console.log(formatSearchBench(result));
  appendBenchFigures(searchBenchFigures(result));
}
