/**
 * The mock's API reference in headless Chromium: the page says it is the mock's, lists every
 * scenario with its conversation id, takes a `Prefer` header on every operation (a failure tried
 * from the page comes back as asked), documents GET /__mock, links to the live channel's reference,
 * and shows no warning or error.
 */
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMock, type TestMock } from "./support.js";

let t: TestMock;
let browser: Browser;

beforeAll(async () => {
  t = await startTestMock({ scenarios: ["happy", "errors"] });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("the mock's /docs", () => {
  it("lists the scenarios, Prefer and /__mock, with no warning or error", async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("console", (message) => void (["error", "warning"].includes(message.type()) && problems.push(message.text())));
    page.on("response", (response) => void (response.status() >= 400 && problems.push(`${response.status()} ${response.url()}`)));
    await page.goto(`${t.url}/docs`);
    await page.waitForSelector(".opblock-summary-path", { timeout: 15_000 });
    const info = (await page.locator(".information-container").textContent()) ?? "";
    expect(info).toContain("mock (acs-mock)");
    for (const scenario of t.mock.world.scenarios) {
      expect(info).toContain(scenario.name);
      expect(info).toContain(scenario.conversationId);
    }
    expect(info).toContain("Prefer");
    expect(info).toContain("GET /__mock");
    const paths = await page.$$eval(".opblock-summary-path", (nodes) => nodes.map((n) => n.getAttribute("data-path")));
    expect(paths).toContain("/__mock");
    expect(await page.locator("text=/^Warning$/").count()).toBe(0);
    expect(await page.locator("nav.docs-nav a[href='/docs/live']").count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it("documents Prefer on every operation, and it works from the page's document", async () => {
    const document = (await (await fetch(`${t.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>> };
    for (const [path, item] of Object.entries(document.paths)) {
      if (path === "/__mock") continue;
      for (const [method, operation] of Object.entries(item)) expect(operation.parameters?.some((p) => p.in === "header" && p.name === "Prefer"), `${method} ${path}`).toBe(true);
    }
    const id = t.mock.world.scenarios[0]!.conversationId;
    const failed = await fetch(`${t.url}/api/conversations/${id}/events/search`, { headers: { Prefer: "code=500" } });
    expect(failed.status).toBe(500);
    expect(await (await fetch(`${t.url}/__mock`)).json()).toMatchObject({ scenarios: [{ name: "happy", conversation_id: id }, { name: "errors" }] });
  });

  it("serves the live channel's reference and the AsyncAPI document too", async () => {
    const live = await fetch(`${t.url}/docs/live`);
    expect(live.status).toBe(200);
    expect(await live.text()).toContain("/sockets/events/{conversation_id}");
    expect((await (await fetch(`${t.url}/asyncapi.json`)).json()).asyncapi).toBe("3.0.0");
  });
});
