/**
 * The built ESM entry in headless Chromium under a strict Content-Security-Policy (no eval, no
 * inline script): importing it compiles nothing, and it validates.
 */
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { example } from "./support.js";

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist");
const CSP = "default-src 'none'; script-src 'self'; connect-src 'self'";

const page = `<!doctype html><meta charset="utf-8"><title>validator</title><script type="module" src="/app.js"></script>`;
const app = (events: unknown[]) => `
import { validateEvent, formatIssue } from "/validator/index.js";
const events = ${JSON.stringify(events)};
// Control: the policy is in force, so any eval-based validator would have failed here.
try { new Function("return 1")(); window.evalBlocked = false; } catch { window.evalBlocked = true; }
window.results = events.map((e) => { const r = validateEvent(e); return { ok: r.ok, errors: r.errors.map(formatIssue) }; });
`;

let server: Server;
let browser: Browser;
let baseUrl: string;
const violations: string[] = [];

beforeAll(async () => {
  const bad = example("ActionEvent", "BrowserClickAction");
  bad.action.index = -1;
  const script = app([example("MessageEvent"), bad]);
  server = createServer((req, res) => {
    const url = req.url ?? "/";
    const send = (type: string, body: string) => {
      res.writeHead(200, { "content-type": type, "content-security-policy": CSP });
      res.end(body);
    };
    if (url === "/") return send("text/html", page);
    if (url === "/app.js") return send("text/javascript", script);
    // The package's dist/ as is: index.js imports its chunk and the compiled validators beside it.
    const file = /^\/validator\/([\w.-]+\.js)$/.exec(url)?.[1];
    if (file && existsSync(path.join(dist, file))) return send("text/javascript", readFileSync(path.join(dist, file), "utf8"));
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe("in a browser under a strict CSP", () => {
  it("imports and validates", async () => {
    const tab = await browser.newPage();
    tab.on("console", (message) => {
      if (message.type() === "error") violations.push(message.text());
    });
    await tab.goto(baseUrl);
    await tab.waitForFunction(() => (window as unknown as { results?: unknown }).results !== undefined, null, { timeout: 10_000 });
    const results = await tab.evaluate(() => (window as unknown as { results: unknown }).results);
    expect(results).toEqual([
      { ok: true, errors: [] },
      { ok: false, errors: ["/action/index: must be >= 0, got -1"] },
    ]);
    expect(await tab.evaluate(() => (window as unknown as { evalBlocked: boolean }).evalBlocked)).toBe(true);
    // The only console error allowed is the control's own refused eval.
    expect(violations.filter((v) => !v.includes("unsafe-eval"))).toEqual([]);
  });
});
