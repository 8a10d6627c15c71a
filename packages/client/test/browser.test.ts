/**
 * The built standalone browser bundle (dist/browser/acs-client.js) in headless Chromium, under a
 * strict Content-Security-Policy: a page on one origin calls the reference server on another (CORS
 * configured on the server), creates a conversation, pages through its events, uploads and
 * downloads a file, subscribes to live events with the browser's WebSocket (first-frame auth) and
 * sends a message over it, loads the validator on demand (the page maps its name to the validator's
 * dist/index.js with an import map), and tells HTTP errors from network errors, naming
 * `--cors-origin` when the browser refuses a cross-origin answer.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonl, KEY, manyEvents, startReferenceServer, type ReferenceServer } from "./support/server.js";

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/browser");
const validatorDist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../validator/dist");
const importMap = JSON.stringify({ imports: { "@acs-toolkit/validator": "/validator/index.js" } });
// An inline import map is a script for the CSP: allowed by its hash, not by 'unsafe-inline'.
const importMapHash = `'sha256-${createHash("sha256").update(importMap).digest("base64")}'`;
const events = manyEvents(240, "stored");

const app = (baseUrl: string, noCorsUrl: string) => `
import { AbortError, ApiError, NetworkError, createClient, isApiError } from "/client/acs-client.js";

const baseUrl = ${JSON.stringify(baseUrl)};
const client = createClient({ baseUrl, apiKey: ${JSON.stringify(KEY)}, validate: true });
const out = {};
try {
  const { conversation_id: id } = await client.createConversation({ replay_json: ${JSON.stringify(jsonl(events))} });
  out.count = await client.countEvents(id);
  const first = await client.searchEvents(id, { limit: 25 });
  out.firstPage = { items: first.items.length, hasNext: typeof first.next_page_id === "string" };
  out.ids = [];
  for await (const event of client.iterateEvents(id, { limit: 25 })) out.ids.push(event.id);
  // Live events: the browser's own WebSocket, the key in a first auth frame.
  out.live = await new Promise((resolve, reject) => {
    const ids = [];
    const statuses = [];
    const timer = setTimeout(() => reject(new Error("live: " + ids.length + " events, " + statuses.join(","))), 15000);
    const sub = client.subscribe(id, {
      onStatus: (status) => statuses.push(status),
      onEvent(event) {
        ids.push(event.id);
        if (ids.length === ${events.length}) sub.sendMessage("from the browser");
        if (ids.length === ${events.length + 1}) {
          clearTimeout(timer);
          sub.close();
          resolve({ ids: ids.slice(0, -1), last: event.llm_message.content[0].text, source: event.source, statuses });
        }
      },
    });
    sub.done.catch(reject);
  });
  const upload = await client.uploadFiles(id, [new File(["hello from the browser"], "hello.txt", { type: "text/plain" })]);
  out.uploaded = upload.file_urls;
  out.downloaded = await (await client.downloadFile(id, "hello.txt")).text();
  try {
    await client.getConversation("3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9");
  } catch (error) {
    out.notFound = { apiError: error instanceof ApiError && isApiError(error, "getConversation"), status: error.status, detail: error.body.detail };
  }
  try {
    await client.searchEvents(id, { limit: 1000 });
  } catch (error) {
    out.invalid = { status: error.status, loc: error.detail[0].loc };
  }
  try {
    await createClient({ baseUrl, apiKey: "wrong" }).searchEvents(id);
  } catch (error) {
    out.unauthorized = { status: error.status, body: error.body };
  }
  try {
    await createClient({ baseUrl: "http://127.0.0.1:1", apiKey: "k" }).getHealth();
  } catch (error) {
    out.unreachable = { networkError: error instanceof NetworkError, name: error.name };
  }
  try {
    // A server that answers but allows no other origin: the browser refuses the answer (CORS).
    await createClient({ baseUrl: ${JSON.stringify(noCorsUrl)}, apiKey: "k" }).getHealth();
  } catch (error) {
    out.corsRefused = { networkError: error instanceof NetworkError, message: error.message };
  }
  const controller = new AbortController();
  controller.abort();
  try {
    await client.getHealth({ signal: controller.signal });
  } catch (error) {
    out.aborted = error instanceof AbortError;
  }
} catch (error) {
  out.error = String(error && error.stack || error);
}
window.results = out;
`;

let ref: ReferenceServer;
let pages: Server;
let noCors: Server;
let browser: Browser;
let origin: string;
let noCorsUrl = "";
const consoleErrors: string[] = [];
const served: string[] = [];

beforeAll(async () => {
  let script = "";
  pages = createServer((req, res) => {
    const url = req.url ?? "/";
    served.push(url);
    const send = (type: string, body: string) => {
      res.writeHead(200, {
        "content-type": type,
        // No eval, no inline script; the page may only talk to the reference server (and to a
        // port where nothing listens, for the network error).
        "content-security-policy": `default-src 'none'; script-src 'self' ${importMapHash}; connect-src ${ref.url} ${ref.url.replace("http", "ws")} http://127.0.0.1:1 ${noCorsUrl}`,
      });
      res.end(body);
    };
    if (url === "/") {
      return send("text/html", `<!doctype html><meta charset="utf-8"><title>client</title><script type="importmap">${importMap}</script><script type="module" src="/app.js"></script>`);
    }
    if (url === "/app.js") return send("text/javascript", script);
    const file = /^\/client\/([\w.-]+\.js)$/.exec(url)?.[1];
    if (file) return send("text/javascript", readFileSync(path.join(dist, file), "utf8"));
    // The validator's package as published: its entry, its chunk and the compiled validators.
    const validatorFile = /^\/validator\/([\w.-]+\.js)$/.exec(url)?.[1];
    if (validatorFile && existsSync(path.join(validatorDist, validatorFile))) return send("text/javascript", readFileSync(path.join(validatorDist, validatorFile), "utf8"));
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  ref = await startReferenceServer(["--cors-origin", origin]);
  // A reference server started without --cors-origin for this page would answer like this: no CORS headers.
  noCors = createServer((_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok","store":"sqlite"}'));
  await new Promise<void>((resolve) => noCors.listen(0, "127.0.0.1", resolve));
  noCorsUrl = `http://127.0.0.1:${(noCors.address() as AddressInfo).port}`;
  script = app(ref.url, noCorsUrl);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
});

afterAll(async () => {
  await browser?.close();
  await ref?.close();
  await new Promise((resolve) => pages?.close(resolve));
  await new Promise((resolve) => noCors?.close(resolve));
});

describe("in headless Chromium", () => {
  it("the built bundle calls the server cross-origin and pages through its events", async () => {
    const tab = await browser.newPage();
    tab.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    await tab.goto(origin);
    await tab.waitForFunction(() => (window as unknown as { results?: unknown }).results !== undefined, null, { timeout: 20_000 });
    const results = (await tab.evaluate(() => (window as unknown as { results: unknown }).results)) as Record<string, any>;
    expect(results.error).toBeUndefined();
    expect(results.count).toBe(events.length);
    expect(results.firstPage).toEqual({ items: 25, hasNext: true });
    expect(results.ids).toEqual(events.map((event) => event.id));
    expect(results.live).toEqual({ ids: events.map((event) => event.id), last: "from the browser", source: "user", statuses: ["open", "closed"] });
    await expect.poll(() => ref.server.live.connections).toBe(0);
    expect(results.uploaded).toEqual([expect.stringMatching(/\/files\/hello\.txt$/)]);
    expect(results.downloaded).toBe("hello from the browser");
    expect(results.notFound).toEqual({ apiError: true, status: 404, detail: "Conversation not found: 3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9" });
    expect(results.invalid).toEqual({ status: 422, loc: ["query", "limit"] });
    expect(results.unauthorized).toEqual({ status: 401, body: { detail: "Unauthorized" } });
    expect(results.unreachable).toEqual({ networkError: true, name: "NetworkError" });
    expect(results.corsRefused).toEqual({
      networkError: true,
      message:
        `getHealth: request failed: Failed to fetch (the browser does not say why: ${noCorsUrl} may be unreachable, or it may not allow ` +
        `requests from this page's origin under CORS: start the reference server with --cors-origin ${origin})`,
    });
    expect(results.aborted).toBe(true);
    // validate: true loaded the validator, by its name through the import map, only then.
    expect(served.filter((url) => url.startsWith("/client/"))).toEqual(["/client/acs-client.js"]);
    expect(served.filter((url) => url.startsWith("/validator/"))).toEqual(expect.arrayContaining(["/validator/index.js", "/validator/validators-fast.js"]));
    // The only console errors are the failed requests the page made on purpose.
    expect(consoleErrors.filter((text) => !/Failed to load resource|ERR_CONNECTION_REFUSED|status of (401|404|422)|CORS policy/.test(text))).toEqual([]);
  });
});
