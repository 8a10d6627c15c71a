/**
 * A fuzzing run: fast-check drives `count` cases (seeded: the same seed sends the same cases)
 * against a target; a failing case is shrunk to the smallest one that still fails, replayed on a
 * fresh process when the last one died. Between cases, the target's event loop is checked against
 * the 50 ms budget (the request thread's longest CPU run between two 5 ms ticks, Linux; elsewhere
 * the event-loop delay).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import type { EventLoopDelay } from "@acs-toolkit/server";
import { fuzzCase, reproduction, type FuzzCase, type FuzzWorld } from "./cases.js";
import { execute, HANG_MS, REQUEST_BUDGET_MS, type Timing } from "./execute.js";
import type { Target } from "./target.js";

const EVENT_LOOP_BUDGET_MS = 50;

interface RunOptions {
  count: number;
  seed: number;
  /** Starts (or restarts, after a crash) the target. */
  start(): Promise<Target>;
  log?: (line: string) => void;
  /**
   * "fail" (default, the deep run): an answer over 2 s, a WebSocket silent for 2 s or a stall over the
   * event-loop budget fails the run. "count": they are counted and reported, and only a hang (no answer
   * for HANG_MS) fails it — for runs whose wall-clock figures depend on what else the machine runs.
   */
  timing?: Timing;
}

interface RunReport {
  seed: number;
  cases: number;
  /** Answers by status (0: no HTTP answer: raw closes, WebSocket sessions). */
  statuses: Record<string, number>;
  serverErrors: number;
  crashes: number;
  overBudget: number;
  /** Cases after which the event loop had been held over the budget. */
  stalls: number;
  /** The first stalls (up to 25): which case (its 1-based number in the run), how long, and the case as a command line. */
  stallCases: Array<{ case: number; heldMs: number; reproduction: string }>;
  slowestMs: number;
  /** The worst event-loop figures seen across the run (per interval, between two reads). */
  eventLoop: { maxMs: number; p99Ms: number; busyMaxMs?: number; busyP99Ms?: number };
  /** The smallest failing case, as a command line, and why it fails. */
  failure?: { reproduction: string; problem: string; shrunkFrom: number };
}

async function world(target: Target): Promise<FuzzWorld> {
  const headers = { "X-Session-API-Key": target.key, "Content-Type": "application/json" };
  const created = await fetch(`${target.url}/api/conversations`, { method: "POST", headers, body: JSON.stringify({ initial_user_msg: "fuzz" }) });
  const { conversation_id: conversationId } = (await created.json()) as { conversation_id: string };
  const form = new FormData();
  form.append("files", new Blob(["fuzz"]), "fuzz.txt");
  await fetch(`${target.url}/api/conversations/${conversationId}/upload-files`, { method: "POST", headers: { "X-Session-API-Key": target.key }, body: form });
  return { conversationId, fileName: "fuzz.txt", key: target.key, hostileNames: target.dataDir ? hostileEntries(path.join(target.dataDir, "uploads", conversationId)) : [] };
}

/**
 * What a hostile agent leaves in its workspace for the download route: a FIFO (a blocking open holds
 * a thread of the file I/O pool for ever), a unix socket, links to a host file and to a device, and a
 * folder. Each must be answered 404 at once.
 */
function hostileEntries(workspace: string): string[] {
  const made: string[] = [];
  const make = (name: string, create: (at: string) => void) => {
    try {
      create(path.join(workspace, name));
      made.push(name);
    } catch {
      // Not on this system (mkfifo missing): that vector is left out.
    }
  };
  make("fifo", (at) => execFileSync("mkfifo", [at]));
  make("socket", (at) => execFileSync(process.execPath, ["-e", `require("net").createServer().listen(${JSON.stringify(at)}, () => process.exit(0))`]));
  make("passwd-link", (at) => symlinkSync("/etc/passwd", at));
  make("zero-link", (at) => symlinkSync("/dev/zero", at));
  make("folder", (at) => mkdirSync(at));
  return made;
}

export async function runFuzz(options: RunOptions): Promise<RunReport> {
  const log = options.log ?? (() => {});
  let target = await options.start();
  const report: RunReport = { seed: options.seed, cases: 0, statuses: {}, serverErrors: 0, crashes: 0, overBudget: 0, stalls: 0, stallCases: [], slowestMs: 0, eventLoop: { maxMs: 0, p99Ms: 0 } };
  const noteEventLoop = (delay: EventLoopDelay | undefined) => {
    if (!delay) return undefined;
    const e = report.eventLoop;
    e.maxMs = Math.max(e.maxMs, delay.maxMs);
    e.p99Ms = Math.max(e.p99Ms, delay.p99Ms);
    if (delay.busyMaxMs !== undefined) {
      e.busyMaxMs = Math.max(e.busyMaxMs ?? 0, delay.busyMaxMs);
      e.busyP99Ms = Math.max(e.busyP99Ms ?? 0, delay.busyP99Ms ?? 0);
    }
    const held = delay.busyMaxMs ?? delay.maxMs;
    return held > EVENT_LOOP_BUDGET_MS ? { held, problem: `the event loop was held ${held} ms (budget ${EVENT_LOOP_BUDGET_MS} ms)` } : undefined;
  };
  try {
    const the = await world(target);
    await target.eventLoop(); // from here on
    const property = fc.asyncProperty(fuzzCase(the), async (c: FuzzCase) => {
      if (!target.alive()) {
        await target.close();
        target = await options.start();
      }
      const outcome = await execute(target, c, options.timing);
      report.cases++;
      report.statuses[outcome.status] = (report.statuses[outcome.status] ?? 0) + 1;
      if (outcome.status >= 500) report.serverErrors++;
      if (!target.alive()) report.crashes++;
      if (c.kind === "http") report.slowestMs = Math.max(report.slowestMs, Math.round(outcome.ms));
      if (c.kind === "http" && outcome.ms > REQUEST_BUDGET_MS) report.overBudget++;
      // The event loop after every case: a stall is the case's own.
      const stall = noteEventLoop(await target.eventLoop());
      if (stall) {
        report.stalls++;
        // Counted stalls name their case: a stall may need the state the run built up, so the case number matters.
        if (report.stallCases.length < 25) report.stallCases.push({ case: report.cases, heldMs: stall.held, reproduction: reproduction(c, target.url) });
      }
      if (report.cases % 5_000 === 0) log(`  ${report.cases} cases, ${report.serverErrors} 5xx, ${report.crashes} crashes, slowest ${report.slowestMs} ms, ${report.stalls} stalls`);
      const problem = outcome.problem ?? (options.timing === "count" ? undefined : stall?.problem);
      if (problem) throw new Error(problem);
    });
    const result = await fc.check(property, { numRuns: options.count, seed: options.seed, endOnFailure: false, interruptAfterTimeLimit: undefined });
    noteEventLoop(await target.eventLoop());
    if (result.failed && result.counterexample) {
      const [c] = result.counterexample as [FuzzCase];
      const message = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
      report.failure = { reproduction: reproduction(c, target.url), problem: message, shrunkFrom: result.numRuns };
    }
    return report;
  } finally {
    await target.close();
  }
}

export function formatReport(report: RunReport, name: string, timing: Timing = "fail"): string {
  const statuses = Object.entries(report.statuses).sort(([a], [b]) => Number(a) - Number(b)).map(([s, n]) => `${s === "0" ? "no answer/ws" : s}: ${n}`).join(", ");
  const e = report.eventLoop;
  const lines = [
    `fuzz ${name}: seed ${report.seed}, ${report.cases} cases sent (shrinking included)`,
    `  5xx: ${report.serverErrors}   crashes: ${report.crashes}   over ${REQUEST_BUDGET_MS} ms: ${report.overBudget}   slowest answer: ${report.slowestMs} ms   stalls over ${EVENT_LOOP_BUDGET_MS} ms: ${report.stalls}`,
    `  event loop (read after every case, worst): delay max ${e.maxMs} ms, p99 ${e.p99Ms} ms${e.busyMaxMs === undefined ? "" : `; request thread's longest CPU run ${e.busyMaxMs} ms (p99 ${e.busyP99Ms} ms)`}`,
    `  statuses: ${statuses}`,
    ...report.stallCases.map((s) => `  stall: case ${s.case}, held ${s.heldMs} ms: ${s.reproduction}`),
  ];
  if (report.failure) {
    lines.push(`  FAILED: ${report.failure.problem}`, `  smallest reproduction: ${report.failure.reproduction}`, `  (rerun with --seed ${report.seed})`);
  } else if (timing === "count") {
    lines.push(`  passed: no 5xx, no crash, no hang over ${HANG_MS / 1000} s (timing counted, not failed: ${report.overBudget} answers over ${REQUEST_BUDGET_MS} ms, ${report.stalls} stalls)`);
  } else lines.push(`  passed: no 5xx, no crash, no answer over ${REQUEST_BUDGET_MS / 1000} s, no stall over the budget`);
  return lines.join("\n");
}
