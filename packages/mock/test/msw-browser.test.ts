/**
 * `@acs-toolkit/mock/msw-browser` in a real browser: bundled by esbuild for the browser platform
 * (from the source and from the built package by name), it reaches no Node built-in and no native
 * module; in headless Chromium, under MSW's Service Worker (`mockServiceWorker.js` served by the
 * page's site) and MSW's WebSocket API, a page calls `http://localhost:4010`, where nothing listens:
 * only the handlers can answer. They answer what the running Node mock answers (same bodies, same
 * statuses, same 422 `loc`s, every response valid under the spec), keep state, and serve the live
 * channel: history, the scripted agent's turn for a message, resume, the spec's close codes.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";
import { bundleForBrowser } from "@acs-toolkit/test-kit/browser-bundle";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY, operationOf, specValidators, startTestMock, type TestMock } from "./support.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const BASE = "http://localhost:4010";
/** What the page's script does: build the handlers and start MSW's worker with them. */
const pageScript = (entry: string) => `
import { setupWorker } from "msw/browser";
import { createBrowserMockHandlers } from ${JSON.stringify(entry)};
window.startMock = async (options) => {
  const mock = await createBrowserMockHandlers(options);
  await setupWorker(...mock.handlers).start({ serviceWorker: { url: "/mockServiceWorker.js" }, onUnhandledRequest: "bypass", quiet: true });
  window.mock = mock;
  return mock.world.scenarios.map((s) => s.conversationId);
};`;
const inputs: Record<string, BuildOptions> = {
  source: { stdin: { contents: pageScript("./src/msw-browser.ts"), resolveDir: packageDir, loader: "ts" } },
  // The package's own name: its `exports` map, dist/ (built before the tests run).
  "built package": { stdin: { contents: pageScript("@acs-toolkit/mock/msw-browser"), resolveDir: packageDir, loader: "ts" } },
};


const bundles: Record<string, { code: string; nodeImports: string[] }> = {};
/** The README's browser example, as the page's module (top-level await: an ES module). */
let readmeExample: string;
let site: Server;
let siteUrl: string;
let browser: Browser;
let node: TestMock;

beforeAll(async () => {
  for (const [name, input] of Object.entries(inputs)) bundles[name] = await bundleForBrowser(input, "mswPage");
  const example = await build({ entryPoints: [fileURLToPath(new URL("./readme-browser-example.ts", import.meta.url))], bundle: true, platform: "browser", format: "esm", write: false, logLevel: "silent", alias: { "@acs-toolkit/mock/msw-browser": fileURLToPath(new URL("../src/msw-browser.ts", import.meta.url)) } });
  readmeExample = new TextDecoder().decode(example.outputFiles[0]!.contents);
  const worker = readFileSync(createRequire(import.meta.url).resolve("msw/mockServiceWorker.js"));
  site = createServer((req, res) => {
    const [path, query] = (req.url ?? "/").split("?");
    if (path === "/mockServiceWorker.js") return void res.writeHead(200, { "Content-Type": "text/javascript" }).end(worker);
    if (path === "/page.js") return void res.writeHead(200, { "Content-Type": "text/javascript" }).end(bundles[new URLSearchParams(query).get("from") ?? "source"]!.code);
    if (path === "/favicon.ico") return void res.writeHead(204).end();
    if (path === "/readme-example.js") return void res.writeHead(200, { "Content-Type": "text/javascript" }).end(readmeExample);
    if (path === "/readme") return void res.writeHead(200, { "Content-Type": "text/html" }).end('<!doctype html><html><body><script type="module" src="/readme-example.js"></script></body></html>');
    if (path === "/") return void res.writeHead(200, { "Content-Type": "text/html" }).end(`<!doctype html><html><body><script src="/page.js?${query ?? ""}"></script></body></html>`);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
  // The reference: the Node mock, same seed and scenarios, everything stored at start.
  node = await startTestMock({ scenarios: ["happy", "long"], speed: "instant" });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => site?.close(resolve));
  await node?.close();
});

/** A page on the site with the mock's worker started (from the source, or the built package). */
async function mockPage(from: string, options: Record<string, unknown> = {}): Promise<{ page: Page; ids: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  // (Chromium logs every 4xx answer as "Failed to load resource": asked for here, not a fault.)
  page.on("console", (message) => void (message.type() === "error" && !message.text().startsWith("Failed to load resource") && errors.push(message.text())));
  await page.goto(`${siteUrl}/?from=${encodeURIComponent(from)}`);
  const ids = await page.evaluate((o) => (window as any).startMock(o), { baseUrl: BASE, scenarios: ["happy", "long"], ...options });
  return { page, ids, errors };
}

interface Answer {
  status: number;
  body: any;
}

/** Requests made from the page (MSW answers them). */
function fetchAll(page: Page, requests: Array<[method: string, path: string, init?: { key?: boolean; json?: unknown; text?: string }]>): Promise<Answer[]> {
  return page.evaluate(
    async ([base, key, list]) =>
      Promise.all(
        list.map(async ([method, path, init]) => {
          const headers: Record<string, string> = {};
          if (init?.key) headers["X-Session-API-Key"] = key;
          let body: string | undefined;
          if (init?.json !== undefined || init?.text !== undefined) {
            headers["Content-Type"] = "application/json";
            body = init.text ?? JSON.stringify(init.json);
          }
          const response = await fetch(base + path, { method, headers, body });
          const text = await response.text();
          return { status: response.status, body: text ? JSON.parse(text) : null };
        }),
      ),
    [BASE, KEY, requests] as const,
  );
}

const normalize = (answer: Answer) => {
  const body = answer.body;
  if (answer.status === 422) return { status: 422, locs: (body.detail as Array<{ loc: unknown[] }>).map((d) => JSON.stringify(d.loc)).sort() };
  // Cursors are opaque and each mock signs its own; what matters is whether there is a next page.
  if (body && typeof body === "object" && "next_page_id" in body) return { status: answer.status, body: { ...body, next_page_id: body.next_page_id !== null } };
  return answer;
};

describe("@acs-toolkit/mock/msw-browser", () => {
  it.each(Object.keys(inputs))("bundles (%s) for the browser platform without a Node built-in or a native module", (name) => {
    expect(bundles[name]!.nodeImports).toEqual([]);
  });

  it.each(Object.keys(inputs))("answers in Chromium (%s) what the Node mock answers, valid under the spec", async (from) => {
    const { page, ids, errors } = await mockPage(from);
    expect(ids).toEqual(node.mock.world.scenarios.map((s) => s.conversationId));
    const [happy, long] = ids as [string, string];
    const missing = "00000000-0000-4000-8000-000000000000";
    const requests: Array<[string, string, { key?: boolean; json?: unknown; text?: string }?]> = [
      ["GET", `/api/conversations/${happy}/events/search`],
      ["GET", `/api/conversations/${long}/events/search?limit=7&sort_order=TIMESTAMP_DESC`],
      ["GET", `/api/conversations/${long}/events/search?kind=ActionEvent&source=agent&limit=5`],
      ["GET", `/api/conversations/${long}/events/search?body=test&limit=3`],
      ["GET", `/api/conversations/${long}/events/search?timestamp__gte=2026-02-05T11:25:00&timestamp__lt=2026-02-05T11:40:00&limit=4`],
      ["GET", `/api/conversations/${long}/events/count`],
      ["GET", `/api/conversations/${long}/events/count?kind=openhands.sdk.event.llm_convertible.action.ActionEvent`],
      ["GET", `/api/conversations/${happy}/events/count?source=user`],
      ["GET", `/api/conversations/${happy}`, { key: true }],
      ["GET", "/__mock"],
      // Bad input and failures
      ["GET", `/api/conversations/${happy}/events/search?limit=0`],
      ["GET", `/api/conversations/${happy}/events/search?limit=101&sort_order=NEWEST`],
      ["GET", `/api/conversations/${happy}/events/search?page_id=not-a-cursor`],
      ["GET", `/api/conversations/${happy}/events/count?timestamp__gte=yesterday&source=robot`],
      ["GET", `/api/conversations/not-a-uuid/events/search`],
      ["GET", `/api/conversations/${missing}/events/search`],
      ["GET", `/api/conversations/${happy}`],
      ["POST", `/api/conversations/${happy}/events`, { json: { role: "user", content: [{ type: "text", text: "hi" }] } }],
      ["POST", `/api/conversations/${happy}/events`, { key: true, json: { role: "user", content: [{ type: "text" }] } }],
      ["POST", `/api/conversations/${missing}/events`, { key: true, json: { role: "user", content: [{ type: "text", text: "hi" }] } }],
      ["POST", "/api/conversations", { key: true, json: { conversation_id: happy } }],
      ["POST", "/api/conversations", { key: true, json: { initial_user_msg: 42 } }],
    ];
    const fromBrowser = await fetchAll(page, requests);
    for (const [index, [method, path, init]] of requests.entries()) {
      const answer = fromBrowser[index]!;
      const pathname = path.split("?")[0]!;
      const operationId = operationOf(method, pathname);
      if (operationId) expect(specValidators.response(operationId, answer.status, answer.body), `${method} ${path}: ${JSON.stringify(answer.body)}`).toEqual([]);
      const reply = await node.call(method, path, { key: init?.key ? KEY : null, ...(init?.json !== undefined && { json: init.json }) });
      const expected = normalize({ status: reply.status, body: reply.body });
      const got = normalize(answer);
      if (path.includes("/__mock")) expect((got as Answer).body, "GET /__mock").toEqual({ ...(expected as Answer).body, speed: "instant" });
      else if (method === "GET" && pathname === `/api/conversations/${happy}` && answer.status === 200) {
        const { created_at: _c, updated_at: _u, ...state } = answer.body;
        const { created_at: _nc, updated_at: _nu, ...nodeState } = reply.body as Record<string, unknown>;
        expect(state, `${method} ${path}`).toEqual(nodeState);
      } else expect(got, `${method} ${path}\nbrowser: ${JSON.stringify(answer.body)}\nnode: ${reply.text}`).toEqual(expected);
    }
    // Paging: every event of the long scenario, 100 a page, by next_page_id.
    const paged = await page.evaluate(async ([base, id]) => {
      const all: string[] = [];
      for (let cursor: string | null = ""; cursor !== null; ) {
        const page: { items: Array<{ id: string }>; next_page_id: string | null } = await (await fetch(`${base}/api/conversations/${id}/events/search${cursor ? `?page_id=${encodeURIComponent(cursor)}` : ""}`)).json();
        all.push(...page.items.map((e) => e.id));
        cursor = page.next_page_id;
      }
      return all;
    }, [BASE, long] as const);
    expect(paged).toEqual(node.mock.world.scenarios[1]!.events.map((e) => e.id));
    expect(errors).toEqual([]);
    await page.close();
  });

  it("stores settings and reads them back masked, as the Node mock does", async () => {
    const { page, errors } = await mockPage("source");
    const steps: Array<[string, string, { key?: boolean; json?: unknown }?]> = [
      ["GET", "/api/settings", { key: true }],
      ["POST", "/api/settings", { json: { llm_model: "x" } }],
      ["POST", "/api/settings", { key: true, json: { llm_model: 42, confirmation_mode: "yes", max_iterations: "ten" } }],
      ["POST", "/api/settings", { key: true, json: { llm_model: "anthropic/claude", llm_api_key: "sk-secret", max_iterations: 50, secrets_store: { provider_tokens: { github: { token: "ghp_x", host: "github.com" } } } } }],
      ["GET", "/api/settings", { key: true }],
      // Absent: defaults, but llm_model and llm_api_key are kept (x-keep-when-null); "" clears the search key.
      ["POST", "/api/settings", { key: true, json: { language: "fr", search_api_key: "" } }],
      ["GET", "/api/settings", { key: true }],
    ];
    for (const [method, path, init] of steps) {
      const [answer] = await fetchAll(page, [[method, path, init]]);
      const operationId = operationOf(method, path)!;
      expect(specValidators.response(operationId, answer!.status, answer!.body), `${method} ${path}: ${JSON.stringify(answer!.body)}`).toEqual([]);
      const reply = await node.call(method, path, { key: init?.key ? KEY : null, ...(init?.json !== undefined && { json: init.json }) });
      expect(normalize(answer!), `${method} ${JSON.stringify(init?.json)}\nbrowser: ${JSON.stringify(answer!.body)}\nnode: ${reply.text}`).toEqual(normalize({ status: reply.status, body: reply.body }));
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it("keeps state: a created conversation is stored, searched, and the scripted agent answers its message", async () => {
    const { page, errors } = await mockPage("source");
    const result = await page.evaluate(async ([base, key]) => {
      const headers = { "X-Session-API-Key": key, "Content-Type": "application/json" };
      const created = await (await fetch(`${base}/api/conversations`, { method: "POST", headers, body: JSON.stringify({ initial_user_msg: "hello from the page" }) })).json();
      const kinds = async () => (await (await fetch(`${base}/api/conversations/${created.conversation_id}/events/search`)).json()).items.map((e: { kind: string; source: string }) => `${e.source} ${e.kind}`);
      const started = Date.now();
      while (!(await kinds()).includes("agent MessageEvent") && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 50));
      const info = await (await fetch(`${base}/api/conversations/${created.conversation_id}`, { headers })).json();
      const turn = await kinds();
      const sent = await fetch(`${base}/api/conversations/${created.conversation_id}/events`, { method: "POST", headers, body: JSON.stringify({ role: "user", content: [{ type: "text", text: "only recorded" }] }) });
      return { created, kinds: turn, after: await kinds(), info, sent: { status: sent.status, body: await sent.json() } };
    }, [BASE, KEY] as const);
    expect(specValidators.response("createConversation", 200, result.created)).toEqual([]);
    expect(result.created).toMatchObject({ status: "ok", conversation_status: "STARTING" });
    expect(result.kinds).toEqual([
      "user MessageEvent", "environment ConversationStateUpdateEvent", "environment ConversationStateUpdateEvent", "agent ActionEvent", "environment ObservationEvent", "agent MessageEvent", "environment ConversationStateUpdateEvent",
    ]);
    expect(specValidators.response("getConversation", 200, result.info)).toEqual([]);
    expect(result.info).toMatchObject({ conversation_id: result.created.conversation_id, status: "RUNNING", execution_status: "finished", event_count: 7 });
    expect(result.sent.status).toBe(200);
    // Without run: true it is only recorded, as on the agent server.
    expect(result.after).toEqual([...result.kinds, "user MessageEvent"]);
    expect(result.sent.body).toMatchObject({ kind: "MessageEvent", source: "user", llm_message: { role: "user", content: [{ type: "text", text: "only recorded" }] } });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("creates a conversation from replay_json and replays it with resend_mode=since, as the server's core does", async () => {
    const { page, errors } = await mockPage("source");
    const recording = node.mock.world.scenarios[0]!.events.slice(0, 4);
    const result = await page.evaluate(async ([base, key, replay, since]) => {
      const headers = { "X-Session-API-Key": key, "Content-Type": "application/json" };
      const created = await (await fetch(`${base}/api/conversations`, { method: "POST", headers, body: JSON.stringify({ replay_json: JSON.stringify(replay) }) })).json();
      const bad = await fetch(`${base}/api/conversations`, { method: "POST", headers, body: JSON.stringify({ replay_json: "[{}]" }) });
      const items = (await (await fetch(`${base}/api/conversations/${created.conversation_id}/events/search`)).json()).items.map((e: { id: string }) => e.id);
      const socket = new WebSocket(`${base.replace(/^http/, "ws")}/sockets/events/${created.conversation_id}?resend_mode=since&after_timestamp=${encodeURIComponent(since)}`);
      const frames: Array<{ id: string; key?: string }> = [];
      socket.onmessage = (message) => frames.push(JSON.parse(message.data as string));
      const started = Date.now();
      while (frames.length < 3 && Date.now() - started < 5_000) await new Promise((resolve) => setTimeout(resolve, 20));
      socket.close();
      return { created, bad: { status: bad.status, body: await bad.json() }, items, frames: frames.map((f) => (f.key === "full_state" ? f.key : f.id)) };
    }, [BASE, KEY, recording, recording[2]!.timestamp] as const);
    expect(result.created).toMatchObject({ status: "ok", conversation_status: "STARTING" });
    // The recording, then what the scripted agent recorded since (its status change).
    expect(result.items.slice(0, recording.length)).toEqual(recording.map((e) => e.id));
    expect(result.bad.status).toBe(422);
    expect(result.bad.body.detail[0].loc.slice(0, 3)).toEqual(["body", "replay_json", 0]);
    expect(result.frames.slice(0, 3)).toEqual(["full_state", recording[2]!.id, recording[3]!.id]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("serves the live channel through MSW's WebSocket API: history, the agent's turn, resume, close codes, error frames", async () => {
    const { page, ids, errors } = await mockPage("built package", { scenarios: ["happy"] });
    const result = await page.evaluate(async ([base, id, key]) => {
      const ws = base.replace(/^http/, "ws");
      const connect = (query: string) => {
        const frames: any[] = [];
        const socket = new WebSocket(`${ws}/sockets/events/${id}${query}`);
        socket.onmessage = (m) => frames.push(JSON.parse(m.data));
        const closed = new Promise<{ code: number; reason: string }>((resolve) => (socket.onclose = (e) => resolve({ code: e.code, reason: e.reason })));
        const opened = new Promise((resolve) => (socket.onopen = resolve));
        return { socket, frames, closed, opened };
      };
      const until = async (test: () => boolean) => {
        const started = Date.now();
        while (!test()) {
          if (Date.now() - started > 10_000) throw new Error("timed out");
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const events = (frames: any[]) => frames.filter((f) => f.kind && f.key !== "full_state" && f.kind !== "ServerErrorEvent");

      const main = connect("?resend_all=true");
      await main.opened;
      await until(() => main.frames.length > 1);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const history = events(main.frames).map((e) => e.id);
      main.socket.send(JSON.stringify({ role: "user", content: [{ type: "text", text: "before auth" }] }));
      main.socket.send("{not json");
      await until(() => main.frames.filter((f) => f.kind === "ServerErrorEvent").length === 2);
      main.socket.send(JSON.stringify({ type: "auth", session_api_key: key }));
      main.socket.send(JSON.stringify({ role: "user", content: [{ type: "text" }] }));
      main.socket.send(JSON.stringify({ role: "user", content: [{ type: "text", text: "hello from the browser" }] }));
      const reply = () => main.frames.findIndex((e) => e.kind === "MessageEvent" && e.source === "agent" && e.llm_message.content[0].text.includes("hello from the browser"));
      await until(() => reply() !== -1 && main.frames.slice(reply() + 1).some((e) => e.kind === "ConversationStateUpdateEvent"));
      const all = events(main.frames);
      main.socket.close();

      const resumed = connect(`?after_id=${history[history.length - 1]}`);
      await until(() => events(resumed.frames).length >= all.length - history.length);
      resumed.socket.close();
      const unknown = connect("").socket.url.replace(id, "00000000-0000-4000-8000-000000000000");
      const notFound = await new Promise<number>((resolve) => (new WebSocket(unknown).onclose = (e) => resolve(e.code)));
      const badAfter = await connect("?after_id=nope").closed;
      const wrongKey = await connect("?session_api_key=wrong").closed;
      return {
        first: main.frames[0],
        history,
        turn: all.slice(history.length).map((e) => `${e.source} ${e.kind}`),
        errors: main.frames.filter((f) => f.kind === "ServerErrorEvent").map((f) => `${f.code} ${f.detail}`),
        resumed: events(resumed.frames).map((e) => e.id),
        allIds: all.map((e) => e.id),
        closes: { notFound, badAfter, wrongKey },
      };
    }, [BASE, ids[0]!, KEY] as const);
    const happy = node.mock.world.scenarios[0]!;
    expect(result.first).toMatchObject({ kind: "ConversationStateUpdateEvent", key: "full_state", value: { conversation_id: happy.conversationId, event_count: happy.events.length } });
    expect(result.history).toEqual(happy.events.map((e) => e.id));
    expect(result.turn).toEqual([
      "user MessageEvent", "environment ConversationStateUpdateEvent", "agent ActionEvent", "environment ObservationEvent", "agent MessageEvent", "environment ConversationStateUpdateEvent",
    ]);
    expect(result.errors).toEqual([
      "Unauthorized message: send an auth frame with a session API key before sending messages",
      expect.stringMatching(/^JSONDecodeError message: /),
      expect.stringMatching(/^ValidationError message\.content\.0/),
    ]);
    expect(result.resumed).toEqual(result.allIds.slice(result.history.length));
    expect(result.closes).toEqual({ notFound: 4004, badAfter: { code: 4400, reason: "after_id nope is not an event of this conversation" }, wrongKey: { code: 4001, reason: "Unauthorized" } });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("runs the README's browser example in Chromium, and it prints what its comments say", async () => {
    const page = await browser.newPage();
    const logs: string[] = [];
    const errors: string[] = [];
    // The example's own lines (MSW logs each request and frame too: the example does not start it quietly).
    const own = /^(SystemPromptEvent MessageEvent|[A-Za-z]+Event (environment|user|agent))$/;
    page.on("console", (message) => void (message.type() === "log" ? own.test(message.text()) && logs.push(message.text()) : message.type() === "error" && errors.push(message.text())));
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${siteUrl}/readme`);
    const turn = ["ConversationStateUpdateEvent environment", "MessageEvent user", "ConversationStateUpdateEvent environment", "ActionEvent agent", "ObservationEvent environment", "MessageEvent agent", "ConversationStateUpdateEvent environment"];
    await expect.poll(() => logs.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1 + turn.length);
    expect(logs).toEqual(["SystemPromptEvent MessageEvent", ...turn]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
