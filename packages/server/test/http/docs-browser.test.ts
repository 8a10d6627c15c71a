/** /docs in headless Chromium: the API reference renders the bundled spec from local assets only. */
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/harness.js";

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  t = await startTestServer();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("GET /docs in a browser", () => {
  it("renders every operation, loading nothing from another host", async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(t.url)) foreign.push(request.url());
    });
    await page.goto(`${t.url}/docs`);
    await page.waitForSelector(".opblock-summary-path", { timeout: 15_000 });
    const paths = await page.$$eval(".opblock-summary-path", (nodes) => nodes.map((n) => n.getAttribute("data-path")));
    expect(paths).toEqual(
      expect.arrayContaining([
        "/api/conversations/{conversation_id}/events/search",
        "/api/settings",
        "/api/conversations",
        "/api/add-git-providers",
        "/api/conversations/{conversation_id}/upload-files",
      ]),
    );
    expect(foreign).toEqual([]);
  });
});
