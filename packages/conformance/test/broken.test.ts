/**
 * Deliberately broken implementations (thin proxies in front of a real reference server, each
 * corrupting one behaviour) are caught by the check meant for them; the same checks pass through a
 * transparent proxy, so the failure is the corruption's and not the proxy's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runConformance } from "../src/index.js";
import { BROKEN, INTERFACE_ONLY, KEY, startProxy, startReference, type ReferenceServer } from "./support/servers.js";

let reference: ReferenceServer;
beforeAll(async () => void (reference = await startReference()));
afterAll(() => reference.close());

const cases: Array<[broken: keyof typeof BROKEN, check: string, evidence: RegExp]> = [
  ["ignores the source filter", "search.filter.source", /^search \{"source":"agent"\}: 160 events instead of 88; unexpected /],
  ["loses an event between pages", "paging.complete", /^search \{"limit":1,"sort_order":"TIMESTAMP"\}: page 2 is empty although the previous page gave a next_page_id$/],
  ["answers 500 to limit=101", "bad-input.limit-101", /expected 422: GET \/api\/conversations\/[0-9a-f-]+\/events\/search\?limit=101 → 500/],
  ["leaks a stored secret in GET /api/settings", "secrets.settings-view", /the stored llm_api_key is in the body of GET \/api\/settings → 200/],
];
const checks = cases.map(([, check]) => check);

describe("deliberately broken servers", () => {
  it("a transparent proxy passes the checks used below", async () => {
    const proxy = await startProxy(reference.url);
    try {
      const report = await runConformance({ baseUrl: proxy.url, apiKey: KEY, only: checks });
      expect(report.results.map((r) => [r.id, r.status, r.evidence])).toEqual(checks.map((id) => [id, "pass", undefined]));
    } finally {
      await proxy.close();
    }
  });

  it.each(cases)("one that %s is caught by %s", async (broken, check, evidence) => {
    const proxy = await startProxy(reference.url, BROKEN[broken]!());
    try {
      const report = await runConformance({ baseUrl: proxy.url, apiKey: KEY, only: [check] });
      expect(report.results).toHaveLength(1);
      expect(report.results[0]).toMatchObject({ id: check, status: "fail" });
      expect(report.results[0]!.evidence).toMatch(evidence);
    } finally {
      await proxy.close();
    }
  });

  it("an implementation of the interface alone: the live channel and append checks are skipped with the reason", async () => {
    const proxy = await startProxy(reference.url, INTERFACE_ONLY);
    try {
      const report = await runConformance({ baseUrl: proxy.url, apiKey: KEY, only: ["websocket", "append", "create.empty"] });
      const byStatus = (status: string) => report.results.filter((r) => r.status === status);
      expect(byStatus("fail")).toEqual([]);
      expect(byStatus("pass").map((r) => r.id)).toEqual(["create.empty"]);
      const skipped = byStatus("skip");
      expect(skipped.map((r) => r.id)).toEqual(expect.arrayContaining(["paging.concurrent-append", "ext.append", "ws.first-frame", "ws.resume"]));
      expect(skipped.find((r) => r.id === "ws.first-frame")!.reason).toBe("the WebSocket channel is not served: the upgrade request was answered with HTTP 404");
      expect(skipped.find((r) => r.id === "ext.append")!.reason).toMatch(/^POST \/api\/conversations\/\{id\}\/events is not implemented \(POST \/api\/conversations\/[0-9a-f-]+\/events → 404/);
    } finally {
      await proxy.close();
    }
  });
});
