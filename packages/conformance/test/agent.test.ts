/**
 * Implementations that record on their own: the reference server with a runtime that appends events
 * to every conversation on its own clock and answers every message (test/support/servers.ts,
 * appendingRuntime). The whole suite passes: no check mistakes the agent's events for a fault.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKS, runConformance, type ConformanceReport } from "../src/index.js";
import { appendingRuntime, KEY, startReference, type AppendingRuntime, type ReferenceServer } from "./support/servers.js";

let runtime: AppendingRuntime;
let reference: ReferenceServer;
let report: ConformanceReport;
let recordedBefore: number;

beforeAll(async () => {
  runtime = appendingRuntime();
  reference = await startReference([], runtime);
  recordedBefore = runtime.recorded;
  report = await runConformance({ baseUrl: reference.url, apiKey: KEY });
});
afterAll(async () => {
  runtime.stop();
  await reference.close();
});

describe("a server whose runtime appends events while the suite reads", () => {
  it("passes every check, none skipped", () => {
    const notPassed = report.results.filter((r) => r.status !== "pass").map((r) => `${r.status} ${r.id}: ${r.evidence ?? r.reason}`);
    expect(notPassed).toEqual([]);
    expect(report).toMatchObject({ passed: CHECKS.length, failed: 0, skipped: 0 });
  });

  it("did append during the run (thousands of events, on every conversation the suite read)", () => {
    expect(runtime.recorded - recordedBefore).toBeGreaterThan(1_000);
  });
});
