/**
 * `count` on the embedded SQLite store, in process, at growing conversation sizes (ONE
 * conversation, built as search.bench.ts builds it): p50/p99 per filter, and the p50 at the
 * largest size against the smallest. No body and no time range read the counters
 * (migrations.ts, version 3): their cost must not grow with the conversation.
 *
 *   pnpm exec tsx bench/count.bench.ts [sizes...]      (from packages/server; default 10000 1000000)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { SearchFilters } from "../src/store/types.js";
import { openSqliteStore } from "../src/store/sqlite/index.js";
import { CONVERSATION, build } from "./search.bench.js";

const FILTERS: Record<string, SearchFilters> = {
  "no filter": {},
  kind: { kind: "ActionEvent" },
  source: { source: "agent" },
  "kind+source": { kind: "MessageEvent", source: "user" },
  // A window in the middle (the generator's events are 0–400 µs apart: ~25,000 at 1M, all at 10k).
  "time range 5 s": { timestampGte: Date.UTC(2026, 1, 5, 9, 0, 1) * 1000, timestampLt: Date.UTC(2026, 1, 5, 9, 0, 6) * 1000 },
};
const RUNS = 200;

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const dir = mkdtempSync(path.join(tmpdir(), "acs-count-bench-"));
const p50s = new Map<string, number[]>();
try {
  for (const total of sizes.length ? sizes : [10_000, 1_000_000]) {
    const store = openSqliteStore({ file: path.join(dir, `events-${total}.db`) });
    try {
      const built = await build(store, total);
      console.log(`${total.toLocaleString("en")} events built (${built.ingestPerSecond.toLocaleString("en")} events/s)`);
      for (const [name, filters] of Object.entries(FILTERS)) {
        const expected = await store.count(CONVERSATION, filters);
        const times: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          const start = performance.now();
          await store.count(CONVERSATION, filters);
          times.push(performance.now() - start);
        }
        times.sort((a, b) => a - b);
        const p50 = times[Math.floor(RUNS / 2)]!;
        const p99 = times[Math.floor(RUNS * 0.99)]!;
        p50s.set(name, [...(p50s.get(name) ?? []), p50]);
        console.log(`  count ${name.padEnd(12)} = ${String(expected).padStart(8)}  p50 ${p50.toFixed(3)} ms  p99 ${p99.toFixed(3)} ms`);
      }
    } finally {
      await store.close();
    }
  }
  for (const [name, values] of p50s) {
    if (values.length > 1) console.log(`ratio ${name}: ${(values[values.length - 1]! / Math.max(values[0]!, 0.001)).toFixed(2)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
