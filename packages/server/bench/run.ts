/**
 * `pnpm bench` for the server: search latency and ingest at 10k / 100k / 1M events (store level),
 * then requests per second under autocannon over HTTP. `--smoke` runs small sizes quickly (CI).
 */
import { benchHttp } from "./http.bench.js";
import { benchSearch, formatSearchBench } from "./search.bench.js";

const smoke = process.argv.includes("--smoke");
console.log(`server benchmarks${smoke ? " (smoke)" : ""}\n`);
console.log(formatSearchBench(benchSearch({ smoke })));
console.log("");
const rows = await benchHttp({ smoke });
console.log("HTTP under load (autocannon, 10 connections, loopback, conversation of 10,000 events):");
console.log("  case                       req/s     p50 ms   p99 ms   errors");
for (const r of rows) {
  console.log(`  ${r.name.padEnd(24)} ${String(r.requestsPerSecond).padStart(7)}   ${String(r.p50Ms).padStart(6)}   ${String(r.p99Ms).padStart(6)}   ${r.errors}`);
}
