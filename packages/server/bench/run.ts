/**
 * `pnpm bench` for the server: search latency and ingest at 10k / 100k / 1M events (store level),
 * then requests per second under autocannon over HTTP (the server and its floor in their own processes),
 * then bulk ingest over HTTP (`POST …/events/batch`, ingest.bench.ts). `--smoke` runs small sizes quickly (CI).
 * With ACS_BENCH_RESULTS set, every figure is appended to that file as a JSON line (suite "server").
 */
import { benchHttp, formatHttpBench, httpBenchFigures } from "./http.bench.js";
import { benchIngest, formatIngest, ingestFigures } from "./ingest.bench.js";
import { appendBenchFigures, benchSearch, formatSearchBench, searchBenchFigures } from "./search.bench.js";

const smoke = process.argv.includes("--smoke");
console.log(`server benchmarks${smoke ? " (smoke)" : ""}\n`);
const search = await benchSearch({ smoke, log: (line) => console.log(line) });
appendBenchFigures(searchBenchFigures(search));
console.log(`\n${formatSearchBench(search)}`);
console.log("");
const rows = await benchHttp({ smoke, log: (line) => console.log(line) });
appendBenchFigures(httpBenchFigures(rows));
console.log(formatHttpBench(rows));
console.log("");
const ingest = await benchIngest({ sizes: smoke ? [20_000] : [100_000, 1_000_000], log: (line) => console.log(line) });
appendBenchFigures(ingestFigures(ingest));
console.log(formatIngest(ingest));
