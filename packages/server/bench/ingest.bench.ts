/**
 * Bulk ingest over HTTP: the built server (dist/cli.js, default settings: SQLite file,
 * import threads) in a process of its own; this process streams N realistic events into one
 * conversation as JSONL batches of 10,000 (`POST …/events/batch`, one request at a time, each
 * body written in chunks of 1,000 lines as it is produced) and samples the server's RSS from
 * /proc every 50 ms. Beside it, in the same run, its peers on the same lines: the store's own
 * ingest of the same rows in this process (appendBatch, import writer thread, no HTTP, no parsing),
 * the server's per-line work alone on one thread (JSON.parse + validateEvent + prepareEvent), and a
 * bare JSON.parse loop. Events: the recorded OpenHands conversation in fixtures/openhands-recorded
 * (messages, terminal and finish actions and observations; a 16 KB system prompt every 1,000
 * events), each with a fresh id and an increasing timestamp: ~0.6 KB an event.
 *
 * With --postgres, the server and the store alone on PostgreSQL (ACS_TEST_PG_URL's server,
 * a scratch database for each run, dropped after it); with --generated, the events of search.bench.ts's
 * conversation instead of the recorded ones (IngestWorkload): postgres.bench.ts runs both so.
 *
 *   pnpm exec tsx bench/ingest.bench.ts [--smoke] [--sizes 100000,1000000] [--postgres] [--generated] [--http-only]   (from packages/server, after pnpm build)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Event } from "@acs-toolkit/schema";
import { validateEvent } from "@acs-toolkit/validator";
import { openPostgresStore } from "../src/store/postgres/index.js";
import { openSqliteStore } from "../src/store/sqlite/index.js";
import type { EventStore } from "../src/store/types.js";
import { prepareEvent, type PreparedEvent, type RowBatch } from "../src/store/prepare.js";
import { encodeRows } from "../src/store/row-batch.js";
import { createScratchDatabase } from "../test/support/postgres.js";
import { appendBenchFigures, ConversationGenerator, type BenchFigure } from "./search.bench.js";
import { eventLoopOf, startServerProcess } from "./server-process.js";

const KEY = "bench-key";
const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, "../../../fixtures/openhands-recorded");
const BATCH = 10_000;
const LINES_PER_WRITE = 1_000;

/** Each recorded event as [before id, between id and timestamp, after timestamp]. */
function templates(): { body: string[][]; systemPrompt: string[] } {
  const split = (event: Event) => {
    const text = JSON.stringify({ ...event, id: "@@ID@@", timestamp: "@@TS@@" });
    const [a, rest] = text.split("@@ID@@") as [string, string];
    const [b, c] = rest.split("@@TS@@") as [string, string];
    return [a, b, c];
  };
  const read = (name: string) => readFileSync(path.join(fixtures, name), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Event);
  const events = [...read("conversation-2026-02-05.jsonl"), ...read("conversation-2026-03-01.jsonl")];
  return { body: events.filter((e) => e.kind !== "SystemPromptEvent").map(split), systemPrompt: split(events.find((e) => e.kind === "SystemPromptEvent")!) };
}

const T = templates();
const BASE = Date.UTC(2026, 2, 1, 0, 0, 0);
/** Line `i` (0-based) of the recording `tag`: JSON text, no newline. */
function line(tag: number, i: number): string {
  const [a, b, c] = i % 1000 === 0 ? T.systemPrompt : T.body[i % T.body.length]!;
  const id = `${tag.toString(16).padStart(8, "0")}-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
  return `${a}${id}${b}${new Date(BASE + i).toISOString().slice(0, -1)}${c}`;
}

interface Memory {
  rss: number;
  anon: number;
}
function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), anon: kb("RssAnon") };
}



const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function request(url: string, method: string, headers: Record<string, string>, write: (req: http.ClientRequest) => Promise<void>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { "X-Session-API-Key": KEY, ...headers }, agent }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    write(req).then(() => req.end(), reject);
  });
}

/**
 * What a run sends: "recorded", the recorded conversation's events with fresh ids (line above;
 * 5 of every 9 events a message); "generated", the conversation of search.bench.ts and
 * postgres.bench.ts (1M events: an OpenHands trajectory, 2.5% messages, random UUIDs).
 */
export type IngestWorkload = "recorded" | "generated";

/** Line `i` of a run's events, asked for in order from 0 (a generated conversation is made as it goes). */
type Lines = (i: number) => string;

function linesOf(workload: IngestWorkload, tag: number, events: number): Lines {
  if (workload === "recorded") return (i) => line(tag, i);
  const generator = new ConversationGenerator(events);
  let made: string[] = [];
  let first = 0;
  return (i) => {
    if (i >= first + made.length) {
      if (i !== first + made.length) throw new Error(`line ${i} asked for after line ${first + made.length - 1}`);
      first += made.length;
      made = generator.next(LINES_PER_WRITE).map((e) => e.json);
    }
    return made[i - first]!;
  };
}

/** One batch: lines [from, to), streamed as they are produced. */
async function writeBatch(req: http.ClientRequest, lines: Lines, from: number, to: number): Promise<void> {
  for (let at = from; at < to; at += LINES_PER_WRITE) {
    let text = "";
    for (let i = at; i < Math.min(to, at + LINES_PER_WRITE); i++) text += lines(i) + "\n";
    if (!req.write(text)) await new Promise((resolve) => req.once("drain", resolve));
  }
}

export interface IngestRow {
  events: number;
  workload: IngestWorkload;
  httpEventsPerSecond: number;
  bytes: number;
  rssBefore: Memory;
  rssMax: Memory;
  rssAfter: Memory;
  /** The server's event loop during the ingest: the longest delay, and the longest CPU run of the request thread between two 5 ms ticks (Linux). */
  loopMaxMs: number;
  loopBusyMaxMs: number | undefined;
  storeEventsPerSecond: number;
  lineWorkEventsPerSecond: number;
  parseEventsPerSecond: number;
  load: [number, number];
}

/**
 * Where the server keeps the events: its default SQLite file in a temporary data directory, or a
 * PostgreSQL database (`--store <url>`), for which the caller gives a fresh database per run.
 */
type IngestStore = { kind: "sqlite" } | { kind: "postgres"; url: () => Promise<{ url: string; drop(): Promise<void> }> };

async function overHttp(events: number, lines: Lines, target: IngestStore = { kind: "sqlite" }): Promise<Pick<IngestRow, "httpEventsPerSecond" | "bytes" | "rssBefore" | "rssMax" | "rssAfter" | "loopMaxMs" | "loopBusyMaxMs">> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "acs-ingest-bench-"));
  const database = target.kind === "postgres" ? await target.url() : undefined;
  const server = await startServerProcess(["--data-dir", dataDir, "--log-level", "warn", ...(database ? ["--store", database.url] : [])], KEY);
  const pid = server.child.pid!;
  try {
    const created = await request(`${server.url}/api/conversations`, "POST", { "Content-Type": "application/json" }, async (req) => void req.write("{}"));
    const id = (JSON.parse(created.text) as { conversation_id: string }).conversation_id;
    const rssBefore = memoryOf(pid);
    const rssMax = { ...rssBefore };
    const sampler = setInterval(() => {
      const m = memoryOf(pid);
      rssMax.rss = Math.max(rssMax.rss, m.rss);
      rssMax.anon = Math.max(rssMax.anon, m.anon);
    }, 50);
    let bytes = 0;
    await eventLoopOf(server.child, true);
    const started = performance.now();
    for (let from = 0; from < events; from += BATCH) {
      const to = Math.min(events, from + BATCH);
      const reply = await request(`${server.url}/api/conversations/${id}/events/batch`, "POST", { "Content-Type": "application/x-ndjson" }, async (req) => {
        const write = req.write.bind(req);
        req.write = ((chunk: string, ...rest: never[]) => ((bytes += Buffer.byteLength(chunk)), write(chunk, ...rest))) as typeof req.write;
        await writeBatch(req, lines, from, to);
      });
      if (reply.status !== 200) throw new Error(`batch at ${from}: ${reply.status} ${reply.text.slice(0, 300)}`);
      if (process.env.ACS_BENCH_VERBOSE) console.log(`    batch ${from / BATCH + 1}: ${(performance.now() - started).toFixed(0)} ms since the start, load ${loadavg()[0]!.toFixed(1)}`);
      const body = JSON.parse(reply.text) as { appended: number; event_count: number };
      if (body.event_count !== to) throw new Error(`batch at ${from}: event_count ${body.event_count}, expected ${to}`);
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const loop = await eventLoopOf(server.child, false);
    return { httpEventsPerSecond: Math.round(events / seconds), bytes, rssBefore, rssMax, rssAfter: memoryOf(pid), loopMaxMs: loop.maxMs, loopBusyMaxMs: loop.busyMaxMs };
  } finally {
    agent.destroy(); // its keep-alive socket; the next run opens another
    server.child.kill("SIGTERM");
    await new Promise((resolve) => server.child.once("exit", resolve));
    rmSync(dataDir, { recursive: true, force: true });
    await database?.drop();
  }
}

/** The store alone, in this process: the same rows as RowBatches of 10,000 through appendBatch (SQLite: on its import writer thread). */
async function storeAlone(events: number, lines: Lines, target: IngestStore = { kind: "sqlite" }): Promise<number> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "acs-ingest-bench-store-"));
  const database = target.kind === "postgres" ? await target.url() : undefined;
  const store: EventStore = database ? await openPostgresStore({ url: database.url }) : openSqliteStore({ file: path.join(dataDir, "acs.sqlite"), importThread: true });
  try {
    const id = "4c0d5e8a-1f2b-4c3d-8e9f-0a1b2c3d4e5f";
    await store.createConversation({ id, status: "STOPPED" }, []);
    let busy = 0;
    for (let from = 0; from < events; from += BATCH) {
      const to = Math.min(events, from + BATCH);
      const chunks: Uint8Array[] = [];
      let rows: PreparedEvent[] = [];
      for (let i = from; i < to; i++) {
        const json = lines(i);
        rows.push(prepareEvent({ event: JSON.parse(json) as Event, json }, i, true));
        if (rows.length === 1000) {
          chunks.push(encodeRows(rows));
          rows = [];
        }
      }
      if (rows.length) chunks.push(encodeRows(rows));
      const batch: RowBatch = { count: to - from, chunks };
      const started = performance.now();
      await store.appendBatch(id, batch);
      busy += performance.now() - started;
    }
    return Math.round(events / (busy / 1000));
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
    await database?.drop();
  }
}

/** Per line on one thread: what the import thread does (parse, validate, prepare), and JSON.parse alone. */
function lineWork(events: number, of: Lines): { full: number; parse: number } {
  const n = Math.min(events, 200_000);
  const lines = Array.from({ length: n }, (_, i) => of(i));
  let started = performance.now();
  let sink = 0;
  for (const text of lines) sink += (JSON.parse(text) as { id: string }).id.length;
  const parse = Math.round(n / ((performance.now() - started) / 1000));
  started = performance.now();
  for (const [i, text] of lines.entries()) {
    const value = JSON.parse(text) as Event;
    if (!validateEvent(value).ok) throw new Error(`line ${i + 1} is not an Event`);
    sink += prepareEvent({ event: value, json: text }, i, true).ts > 0 ? 1 : 0;
  }
  const full = Math.round(n / ((performance.now() - started) / 1000));
  if (sink === 0) console.log("");
  return { full, parse };
}

export async function benchIngest({ sizes = [100_000, 1_000_000], log = (_: string) => {}, store = { kind: "sqlite" } as IngestStore, workload = "recorded" as IngestWorkload } = {}): Promise<IngestRow[]> {
  const rows: IngestRow[] = [];
  for (const [k, events] of sizes.entries()) {
    const load0 = loadavg()[0]!;
    log(`  ${events.toLocaleString("en")} events (${workload}) over HTTP…`);
    const http = await overHttp(events, linesOf(workload, 0x100 + k, events), store);
    log(`    ${http.httpEventsPerSecond.toLocaleString("en")} events/s; the store alone…`);
    const storeEventsPerSecond = await storeAlone(events, linesOf(workload, 0x200 + k, events), store);
    const work = lineWork(events, linesOf(workload, 0x300 + k, events));
    rows.push({ events, workload, ...http, storeEventsPerSecond, lineWorkEventsPerSecond: work.full, parseEventsPerSecond: work.parse, load: [load0, loadavg()[0]!] });
  }
  return rows;
}

const mib = (n: number) => (n / 2 ** 20).toFixed(0);
const size = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`);

/** The rows' figures for BENCHMARKS.md, in `suite` ("server (PostgreSQL)" for a PostgreSQL-backed server). */
export function ingestFigures(rows: readonly IngestRow[], suite: BenchFigure["suite"] = "server"): BenchFigure[] {
  return rows.flatMap((r): BenchFigure[] => {
    const of = r.workload === "generated" ? " of the search bench's conversation" : "";
    return [
      { suite, name: `HTTP bulk ingest${of}${of && " (2.5% messages)"} (events/batch, 10k per request), ${size(r.events)} events`, value: r.httpEventsPerSecond, unit: "events/s", peer: { name: "the store alone (appendBatch, in process)", value: r.storeEventsPerSecond, unit: "events/s" }, ratio: Number((r.httpEventsPerSecond / r.storeEventsPerSecond).toFixed(2)), target: "≥ 50,000 events/s", met: r.httpEventsPerSecond >= 50_000 },
      { suite, name: `HTTP bulk ingest${of}, ${size(r.events)} events: server RSS, max`, value: Number(mib(r.rssMax.rss)), unit: "MiB" },
      ...(r.loopBusyMaxMs === undefined ? [] : [{ suite, name: `HTTP bulk ingest${of}, ${size(r.events)} events: the request thread's longest run between two ticks`, value: Number(r.loopBusyMaxMs.toFixed(1)), unit: "ms", target: "≤ 50 ms", met: r.loopBusyMaxMs <= 50 } as BenchFigure]),
    ];
  });
}

export function formatIngest(rows: readonly IngestRow[]): string {
  const lines = [
    "Bulk ingest over HTTP (POST …/events/batch, 10,000 events a request, one at a time, loopback; server in its own process):",
    "| events | workload | HTTP events/s | MB/s | store alone events/s | parse+validate+prepare, 1 thread | JSON.parse alone | server RSS before → max → after (MiB) | anonymous before → max → after (MiB) | server event loop: delay max / busy max (ms) | load avg (1 min) start → end |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const r of rows) {
    const mbps = ((r.bytes / 1e6) * (r.httpEventsPerSecond / r.events)).toFixed(1);
    lines.push(
      `| ${r.events.toLocaleString("en")} | ${r.workload} | ${r.httpEventsPerSecond.toLocaleString("en")} | ${mbps} | ${r.storeEventsPerSecond.toLocaleString("en")} | ${r.lineWorkEventsPerSecond.toLocaleString("en")} | ${r.parseEventsPerSecond.toLocaleString("en")} | ${mib(r.rssBefore.rss)} → ${mib(r.rssMax.rss)} → ${mib(r.rssAfter.rss)} | ${mib(r.rssBefore.anon)} → ${mib(r.rssMax.anon)} → ${mib(r.rssAfter.anon)} | ${r.loopMaxMs.toFixed(0)} / ${r.loopBusyMaxMs?.toFixed(0) ?? "—"} | ${r.load[0].toFixed(2)} → ${r.load[1].toFixed(2)} |`,
    );
  }
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const at = process.argv.indexOf("--sizes");
  const sizes = at > 0 ? process.argv[at + 1]!.split(",").map(Number) : process.argv.includes("--smoke") ? [20_000] : [100_000, 1_000_000];
  // --postgres: the server on PostgreSQL (ACS_TEST_PG_URL's server, a scratch database per run).
  const store: IngestStore = process.argv.includes("--postgres") ? { kind: "postgres", url: createScratchDatabase } : { kind: "sqlite" };
  const workload: IngestWorkload = process.argv.includes("--generated") ? "generated" : "recorded";
  if (process.argv.includes("--http-only")) {
    for (const events of sizes) console.log(JSON.stringify({ events, workload, load: loadavg()[0], ...(await overHttp(events, linesOf(workload, 0x400, events), store)) }));
    agent.destroy();
    process.exit(0);
  }
  const rows = await benchIngest({ sizes, log: (l) => console.log(l), store, workload });
  appendBenchFigures(ingestFigures(rows, store.kind === "postgres" ? "server (PostgreSQL)" : "server"));
  console.log(formatIngest(rows));
  agent.destroy();
}
