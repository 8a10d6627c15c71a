/**
 * /docs and /docs/live in a browser: the HTTP reference renders the bundled spec from local assets
 * only, with no warning or error on the page; the live channel's reference is one click away, renders
 * the AsyncAPI document (channel, operations, messages, every schema a link resolves to); each
 * operation shows its own examples.
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asyncapiDocument } from "@acs-toolkit/schema/documents";
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

/** A page that records what a person would notice: requests to other hosts, console errors, failed loads. */
async function open(url: string): Promise<{ page: Page; foreign: string[]; problems: string[] }> {
  const page = await browser.newPage();
  const foreign: string[] = [];
  const problems: string[] = [];
  page.on("request", (request) => {
    if (!request.url().startsWith(t.url) && !request.url().startsWith("data:")) foreign.push(request.url());
  });
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
  });
  await page.goto(url);
  return { page, foreign, problems };
}

describe("GET /docs in a browser", () => {
  it("renders every operation with no warning or error, loading nothing from another host", async () => {
    const { page, foreign, problems } = await open(`${t.url}/docs`);
    await page.waitForSelector(".opblock-summary-path", { timeout: 15_000 });
    const paths = await page.$$eval(".opblock-summary-path", (nodes) => nodes.map((n) => n.getAttribute("data-path")));
    expect(paths).toEqual(
      expect.arrayContaining([
        "/api/conversations/{conversation_id}/events/search",
        "/api/settings",
        "/api/conversations",
        "/api/add-git-providers",
        "/api/conversations/{conversation_id}/upload-files",
        "/asyncapi.json",
      ]),
    );
    // Swagger UI's own warnings and errors (an unsupported jsonSchemaDialect, a parser error) are boxes on the page.
    expect(await page.locator(".swagger-ui .errors-wrapper, .swagger-ui .version-pragma, .swagger-ui .loading-container .errors").count()).toBe(0);
    expect(await page.locator("text=/^Warning$/").count()).toBe(0);
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
  });

  it("shows createConversation's own 413 and 422 examples, not another operation's", async () => {
    const { page } = await open(`${t.url}/docs#/account/createConversation`);
    const operation = page.locator("#operations-account-createConversation");
    await operation.locator(".responses-table").first().waitFor({ timeout: 15_000 });
    const example = async (status: string) => (await operation.locator(`tr.response[data-code="${status}"] .microlight, tr.response[data-code="${status}"] pre`).first().textContent()) ?? "";
    const unprocessable = await example("422");
    expect(unprocessable).toContain("initial_user_msg");
    expect(unprocessable).not.toContain("limit");
    const tooLarge = await example("413");
    expect(tooLarge).toContain("larger than the server accepts");
    expect(tooLarge).not.toContain("Conversation not found");
  });

  it("links to the live channel's reference, which renders the AsyncAPI document offline", async () => {
    const { page, foreign, problems } = await open(`${t.url}/docs`);
    await page.click("nav.docs-nav >> text=Live events (WebSocket)");
    await page.waitForURL(`${t.url}/docs/live`);
    // The live channel first, then the bash-events socket.
    const channel = page.locator("section.channel").first();
    expect(await channel.locator("h2").textContent()).toContain("/sockets/events/{conversation_id}");
    expect(await channel.locator(".address").textContent()).toBe(`This server: ws://${new URL(t.url).host}/sockets/events/{conversation_id}`);
    expect(await channel.textContent()).toContain("4429");
    expect(await page.locator("section.channel").nth(1).locator("h2").textContent()).toContain("/sockets/bash-events");
    // Every operation and message of the document, and a section for every schema.
    const operations = Object.keys(asyncapiDocument.operations as object);
    for (const id of operations) expect(await page.locator(`#operation-${id}`).count(), id).toBe(1);
    const schemas = Object.keys((asyncapiDocument.components as { schemas: object }).schemas);
    expect(await page.locator("details.schema").count()).toBe(schemas.length);
    // Every in-page link lands on something.
    const targets = await page.$$eval("a[href^='#']", (links) => links.map((a) => a.getAttribute("href")!.slice(1)));
    expect(targets.length).toBeGreaterThan(100);
    const missing = await page.evaluate((ids) => ids.filter((id) => !document.getElementById(id)), [...new Set(targets)]);
    expect(missing).toEqual([]);
    // A schema link opens its section.
    await page.click("#message-Event a[href='#schema-Event']");
    expect(await page.locator("#schema-Event").evaluate((element) => (element as HTMLDetailsElement).open || location.hash === "#schema-Event")).toBe(true);
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
  });

  it("serves the AsyncAPI document at /asyncapi.json", async () => {
    const response = await fetch(`${t.url}/asyncapi.json`);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(asyncapiDocument);
  });
});
