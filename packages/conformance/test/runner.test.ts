/** The runner: selection by pattern, deadlines, how outcomes are classified; the report formats. */
import { parseJUnit } from "@acs-toolkit/cli-kit/testing/junit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKS, CheckFailure, formatJUnit, formatResultLine, runConformance, selectChecks, SkipCheck, UnknownPatternError, type Check, type CheckResult } from "../src/index.js";
import { KEY, startReference, type ReferenceServer } from "./support/servers.js";

const ids = (checks: readonly Check[]) => checks.map((c) => c.id);

describe("selectChecks", () => {
  it("matches an id, a group prefix, a glob or a need; keeps suite order", () => {
    expect(ids(selectChecks(CHECKS, ["search.filter.kind"]))).toEqual(["search.filter.kind"]);
    expect(ids(selectChecks(CHECKS, ["search.filter"]))).toEqual(ids(CHECKS).filter((id) => id.startsWith("search.filter.")));
    expect(ids(selectChecks(CHECKS, ["*.timestamp-*"]))).toEqual(["search.filter.timestamp-gte", "search.filter.timestamp-lt", "search.filter.timestamp-forms", "bad-input.timestamp-gte", "bad-input.timestamp-lt", "bad-input.timestamp-ambiguous"]);
    expect(ids(selectChecks(CHECKS, ["append"]))).toEqual(ids(CHECKS.filter((c) => c.needs?.includes("append"))));
    expect(ids(selectChecks(CHECKS, ["limit", "create.empty"]))).toEqual(["create.empty", "limit.default", "limit.bounds"]);
  });

  it("a prefix matches whole segments only", () => {
    expect(ids(selectChecks(CHECKS, ["search.filter.kind"]))).not.toContain("search.filter.kind-qualified");
  });

  it("skip removes, after only", () => {
    expect(ids(selectChecks(CHECKS, ["limit"], ["limit.bounds"]))).toEqual(["limit.default"]);
    expect(selectChecks(CHECKS, [], ["websocket"]).some((c) => c.id.startsWith("ws."))).toBe(false);
  });

  it("a pattern that matches nothing is an error, not an empty run", () => {
    expect(() => selectChecks(CHECKS, ["serch"])).toThrow(UnknownPatternError);
    expect(() => selectChecks(CHECKS, [], ["ws.nothing"])).toThrow('no check matches "ws.nothing"');
  });

  it("every check has an id of group.name, a title and a spec reference", () => {
    for (const check of CHECKS) {
      expect(check.id).toMatch(/^[a-z-]+(\.[a-zA-Z0-9-]+)+$/);
      expect(check.title.length).toBeGreaterThan(10);
      expect(check.spec.length).toBeGreaterThan(3);
    }
  });
});

describe("runConformance with checks of its own", () => {
  let reference: ReferenceServer;
  beforeAll(async () => void (reference = await startReference()));
  afterAll(() => reference.close());

  const check = (id: string, run: Check["run"], needs?: Check["needs"]): Check => ({ id: `test.${id}`, title: `the ${id} check`, spec: "none", needs, run });

  it("classifies outcomes: pass (with a note), fail with evidence, skip with reason, deadline, unexpected error", async () => {
    const streamed: CheckResult[] = [];
    const report = await runConformance({
      baseUrl: reference.url,
      apiKey: KEY,
      // Only "hang" may reach the deadline: long enough that the others cannot on a busy machine.
      timeoutMs: 1_000,
      onResult: (result) => streamed.push(result),
      checks: [
        check("pass", async () => "3 things"),
        check("fail", async () => {
          throw new CheckFailure("saw 500");
        }),
        check("skip", async () => {
          throw new SkipCheck("not here");
        }),
        check("hang", () => new Promise(() => {})),
        check("crash", async () => {
          // The shape a check relied on was not there: a TypeError, reported as the evidence.
          void (undefined as unknown as { x: number }).x;
        }),
        check("needs", async () => {}, ["extension:noSuchOperation"]),
      ],
    });
    expect(report.results.map(({ id, status, evidence, reason, note }) => ({ id, status, evidence, reason, note }))).toEqual([
      { id: "test.pass", status: "pass", note: "3 things", evidence: undefined, reason: undefined },
      { id: "test.fail", status: "fail", evidence: "saw 500", reason: undefined, note: undefined },
      { id: "test.skip", status: "skip", reason: "not here", evidence: undefined, note: undefined },
      { id: "test.hang", status: "fail", evidence: "did not finish within 1000 ms", reason: undefined, note: undefined },
      { id: "test.crash", status: "fail", evidence: expect.stringMatching(/^TypeError: Cannot read properties of undefined/), reason: undefined, note: undefined },
      { id: "test.needs", status: "skip", reason: "noSuchOperation is not an operation of the spec", evidence: undefined, note: undefined },
    ]);
    expect(streamed).toEqual(report.results);
    expect(report).toMatchObject({ passed: 1, failed: 3, skipped: 2 });
  });

  it("a deadline aborts the check's requests", async () => {
    const seen: string[] = [];
    const report = await runConformance({
      baseUrl: reference.url,
      apiKey: KEY,
      // Long enough for the runner's /health probe (same timeout) on a busy machine.
      timeoutMs: 1_000,
      checks: [
        // Never finishes on its own: only the deadline ends it. The runner aborts the signal before
        // it reports the failure, so what the listener saw is known once the report is.
        check("abort", (ctx) => new Promise(() => ctx.signal!.addEventListener("abort", () => seen.push(`aborted: ${String(ctx.signal!.reason)}`)))),
      ],
    });
    expect(report.results[0]).toMatchObject({ status: "fail", evidence: "did not finish within 1000 ms" });
    expect(seen).toEqual([expect.stringMatching(/^aborted: AbortError/)]);
  });
});

describe("report formats", () => {
  const base: CheckResult = { id: "upload.hostile-names", title: "hostile <names> & \"quotes\"", spec: "uploadFiles", status: "fail", evidence: "skipped_files is [\"x\ny\", \"\u0007bell\"]", durationMs: 12 };

  it("a result is one line, whatever its evidence holds", () => {
    expect(formatResultLine(base)).toBe('FAIL  upload.hostile-names — skipped_files is ["x ⏎ y", "\u0007bell"]');
    expect(formatResultLine({ ...base, status: "skip", evidence: undefined, reason: "no\nchannel" })).toBe("skip  upload.hostile-names — no ⏎ channel");
  });

  it("JUnit: a testcase per check, counts by outcome, the text as written (markup, line breaks; \\uXXXX for what XML cannot carry)", () => {
    const results: CheckResult[] = [
      base,
      { ...base, id: "create.empty", status: "pass", evidence: undefined, note: "n" },
      { ...base, id: "ws.stream", status: "skip", evidence: undefined, reason: 'no\n"channel" ]]>' },
    ];
    const xml = formatJUnit({ baseUrl: "http://h/?a=1&b=2", startedAt: "2026-01-01T00:00:00.000Z", durationMs: 1500, results, passed: 1, failed: 1, skipped: 1 });
    const doc = parseJUnit(xml);
    const counts = { "@tests": "3", "@failures": "1", "@errors": "0", "@skipped": "1", "@time": "1.500" };
    expect(doc.testsuites).toMatchObject({ "@name": "acs-conformance", ...counts });
    const suite = doc.testsuites.testsuite[0];
    expect(suite).toMatchObject({ "@name": "acs-conformance http://h/?a=1&b=2", ...counts, "@timestamp": "2026-01-01T00:00:00.000Z" });
    expect(suite.testcase.map((c: any) => [c["@classname"], c["@name"], c["@time"]])).toEqual([
      ["acs-conformance.upload", "upload.hostile-names", "0.012"],
      ["acs-conformance.create", "create.empty", "0.012"],
      ["acs-conformance.ws", "ws.stream", "0.012"],
    ]);
    expect(suite.testcase[0].failure).toEqual({ "@message": 'hostile <names> & "quotes"', "#text": 'skipped_files is ["x\ny", "\\u0007bell"]' });
    expect(suite.testcase[2].skipped).toEqual({ "@message": 'no\n"channel" ]]>' });
  });
});
