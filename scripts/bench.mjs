#!/usr/bin/env node
// `pnpm bench [--smoke]`: builds, runs every package's benchmark one after another (so that they do
// not compete for the cores), each appending its figures as JSON lines to one results file
// (ACS_BENCH_RESULTS), then renders BENCHMARKS.md at the repository root: the machine, the date,
// one table per suite with each figure beside its peer, ratio and target.
//
// --smoke runs each benchmark briefly (CI keeps them working with it): the report goes to a
// temporary file and is printed; BENCHMARKS.md is never touched. Either way a failing benchmark, a
// results line that is not a valid figure, or a run that produced no figure at all fails the
// command (after the report of what did run is written, to the temporary directory).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const smoke = process.argv.includes("--smoke");
const workDir = mkdtempSync(path.join(tmpdir(), "acs-bench-"));
const resultsFile = path.join(workDir, "results.jsonl");
writeFileSync(resultsFile, "");

const turbo = (args) =>
  spawnSync("pnpm", ["exec", "turbo", ...args], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", ACS_BENCH_RESULTS: resultsFile },
  }).status ?? 1;
const built = turbo(["run", "build"]);
if (built !== 0) process.exit(built);
// Loose env mode: turbo's strict mode would withhold ACS_BENCH_RESULTS from the benchmarks.
// --continue: one failing benchmark must not lose the figures of the others.
const benched = turbo(["run", smoke ? "bench:smoke" : "bench", "--concurrency=1", "--output-logs=full", "--env-mode=loose", "--continue"]);

const { describeMachine, notesFileName, parseBenchResults, renderBenchReport } = await tsImport("../tools/src/bench-report.ts", import.meta.url);
const { figures, problems } = parseBenchResults(readFileSync(resultsFile, "utf8"));
if (figures.length === 0) problems.push(`no benchmark wrote a figure to ${resultsFile}`);
// Written notes per suite: bench/notes/<notesFileName(suite)>.md; a note of a suite this run did not measure appears under its file's name.
const notesDir = path.join(root, "bench", "notes");
const notes = {};
const suiteOf = new Map([...new Set(figures.map((f) => f.suite))].map((suite) => [notesFileName(suite), suite]));
for (const file of existsSync(notesDir) ? readdirSync(notesDir).filter((f) => f.endsWith(".md")) : []) {
  notes[suiteOf.get(file) ?? file.slice(0, -3)] = readFileSync(path.join(notesDir, file), "utf8");
}
const report = renderBenchReport({ figures, machine: describeMachine(), date: new Date(), smoke, incomplete: benched !== 0, notes });
// BENCHMARKS.md holds complete measurements only: a smoke run or a run with a failed benchmark goes to the temporary directory.
const target = smoke || benched !== 0 ? path.join(workDir, "BENCHMARKS.md") : path.join(root, "BENCHMARKS.md");
writeFileSync(target, report);

if (target !== path.join(root, "BENCHMARKS.md")) process.stdout.write(`\n${report}`);
console.log(`\n${figures.length} figures from ${resultsFile}; report written to ${target}`);
if (problems.length > 0) console.error(`\nbench results that are not valid figures:\n${problems.map((p) => `  ${p}`).join("\n")}`);
if (benched !== 0) console.error("\na benchmark failed (see its output above): the report holds the figures of the others");
if (problems.length > 0 || benched !== 0) process.exit(1);
