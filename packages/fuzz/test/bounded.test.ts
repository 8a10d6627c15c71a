/**
 * The bounded fuzzing pass CI runs (`pnpm test`): a fixed seed, a few thousand cases against the
 * built server and mock. Timing is counted, not asserted (a test holds no wall-clock bound: the
 * machine's other load decides it); only a hang fails. The deep run, `pnpm fuzz --count 100000`
 * (README), holds the 2 s answer and 50 ms event-loop budgets.
 */
import { describe, expect, it } from "vitest";
import { formatReport, runFuzz } from "../src/run.js";
import { startTarget } from "../src/target.js";

describe.each([
  ["server", 2_000],
  ["mock", 1_000],
] as const)("a bounded pass against the %s", (kind, count) => {
  it(`${count} cases: no 5xx, no crash, no hang`, async () => {
    const report = await runFuzz({ count, seed: 20_260_205, start: () => startTarget(kind), timing: "count" });
    expect(report.failure, formatReport(report, kind, "count")).toBeUndefined();
    expect(report.cases).toBe(count);
    expect(report.serverErrors).toBe(0);
    expect(report.crashes).toBe(0);
    // The pass really covered the layers it claims to.
    expect(Object.keys(report.statuses).length).toBeGreaterThan(6);
  });
});
