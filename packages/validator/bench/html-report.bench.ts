/**
 * `acs-validate --format html` on a generated realistic trajectory of 100,000 events (10,000 with
 * --smoke), one event in 1,000 given an error: how long the command takes to write the report
 * (beside `--format json` on the same file, the same run), and how long the report takes to load
 * in headless Chromium (from its file, until the load event). The fastest of three runs counts
 * (one with --smoke). Target: the report loads in under 2 s.
 *
 *   pnpm --filter @acs-toolkit/validator exec tsx bench/html-report.bench.ts [--smoke]
 *   (needs `pnpm build` first, and Chromium: CHROMIUM_PATH, default /usr/bin/chromium)
 *
 * The files go to the OS temporary directory and are deleted afterwards. With ACS_BENCH_RESULTS
 * set, the figures are appended there as JSON lines (suite "validator-cli").
 */
import { spawn } from "node:child_process";
import { appendFileSync, closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { writeRealisticTrajectory } from "./trajectory-generator.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.resolve(here, "../dist/cli.js");

/** Runs the command with its standard output into `output`; resolves to its wall time in seconds. */
async function timeCommand(args: string[], output: string): Promise<{ seconds: number; exitCode: number }> {
  const fd = openSync(output, "w");
  const started = performance.now();
  const child = spawn(process.execPath, [cli, ...args, "--no-progress"], { stdio: ["ignore", fd, "inherit"] });
  const exitCode = await new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => resolve(code ?? 1));
  });
  closeSync(fd);
  return { seconds: (performance.now() - started) / 1000, exitCode };
}

export interface HtmlBenchResult {
  events: number;
  reportMegabytes: number;
  shownEvents: number;
  /** Seconds to write the report, and the JSON report of the same file. */
  write: { html: number; json: number };
  /** Seconds from navigation to the load event, the fastest of the runs. */
  loadSeconds: number;
}

export async function benchHtmlReport({ smoke = false } = {}): Promise<HtmlBenchResult> {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run "pnpm build" first`);
  const directory = mkdtempSync(path.join(os.tmpdir(), "acs-validate-html-bench-"));
  const cleanUp = () => rmSync(directory, { recursive: true, force: true });
  process.once("SIGINT", () => {
    cleanUp();
    process.exit(130);
  });
  try {
    const events = smoke ? 10_000 : 100_000;
    const recording = path.join(directory, "trajectory.jsonl");
    // An undeclared property is an error in any event: one in 1,000 gets one.
    await writeRealisticTrajectory(recording, Infinity, 7, { maxEvents: events, edit: (event, index) => index % 1000 === 999 && (event.bench_error = true) });
    const report = path.join(directory, "report.html");
    const rounds = smoke ? 1 : 3;
    const html: number[] = [];
    const json: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const written = await timeCommand([recording, "--format", "html"], report);
      if (written.exitCode !== 1) throw new Error(`acs-validate --format html exited with ${written.exitCode}, expected 1 (the planted errors)`);
      html.push(written.seconds);
      json.push((await timeCommand([recording, "--format", "json"], path.join(directory, "report.json"))).seconds);
    }
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
    });
    const loads: number[] = [];
    let shownEvents = 0;
    try {
      for (let round = 0; round < rounds; round++) {
        const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
        const started = performance.now();
        await page.goto(pathToFileURL(report).href, { waitUntil: "load" });
        loads.push((performance.now() - started) / 1000);
        shownEvents = await page.evaluate(() => document.querySelectorAll("main article").length);
        await page.close();
      }
    } finally {
      await browser.close();
    }
    return {
      events,
      reportMegabytes: Number((statSync(report).size / 1e6).toFixed(1)),
      shownEvents,
      write: { html: Number(Math.min(...html).toFixed(2)), json: Number(Math.min(...json).toFixed(2)) },
      loadSeconds: Number(Math.min(...loads).toFixed(3)),
    };
  } finally {
    cleanUp();
  }
}

function record(result: HtmlBenchResult, smoke: boolean): void {
  const file = process.env.ACS_BENCH_RESULTS;
  if (!file) return;
  const suite = "validator-cli";
  const tag = smoke ? " (smoke)" : "";
  const size = `${result.events / 1000}k events`;
  const lines = [
    {
      suite,
      name: `html report, ${size}: load time in Chromium${tag}`,
      value: result.loadSeconds,
      unit: "s",
      target: "< 2 s",
      met: result.loadSeconds < 2,
    },
    {
      suite,
      name: `acs-validate --format html, ${size}: time to write the report${tag}`,
      value: result.write.html,
      unit: "s",
      peer: { name: "--format json", value: result.write.json, unit: "s" },
      ratio: Number((result.write.html / result.write.json).toFixed(3)),
    },
  ];
  appendFileSync(file, lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const smoke = process.argv.includes("--smoke");
  const result = await benchHtmlReport({ smoke });
  console.log(`acs-validate --format html: ${result.events.toLocaleString("en-US")} events${smoke ? " (smoke)" : ""}, a ${result.reportMegabytes} MB report showing ${result.shownEvents.toLocaleString("en-US")} events`);
  console.log(`  written in ${result.write.html} s (--format json: ${result.write.json} s)`);
  console.log(`  loaded in Chromium in ${result.loadSeconds} s (target < 2 s)`);
  record(result, smoke);
}
