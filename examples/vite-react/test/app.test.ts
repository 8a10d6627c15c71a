/**
 * The built app (dist/, `pnpm build`) in headless Chromium against the acs-mock process: it pages
 * a scenario's history with iterateEvents, then follows the rest live with subscribe, and ends with
 * every event of the conversation, once each, in order, with nothing on the console and no request
 * to any other host; and the same app with the mock in the page through MSW's Service Worker (`?msw`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const distMsw = path.join(root, "dist-msw");
const TYPES: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css" };

let mock: ChildProcess;
let mockUrl: string;
let pages: Server;
let pagesUrl: string;
let browser: Browser;

/**
 * The acs-mock bin, as its package declares it. Resolved from the package, not node_modules/.bin:
 * in a fresh clone pnpm links a workspace package's bin only if its file exists at install time,
 * which it does not before the first build.
 */
function mockBin(): string {
  const manifest = createRequire(import.meta.url).resolve("@acs-toolkit/mock/package.json");
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: Record<string, string> };
  return path.join(path.dirname(manifest), bin["acs-mock"]!);
}

/** Starts the acs-mock bin on a free port; resolves to its URL, read from its banner. */
function startMockProcess(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [mockBin(), "--port", "0", "--log-level", "warn", ...args], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let banner = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      banner += chunk.toString();
      const url = /mock on (http:\/\/\S+)/.exec(banner)?.[1];
      if (url) resolve({ child, url });
    });
    child.once("exit", (code) => reject(new Error(`acs-mock exited with ${code}: ${banner}`)));
    child.once("error", reject);
  });
}

beforeAll(async () => {
  expect(existsSync(path.join(dist, "index.html")), "run pnpm build first").toBe(true);
  ({ child: mock, url: mockUrl } = await startMockProcess(["--scenario", "happy", "--speed", "50"]));
  // dist/ at /, and the `msw` build (dist-msw/, the mock in the page) at /msw/.
  pages = createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://x").pathname.replace(/\/$/, "/index.html");
    const [folder, rest] = pathname.startsWith("/msw/") ? [distMsw, pathname.slice("/msw".length)] : [dist, pathname];
    const file = path.join(folder, rest);
    if (!file.startsWith(folder) || !existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
  pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
  mock?.kill();
});

describe("the example app", () => {
  it("pages the history, then follows the conversation live to its end", async () => {
    const { scenarios } = (await (await fetch(`${mockUrl}/__mock`)).json()) as { scenarios: Array<{ conversation_id: string; events: number; preload: number }> };
    const scenario = scenarios[0]!;
    expect(scenario.preload).toBeLessThan(scenario.events); // something is left to stream

    const tab = await browser.newPage();
    const problems: string[] = [];
    const hosts = new Set<string>();
    tab.on("console", (message) => void (["error", "warning"].includes(message.type()) && problems.push(message.text())));
    tab.on("pageerror", (error) => problems.push(error.message));
    tab.on("request", (request) => void hosts.add(new URL(request.url()).origin));
    await tab.goto(`${pagesUrl}/?api=${encodeURIComponent(mockUrl)}&conversation=${scenario.conversation_id}`);

    await tab.waitForFunction((total) => document.querySelector("[data-testid=count]")?.textContent === String(total), scenario.events, { timeout: 30_000 });
    const shown = await tab.$$eval("[data-testid=events] li", (items) => items.map((item) => item.getAttribute("data-id")));
    const stored = (await (await fetch(`${mockUrl}/api/conversations/${scenario.conversation_id}/events/search?limit=100`)).json()) as { items: Array<{ id: string }> };
    expect(shown).toEqual(stored.items.map((event) => event.id));
    expect(await tab.textContent("[data-testid=phase]")).toBe("open");
    expect(await tab.textContent("section p")).toContain(`(${scenario.preload} paged, ${scenario.events - scenario.preload} live)`);
    expect(await tab.textContent("[data-testid=events]")).toContain("user: ");
    expect(problems).toEqual([]);
    expect([...hosts].sort()).toEqual([mockUrl, pagesUrl].sort());
  });

  it("lists the mock's scenarios when no conversation is given", async () => {
    const tab = await browser.newPage();
    await tab.goto(`${pagesUrl}/?api=${encodeURIComponent(mockUrl)}`);
    await tab.getByRole("button", { name: "happy" }).click();
    await tab.waitForSelector("[data-testid=events] li");
  });

  it("runs against the mock in the page through MSW (?msw), with nothing listening at its API", async () => {
    const api = "http://127.0.0.1:9"; // the discard port: only the Service Worker can answer
    const tab = await browser.newPage();
    const problems: string[] = [];
    tab.on("console", (message) => void (["error", "warning"].includes(message.type()) && problems.push(message.text())));
    tab.on("pageerror", (error) => problems.push(error.message));
    await tab.goto(`${pagesUrl}/msw/?msw&api=${encodeURIComponent(api)}`);
    await tab.getByRole("button", { name: "happy" }).click();
    await tab.waitForFunction(() => document.querySelector("[data-testid=phase]")?.textContent === "open", undefined, { timeout: 30_000 });
    const shown = await tab.$$eval("[data-testid=events] li", (items) => items.map((item) => item.getAttribute("data-id")));
    expect(shown.length).toBeGreaterThan(5);
    // The same conversation as the page's own search through the worker: every event, once, in order.
    const stored = await tab.evaluate(async (base) => {
      const { scenarios } = (await (await fetch(`${base}/__mock`)).json()) as { scenarios: Array<{ conversation_id: string }> };
      const page = await fetch(`${base}/api/conversations/${scenarios[0]!.conversation_id}/events/search?limit=100`, { headers: { "X-Session-API-Key": "mock-session-key" } });
      return ((await page.json()) as { items: Array<{ id: string }> }).items.map((event) => event.id);
    }, api);
    expect(shown).toEqual(stored);
    expect(problems).toEqual([]);
  });

  it("builds without a chunk over Vite's 500 kB warning (the validator is not in it)", () => {
    const assets = readdirSync(path.join(dist, "assets")).filter((file) => file.endsWith(".js"));
    expect(assets.length).toBeGreaterThan(0);
    for (const file of assets) expect(statSync(path.join(dist, "assets", file)).size, file).toBeLessThan(500 * 1024);
  });
});
