/**
 * `acs-validate` on a generated JSONL trajectory of at least 1 GB (about 20 MB with --smoke): its
 * throughput (MB/s, events/s) with every rule on, against a bare loop that only JSON.parses each
 * line of the same file, and its peak memory (the child process's own maximum RSS). Both run as
 * child processes, alternately, three times (once with --smoke); the fastest run of each counts, as the
 * one least disturbed by other work on the machine, and the peak RSS is the highest of all runs.
 * Targets: CLI throughput at least half the bare loop's; peak RSS under 200 MB.
 *
 *   pnpm --filter @acs-toolkit/validator bench [--smoke]     (needs `pnpm build` first)
 *
 * The file goes to the OS temporary directory and is deleted afterwards. With ACS_BENCH_RESULTS
 * set, the figures are appended there as JSON lines (suite "validator-cli").
 */
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writeRealisticTrajectory } from "./trajectory-generator.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.resolve(here, "../dist/cli.js");
const parseLoop = path.resolve(here, "parse-loop.mjs");

interface RunStats {
  maxRssBytes: number;
  events: number;
  bytes: number;
  /** Wall time of the child process, start to exit. */
  seconds: number;
  exitCode: number;
}

async function runChild(args: string[], statsFile: string): Promise<RunStats> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, ACS_VALIDATE_STATS: statsFile } });
  const exitCode = await new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => resolve(code ?? 1));
  });
  const seconds = (performance.now() - started) / 1000;
  const stats = JSON.parse(readFileSync(statsFile, "utf8")) as Omit<RunStats, "seconds" | "exitCode">;
  return { ...stats, seconds, exitCode };
}

export interface CliBenchResult {
  megabytes: number;
  events: number;
  cli: { megabytesPerSecond: number; eventsPerSecond: number; peakRssMegabytes: number };
  parse: { megabytesPerSecond: number; eventsPerSecond: number; peakRssMegabytes: number };
  /** CLI throughput / bare loop throughput (target ≥ 0.5). */
  ratio: number;
}

export async function benchCli({ smoke = false } = {}): Promise<CliBenchResult> {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run "pnpm build" first`);
  const directory = mkdtempSync(path.join(os.tmpdir(), "acs-validate-bench-"));
  const file = path.join(directory, "trajectory.jsonl");
  const cleanUp = () => rmSync(directory, { recursive: true, force: true });
  process.once("SIGINT", () => {
    cleanUp();
    process.exit(130);
  });
  try {
    const target = smoke ? 20 * 1000 * 1000 : 1024 * 1024 * 1024;
    const generated = await writeRealisticTrajectory(file, target);
    const bytes = statSync(file).size;
    const statsFile = path.join(directory, "stats.json");
    const rounds = smoke ? 1 : 3;
    const cliRuns: RunStats[] = [];
    const parseRuns: RunStats[] = [];
    for (let round = 0; round < rounds; round++) {
      parseRuns.push(await runChild([parseLoop, file, statsFile], statsFile));
      const run = await runChild([cli, file, "--format", "json", "--no-progress"], statsFile);
      if (run.exitCode !== 0) throw new Error(`acs-validate found the generated trajectory invalid (exit code ${run.exitCode})`);
      if (run.events !== generated.events) throw new Error(`acs-validate read ${run.events} events, ${generated.events} were written`);
      cliRuns.push(run);
    }
    const best = (runs: RunStats[]) => runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    const figures = (runs: RunStats[]) => {
      const run = best(runs);
      return {
        megabytesPerSecond: Number((bytes / 1e6 / run.seconds).toFixed(1)),
        eventsPerSecond: Math.round(generated.events / run.seconds),
        peakRssMegabytes: Number((Math.max(...runs.map((r) => r.maxRssBytes)) / 1e6).toFixed(1)),
      };
    };
    const cliFigures = figures(cliRuns);
    const parseFigures = figures(parseRuns);
    return {
      megabytes: Number((bytes / 1e6).toFixed(1)),
      events: generated.events,
      cli: cliFigures,
      parse: parseFigures,
      ratio: Number((best(parseRuns).seconds / best(cliRuns).seconds).toFixed(3)),
    };
  } finally {
    cleanUp();
  }
}

function record(result: CliBenchResult, smoke: boolean): void {
  const file = process.env.ACS_BENCH_RESULTS;
  if (!file) return;
  const suite = "validator-cli";
  // A 20 MB smoke run is mostly start-up time: its figures carry "(smoke)" so that no report takes them for the real ones.
  const tag = smoke ? " (smoke)" : "";
  const lines = [
    {
      suite,
      name: `acs-validate JSONL throughput vs JSON.parse loop${tag}`,
      value: result.cli.megabytesPerSecond,
      unit: "MB/s",
      peer: { name: "JSON.parse each line", value: result.parse.megabytesPerSecond, unit: "MB/s" },
      ratio: result.ratio,
      target: "≥ 0.5",
      met: result.ratio >= 0.5,
    },
    {
      suite,
      name: `acs-validate JSONL events per second${tag}`,
      value: result.cli.eventsPerSecond,
      unit: "events/s",
      peer: { name: "JSON.parse each line", value: result.parse.eventsPerSecond, unit: "events/s" },
      ratio: result.ratio,
    },
    {
      suite,
      name: `acs-validate peak RSS (${result.megabytes >= 1000 ? `${(result.megabytes / 1000).toFixed(2)} GB` : `${result.megabytes} MB`} JSONL)${tag}`,
      value: result.cli.peakRssMegabytes,
      unit: "MB",
      peer: { name: "JSON.parse each line", value: result.parse.peakRssMegabytes, unit: "MB" },
      target: "< 200 MB",
      met: result.cli.peakRssMegabytes < 200,
    },
  ];
  appendFileSync(file, lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const smoke = process.argv.includes("--smoke");
  const result = await benchCli({ smoke });
  const row = (name: string, f: CliBenchResult["cli"]) =>
    `  ${name.padEnd(22)} ${String(f.megabytesPerSecond).padStart(7)} MB/s  ${f.eventsPerSecond.toLocaleString("en-US").padStart(9)} events/s  peak RSS ${f.peakRssMegabytes} MB`;
  console.log(`acs-validate: ${result.megabytes} MB of JSONL, ${result.events.toLocaleString("en-US")} events${smoke ? " (smoke)" : ""}`);
  console.log(row("acs-validate (all on)", result.cli));
  console.log(row("JSON.parse each line", result.parse));
  console.log(`  ratio acs-validate / JSON.parse loop = ${result.ratio} (target ≥ 0.5); peak RSS target < 200 MB`);
  record(result, smoke);
}
