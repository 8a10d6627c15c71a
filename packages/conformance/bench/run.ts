/**
 * `pnpm bench` for the conformance suite: how long the whole suite takes against the reference
 * server (each run on a fresh server and data directory; the median of three). `--smoke` runs one
 * quick group once, to keep the benchmark working in CI.
 *
 * With ACS_BENCH_RESULTS set, the figures are appended there as JSON lines (suite "conformance").
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLogger, parseConfig, startServer } from "@acs-toolkit/server";
import { runConformance, type ConformanceReport } from "../src/index.js";

const smoke = process.argv.includes("--smoke");
const KEY = "conformance-bench-key";
const runs = smoke ? 1 : 3;

async function once(): Promise<ConformanceReport> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "acs-conformance-bench-"));
  const server = await startServer(parseConfig(["--port", "0", "--data-dir", dataDir], {}), { env: { SESSION_API_KEY: KEY }, log: createLogger("silent") });
  try {
    return await runConformance({ baseUrl: server.url, apiKey: KEY, ...(smoke && { only: ["create", "search.filter"] }) });
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(`conformance benchmark${smoke ? " (smoke)" : ""}: the suite against the reference server, ${runs} run${runs > 1 ? "s" : ""}\n`);
const reports: ConformanceReport[] = [];
for (let i = 0; i < runs; i++) {
  const report = await once();
  if (report.failed > 0) throw new Error(`the reference server failed ${report.failed} checks: ${report.results.filter((r) => r.status === "fail").map((r) => r.id).join(", ")}`);
  reports.push(report);
  console.log(`  run ${i + 1}: ${report.results.length} checks in ${(report.durationMs / 1000).toFixed(2)} s`);
}
const median = [...reports].sort((a, b) => a.durationMs - b.durationMs)[Math.floor(reports.length / 2)]!;
const slowest = [...median.results].sort((a, b) => b.durationMs - a.durationMs).slice(0, 5);
console.log(`\n  median: ${(median.durationMs / 1000).toFixed(2)} s for ${median.results.length} checks; slowest checks:`);
for (const r of slowest) console.log(`    ${String(r.durationMs).padStart(6)} ms  ${r.id}`);

const figure = {
  suite: "conformance",
  name: `${smoke ? "create + search.filter checks" : "whole suite"} against the reference server (${median.results.length} checks)`,
  value: Number((median.durationMs / 1000).toFixed(2)),
  unit: "s",
};
if (process.env.ACS_BENCH_RESULTS) appendFileSync(process.env.ACS_BENCH_RESULTS, JSON.stringify(figure) + "\n");
