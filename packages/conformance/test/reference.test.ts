/**
 * The whole suite against the real reference server: every check passes, none is skipped. And the
 * authentication checks against a server that serves reading without a key (--public-read).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKS, runConformance, type ConformanceReport } from "../src/index.js";
import { KEY, startReference, type ReferenceServer } from "./support/servers.js";

let reference: ReferenceServer;
let report: ConformanceReport;

beforeAll(async () => {
  reference = await startReference();
  report = await runConformance({ baseUrl: reference.url, apiKey: KEY });
});
afterAll(() => reference.close());

describe("the reference server", () => {
  it("passes every check of the suite, none skipped", () => {
    const notPassed = report.results.filter((r) => r.status !== "pass").map((r) => `${r.status} ${r.id}: ${r.evidence ?? r.reason}`);
    expect(notPassed).toEqual([]);
    expect(report.results.map((r) => r.id)).toEqual(CHECKS.map((c) => c.id));
    expect(report).toMatchObject({ passed: CHECKS.length, failed: 0, skipped: 0 });
  });

  it("the suite covers every operation of the spec that needs the key", () => {
    // Derived from the spec: a new operation with a security requirement gets its 401 check.
    expect(report.results.filter((r) => r.id.startsWith("auth.")).length).toBeGreaterThanOrEqual(8);
  });
});

describe("the reference server with --public-read", () => {
  it("passes the authentication and live-channel checks (a client without a key reads, but cannot send)", async () => {
    const open = await startReference(["--public-read"]);
    try {
      const report = await runConformance({ baseUrl: open.url, apiKey: KEY, only: ["auth", "ws.unauthenticated", "ws.auth-frame", "ws.close-unauthorized"] });
      expect(report.results.filter((r) => r.status !== "pass").map((r) => `${r.status} ${r.id}: ${r.evidence ?? r.reason}`)).toEqual([]);
      expect(report.results.find((r) => r.id === "ws.unauthenticated")!.note).toBe("reading is public: events served, the message refused");
    } finally {
      await open.close();
    }
  });
});
