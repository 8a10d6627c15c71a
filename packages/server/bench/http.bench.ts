/**
 * Requests per second under a load generator (autocannon) on loopback: event search pages of 100
 * from a conversation of 10,000 events, filtered and not, and /health as the floor of the stack.
 * With ACS_BENCH_RESULTS set, every figure is appended to that file as a JSON line (suite "server").
 *
 *   pnpm exec tsx bench/http.bench.ts [--smoke]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { parseConfig } from "../src/config.js";
import { createLogger } from "../src/log.js";
import { startServer } from "../src/server.js";
import { appendBenchFigures, type BenchFigure } from "./search.bench.js";

export interface HttpBenchRow {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

const KEY = "bench-key";

/** Per case: requests per second, latency p50 and p99, and errors (target: none). */
export function httpBenchFigures(rows: readonly HttpBenchRow[], conversationEvents: number): BenchFigure[] {
  const suite = "server";
  const of = `conversation of ${conversationEvents.toLocaleString("en")} events`;
  return rows.flatMap((r): BenchFigure[] => [
    { suite, name: `HTTP ${r.name} (${of}): throughput`, value: r.requestsPerSecond, unit: "req/s" },
    { suite, name: `HTTP ${r.name} (${of}): latency p50`, value: r.p50Ms, unit: "ms" },
    { suite, name: `HTTP ${r.name} (${of}): latency p99`, value: r.p99Ms, unit: "ms" },
    { suite, name: `HTTP ${r.name} (${of}): errors`, value: r.errors, unit: "responses", target: "none", met: r.errors === 0 },
  ]);
}

/** The conversation size benchHttp searches. */
export const httpBenchEvents = (smoke: boolean) => (smoke ? 1_000 : 10_000);

export async function benchHttp({ smoke = false } = {}): Promise<HttpBenchRow[]> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "acs-http-bench-"));
  const server = await startServer(parseConfig(["--port", "0", "--data-dir", dataDir], {}), {
    env: { SESSION_API_KEY: KEY },
    log: createLogger("silent"),
  });
  try {
    const size = httpBenchEvents(smoke);
    const batches = Math.ceil(size / 55);
    const events = Array.from({ length: batches }, (_, seed) => exampleEvents({ seed: seed + 1, start: new Date(Date.UTC(2026, 0, 1) + seed * 60_000) }))
      .flat()
      .slice(0, size);
    const created = await fetch(`${server.url}/api/conversations`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Session-API-Key": KEY },
      body: JSON.stringify({ replay_json: events.map((e) => JSON.stringify(e)).join("\n") }),
    });
    const { conversation_id: id } = (await created.json()) as { conversation_id: string };
    const search = `/api/conversations/${id}/events/search`;
    const cases: Array<[string, string]> = [
      ["GET /health", "/health"],
      ["search, page of 100", `${search}?limit=100`],
      ["search, kind filter", `${search}?limit=100&kind=ActionEvent`],
      ["search, DESC", `${search}?limit=100&sort_order=TIMESTAMP_DESC`],
      ["search, body filter", `${search}?limit=100&body=failing`],
      ["count", `/api/conversations/${id}/events/count`],
    ];
    const rows: HttpBenchRow[] = [];
    for (const [name, route] of cases) {
      const result = await autocannon({
        url: server.url + route,
        connections: 10,
        duration: smoke ? 1 : 5,
        headers: { "X-Session-API-Key": KEY },
      });
      rows.push({
        name,
        requestsPerSecond: Math.round(result.requests.average),
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        errors: result.errors + result.non2xx,
      });
    }
    return rows;
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const smoke = process.argv.includes("--smoke");
  const rows = await benchHttp({ smoke });
  appendBenchFigures(httpBenchFigures(rows, httpBenchEvents(smoke)));
  console.log("HTTP under load (autocannon, 10 connections, loopback):");
  console.log("  case                       req/s     p50 ms   p99 ms   errors");
  for (const r of rows) {
    console.log(`  ${r.name.padEnd(24)} ${String(r.requestsPerSecond).padStart(7)}   ${String(r.p50Ms).padStart(6)}   ${String(r.p99Ms).padStart(6)}   ${r.errors}`);
  }
}
