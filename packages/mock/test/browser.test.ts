/**
 * A frontend's view: a page on another origin, in headless Chromium, fetches events from the running
 * mock (CORS) and subscribes to the live stream (auth frame, as browsers must), then sends a message
 * and sees the scripted agent's turn arrive. And the mock's API reference: it says it is the mock's,
 * lists every scenario with its conversation id, takes a `Prefer` header on every operation (a
 * failure tried from the page comes back as asked), documents GET /__mock, links to the live
 * channel's reference, and shows no warning or error.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY, startTestMock, type TestMock } from "./support.js";

const PAGE = `<!doctype html><html><body><script>
window.run = async (api, ws, id, key) => {
  const page = await (await fetch(api + "/api/conversations/" + id + "/events/search?limit=100")).json();
  const live = [];
  const socket = new WebSocket(ws + "/sockets/events/" + id + "?resend_all=true");
  socket.onopen = () => socket.send(JSON.stringify({ type: "auth", session_api_key: key }));
  socket.onmessage = (m) => live.push(JSON.parse(m.data));
  const until = (test) => new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => (test() ? resolve() : Date.now() - started > 20000 ? reject(new Error("timed out: " + live.length)) : setTimeout(check, 20));
    check();
  });
  await until(() => live.filter((e) => e.kind && e.key !== "full_state").length >= page.items.length);
  socket.send(JSON.stringify({ role: "user", content: [{ type: "text", text: "hello from the browser" }] }));
  // The agent's reply, then the status update that ends its turn (recorded after it).
  const reply = () => live.findIndex((e) => e.kind === "MessageEvent" && e.source === "agent" && e.llm_message.content[0].text.includes("hello from the browser"));
  await until(() => reply() !== -1 && live.slice(reply() + 1).some((e) => e.kind === "ConversationStateUpdateEvent"));
  socket.close();
  return { fetched: page.items.map((e) => e.id), live: live.map((e) => ({ kind: e.kind, type: e.type, key: e.key, id: e.id, source: e.source })) };
};
</script></body></html>`;

let t: TestMock;
let site: Server;
let siteUrl: string;
let browser: Browser;

beforeAll(async () => {
  t = await startTestMock({ scenarios: ["happy"], speed: "instant" });
  site = createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/html" }).end(PAGE));
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => site?.close(resolve));
  await t?.close();
});

describe("a browser page against the running mock", () => {
  it("fetches events across origins and follows the live stream", async () => {
    const page = await browser.newPage();
    await page.goto(siteUrl);
    const scenario = t.mock.world.scenarios[0]!;
    const result = await page.evaluate(([api, ws, id, key]) => (window as any).run(api, ws, id, key), [t.url, t.mock.wsUrl, scenario.conversationId, KEY] as const);
    expect(result.fetched).toEqual(scenario.events.map((e) => e.id));
    expect(result.live[0]).toMatchObject({ kind: "ConversationStateUpdateEvent", key: "full_state" });
    const events = result.live.filter((e: { kind?: string; key?: string }) => e.kind && e.key !== "full_state");
    expect(events.slice(0, scenario.events.length).map((e: { id: string }) => e.id)).toEqual(scenario.events.map((e) => e.id));
    expect(events.slice(scenario.events.length).map((e: { kind: string }) => e.kind)).toEqual([
      "MessageEvent", "ConversationStateUpdateEvent", "ActionEvent", "ObservationEvent", "MessageEvent", "ConversationStateUpdateEvent",
    ]);
    expect(result.live.filter((e: { type?: string }) => e.type === "error")).toEqual([]);
  });
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
    expect(await (await fetch(`${t.url}/__mock`)).json()).toMatchObject({ scenarios: [{ name: "happy", conversation_id: id }] });
  });

  it("serves the live channel's reference and the AsyncAPI document too", async () => {
    const live = await fetch(`${t.url}/docs/live`);
    expect(live.status).toBe(200);
    expect(await live.text()).toContain("/sockets/events/{conversation_id}");
    expect((await (await fetch(`${t.url}/asyncapi.json`)).json()).asyncapi).toBe("3.0.0");
  });
});
