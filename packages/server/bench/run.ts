/**
 * `pnpm bench` for the server: search latency and ingest at 10k / 100k / 1M events (store level),
 * then requests per second under autocannon over HTTP. `--smoke` runs small sizes quickly (CI).
 * With ACS_BENCH_RESULTS set, every figure is appended to that file as a JSON line (suite "server").
 */
import { benchHttp, httpBenchEvents, httpBenchFigures } from "./http.bench.js";
import { appendBenchFigures, benchSearch, formatSearchBench, searchBenchFigures } from "./search.bench.js";

const smoke = process.argv.includes("--smoke");
console.log(`server benchmarks${smoke ? " (smoke)" : ""}\n`);
const search = await benchSearch({ smoke, log: (line) => console.log(line) });
appendBenchFigures(searchBenchFigures(search));
console.log(`\n${formatSearchBench(search)}`);
console.log("");
const rows = await benchHttp({ smoke });
appendBenchFigures(httpBenchFigures(rows, httpBenchEvents(smoke)));
console.log(`HTTP under load (autocannon, 10 connections, loopback, conversation of ${httpBenchEvents(smoke).toLocaleString("en")} events):`);
console.log("  case                       req/s     p50 ms   p99 ms   errors");
for (const r of rows) {
  console.log(`  ${r.name.padEnd(24)} ${String(r.requestsPerSecond).padStart(7)}   ${String(r.p50Ms).padStart(6)}   ${String(r.p99Ms).padStart(6)}   ${r.errors}`);
}
