/**
 * The event-loop budget: no request may hold the server's event loop for more than
 * 50 ms, on a conversation of 1M events. Builds that conversation (--smoke: 20k) into a data
 * directory with the store, starts the built server on it as a separate process with an IPC
 * channel, and reads the server's own event-loop delay (perf_hooks.monitorEventLoopDelay,
 * event-loop-report.ts) twice: idle (the peer), then under load — for DURATION, concurrently:
 * plain pages (no filter, kind, DESC, a time range), body-filtered pages (frequent, rare, 1%, two
 * characters, 1,000 repeated characters), counts (time range, kind, body), replays of about
 * 60 MB (--smoke: 2 MB) one after another, and /health every 10 ms. Prints and records (ACS_BENCH_RESULTS)
 * the delay's max and p99 against the 50 ms target, and each request class's latency. Then each
 * class again one request at a time, with the request thread's longest CPU run while each was
 * served: under the concurrent load a run between two ticks may hold many short requests.
 *
 *   pnpm exec tsx bench/event-loop.bench.ts [--smoke]      (from packages/server, after pnpm build)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { getPriority, loadavg, setPriority } from "node:os";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { seededRandom } from "@acs-toolkit/schema/examples";
import { openSqliteStore } from "../src/store/sqlite/index.js";
import { appendBenchFigures, build, CONVERSATION, ConversationGenerator, type BenchFigure } from "./search.bench.js";
import { eventLoopOf, startServerProcess } from "./server-process.js";
import type { EventLoopDelay } from "../src/event-loop-report.js";

const KEY = "bench-key";
const BUDGET_MS = 50;

interface ClassFigures {
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface EventLoopBenchResult {
  events: number;
  replayBytes: number;
  seconds: number;
  idle: EventLoopDelay;
  load: EventLoopDelay;
  classes: Record<string, ClassFigures>;
  /** Per request class, sent one at a time: the request thread's longest CPU run while one was served, ms (Linux). */
  alone: Record<string, number>;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : 0;
}



const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function benchEventLoop({ smoke = false, log = (_line: string) => {} } = {}): Promise<EventLoopBenchResult> {
  const events = smoke ? 20_000 : 1_000_000;
  const seconds = smoke ? 4 : 30;
  const replayEvents = smoke ? 4_000 : 120_000;
  const dataDir = mkdtempSync(path.join(tmpdir(), "acs-event-loop-bench-"));
  try {
    const store = openSqliteStore({ file: path.join(dataDir, "acs.sqlite") });
    const built = await build(store, events);
    await store.close();
    log(`  ${events.toLocaleString("en")} events built (${built.ingestPerSecond.toLocaleString("en")} events/s)`);

    // One replay body, sent again and again under new conversation ids.
    const generator = new ConversationGenerator(replayEvents, 7);
    const jsonl = generator.next(replayEvents).map((e) => e.json).join("\n");
    const replayTail = Buffer.from(`,"replay_json":${JSON.stringify(jsonl)}}`);
    const replayBytes = replayTail.length + 60;
    log(`  replay body: ${(replayBytes / 1e6).toFixed(1)} MB, ${replayEvents.toLocaleString("en")} events`);

    const { child, url } = await startServerProcess(["--data-dir", dataDir, "--log-level", "warn", "--json-limit-bytes", String(128 * 1024 * 1024)], KEY);
    try {
      const headers = { "X-Session-API-Key": KEY };
      const base = `${url}/api/conversations/${CONVERSATION}`;
      await fetch(`${base}/events/search?limit=1`, { headers }); // the store is open and warm
      await sleep(1_000);
      await eventLoopOf(child, true);
      await sleep(smoke ? 1_000 : 3_000);
      const idle = await eventLoopOf(child, true);

      const random = seededRandom(11);
      const instant = () => {
        const p = built.positions[Math.floor(random() * built.positions.length)]!;
        return new Date(p.ts / 1000).toISOString();
      };
      const plain = () => {
        const pick = Math.floor(random() * 4);
        if (pick === 0) return `${base}/events/search?limit=100`;
        if (pick === 1) return `${base}/events/search?limit=100&kind=ObservationEvent`;
        if (pick === 2) return `${base}/events/search?limit=100&sort_order=TIMESTAMP_DESC`;
        return `${base}/events/search?limit=100&timestamp__gte=${instant()}`;
      };
      const bodies = ["repository", "quasar", "kestrel", "q7", "a".repeat(1_000)];
      const body = () => `${base}/events/search?limit=100&body=${bodies[Math.floor(random() * bodies.length)]}`;
      const count = () => {
        const pick = Math.floor(random() * 4);
        if (pick === 0) return `${base}/events/count?timestamp__gte=${instant()}`;
        if (pick === 1) return `${base}/events/count?kind=ActionEvent`;
        if (pick === 2) return `${base}/events/count?body=repository`;
        return `${base}/events/count?body=quasar`;
      };

      const replayName = `replay (${Math.round(replayBytes / 1e6)} MB)`;
      const times: Record<string, number[]> = { "plain page": [], "body page": [], count: [], [replayName]: [], "/health": [] };
      const errors: Record<string, number> = Object.fromEntries(Object.keys(times).map((k) => [k, 0]));
      const until = performance.now() + seconds * 1000;
      const timed = async (name: string, run: () => Promise<Response>) => {
        const start = performance.now();
        try {
          const response = await run();
          await response.arrayBuffer();
          if (!response.ok) errors[name]!++;
        } catch {
          errors[name]!++;
        }
        times[name]!.push(performance.now() - start);
      };
      const loop = async (name: string, next: () => Promise<Response>, pauseMs = 0) => {
        while (performance.now() < until) {
          await timed(name, next);
          if (pauseMs) await sleep(pauseMs);
        }
      };
      const replay = () => {
        const head = Buffer.from(`{"conversation_id":"${crypto.randomUUID()}"`);
        return fetch(`${url}/api/conversations`, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: Buffer.concat([head, replayTail]) });
      };
      await Promise.all([
        ...Array.from({ length: 3 }, () => loop("plain page", () => fetch(plain(), { headers }))),
        ...Array.from({ length: 2 }, () => loop("body page", () => fetch(body(), { headers }))),
        ...Array.from({ length: 2 }, () => loop("count", () => fetch(count(), { headers }))),
        loop(replayName, replay),
        loop("/health", () => fetch(`${url}/health`), 10),
      ]);
      const load = await eventLoopOf(child, false);
      const classes = Object.fromEntries(
        Object.entries(times).map(([name, list]) => {
          const sorted = [...list].sort((a, b) => a - b);
          const round = (x: number) => Number(x.toFixed(1));
          return [name, { requests: list.length, errors: errors[name]!, p50Ms: round(percentile(sorted, 50)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted.at(-1) ?? 0) }];
        }),
      );
      // One request at a time, the longest CPU run of the request thread while each was served:
      // under the concurrent load above a run between two ticks may hold many requests, each
      // short; here it holds one, which is what the budget bounds.
      const alone: Record<string, number> = {};
      const sequentially = async (name: string, next: () => Promise<Response>, count: number) => {
        for (let i = 0; i < count; i++) {
          await eventLoopOf(child, true);
          const response = await next();
          await response.arrayBuffer();
          await sleep(10); // a tick after the answer, so that the work it finished is counted
          const { busyMaxMs = 0 } = await eventLoopOf(child, false);
          alone[name] = Math.max(alone[name] ?? 0, busyMaxMs);
        }
      };
      const perClass = smoke ? 5 : 40;
      await sequentially("plain page", () => fetch(plain(), { headers }), perClass);
      await sequentially("body page", () => fetch(body(), { headers }), perClass);
      await sequentially("count", () => fetch(count(), { headers }), perClass);
      await sequentially(replayName, replay, smoke ? 1 : 2);
      await sequentially("/health", () => fetch(`${url}/health`), perClass);
      return { events, replayBytes, seconds, idle, load, classes, alone };
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The delay's max and p99 under load (target ≤ 50 ms, the idle server as the peer), and each class's latency. */
export function eventLoopFigures(result: EventLoopBenchResult): BenchFigure[] {
  const suite = "server";
  const at = `${result.events >= 1_000_000 ? `${result.events / 1_000_000}M` : `${result.events / 1000}k`} events`;
  const figures: BenchFigure[] = [];
  for (const [stat, key] of [["max", "maxMs"], ["p99", "p99Ms"]] as const) {
    figures.push({
      suite,
      name: `event-loop delay ${stat} under load (searches, body searches, counts, replays), ${at}`,
      value: result.load[key],
      unit: "ms",
      peer: { name: "idle server", value: result.idle[key], unit: "ms" },
      target: `≤ ${BUDGET_MS} ms`,
      met: result.load[key] <= BUDGET_MS,
    });
  }
  for (const [stat, key] of [["max", "busyMaxMs"], ["p99", "busyP99Ms"]] as const) {
    const value = result.load[key];
    if (value === undefined) continue;
    figures.push({
      suite,
      name: `request thread's longest CPU run between two 5 ms ticks, ${stat}, under load, ${at}`,
      value,
      unit: "ms",
      target: `≤ ${BUDGET_MS} ms`,
      met: value <= BUDGET_MS,
    });
  }
  for (const [name, ms] of Object.entries(result.alone)) {
    figures.push({ suite, name: `one request at a time, ${name}: the request thread's longest CPU run, ${at}`, value: ms, unit: "ms", target: `≤ ${BUDGET_MS} ms`, met: ms <= BUDGET_MS });
  }
  if (result.load.runQueueWaitMs !== undefined) {
    figures.push({ suite, name: `request thread's wait for a CPU during ${result.seconds} s of load, ${at}`, value: result.load.runQueueWaitMs, unit: "ms" });
  }
  for (const [name, c] of Object.entries(result.classes)) {
    figures.push(
      { suite, name: `under load, ${name}: latency p50, ${at}`, value: c.p50Ms, unit: "ms" },
      { suite, name: `under load, ${name}: latency p99, ${at}`, value: c.p99Ms, unit: "ms" },
      { suite, name: `under load, ${name}: errors, ${at}`, value: c.errors, unit: "responses", target: "none", met: c.errors === 0 },
    );
  }
  return figures;
}

export function formatEventLoopBench(result: EventLoopBenchResult): string {
  const lines = [
    `event-loop delay of the server (monitorEventLoopDelay, 5 ms resolution), ${result.events.toLocaleString("en")} events, ${result.seconds} s of load; budget ${BUDGET_MS} ms`,
    `  idle:       max ${result.idle.maxMs} ms   p99 ${result.idle.p99Ms} ms   p50 ${result.idle.p50Ms} ms`,
    `  under load: max ${result.load.maxMs} ms   p99 ${result.load.p99Ms} ms   p50 ${result.load.p50Ms} ms   ${result.load.maxMs <= BUDGET_MS ? "(within budget)" : "(OVER BUDGET)"}`,
    ...(result.load.busyMaxMs === undefined
      ? []
      : [
          `  request thread's CPU runs between ticks (its own work, whatever the machine's load): max ${result.load.busyMaxMs} ms   p99 ${result.load.busyP99Ms} ms`,
          `  request thread's wait for a CPU (the machine's load): ${result.load.runQueueWaitMs} ms in ${result.seconds} s   load average ${loadavg()[0]!.toFixed(2)}`,
        ]),
    "",
    "  requests under that load      count   errors   p50 ms   p99 ms   max ms",
  ];
  for (const [name, c] of Object.entries(result.classes)) {
    lines.push(`  ${name.padEnd(28)} ${String(c.requests).padStart(6)}   ${String(c.errors).padStart(6)}   ${String(c.p50Ms).padStart(6)}   ${String(c.p99Ms).padStart(6)}   ${String(c.maxMs).padStart(6)}`);
  }
  lines.push("", "  one request at a time: the request thread's longest CPU run while one was served (budget 50 ms)");
  for (const [name, ms] of Object.entries(result.alone)) lines.push(`  ${name.padEnd(28)} ${String(ms).padStart(8)} ms   ${ms <= BUDGET_MS ? "within" : "OVER"}`);
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  // The load generator stands in for clients on other machines: on these 2 shared cores it yields
  // the CPU to the server it measures (nice 19), or the delay counts the generator's own turns on
  // a core. The server's import and read threads run at nice 10; the request counts per class
  // show how much load was offered.
  setPriority(Math.max(getPriority(), 19));
  const smoke = process.argv.includes("--smoke");
  console.log(`event-loop budget benchmark${smoke ? " (smoke)" : ""}`);
  const result = await benchEventLoop({ smoke, log: (line) => console.log(line) });
  console.log(`\n${formatEventLoopBench(result)}`);
  appendBenchFigures(eventLoopFigures(result));
}
