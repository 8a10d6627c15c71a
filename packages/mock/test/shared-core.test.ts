/**
 * The browser mock answers search, count, paging and settings with the server's own code, shared
 * through `@acs-toolkit/server/core`: its handlers (run here in Node, MSW's
 * `getResponse`, no Service Worker) and a real reference server get the same requests over the same
 * conversation, and answer the same 422 details (loc, msg and type, in order), the same 422 reasons
 * for tampered page cursors, and the same settings views. (msw-browser.test.ts runs the handlers in
 * Chromium, against the Node mock.)
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getResponse } from "msw";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cursorCodec, UNSIGNED_CURSORS } from "@acs-toolkit/server/core";
import type { CallOptions } from "@acs-toolkit/test-kit/http";
import { browserHttpHandlers } from "../src/browser/http.js";
import { createBrowserWorld, type BrowserWorld } from "../src/browser/world.js";
import { SERVER_KEY, startReferenceServer } from "./support.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/openhands-recorded");
const recording = readFileSync(path.join(fixtures, "conversation-2026-02-05.jsonl"), "utf8");
const ID = "5b3f1c2e-8d4a-4f6b-9c0e-1a2b3c4d5e6f";
const BASE = "http://browser.test";

let world: BrowserWorld;
let server: Awaited<ReturnType<typeof startReferenceServer>>;

/** A request to the browser mock's handlers, sent as test-kit's `httpCaller` sends it. */
async function browserCall(method: string, route: string, options: CallOptions = {}): Promise<{ status: number; body: any }> {
  const url = new URL(route, BASE);
  for (const [name, value] of Object.entries(options.query ?? {})) for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(v));
  const headers: Record<string, string> = { "X-Session-API-Key": SERVER_KEY };
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await getResponse(browserHttpHandlers(world, BASE), new Request(url, { method, headers, body }));
  if (!response) throw new Error(`no handler for ${method} ${route}`);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** The same request to both: [browser mock, server]. */
const both = async (method: string, route: string, options: CallOptions = {}) => [await browserCall(method, route, options), await server.call(method, route, options)] as const;

beforeAll(async () => {
  world = createBrowserWorld({ scenarios: ["happy"], keys: [SERVER_KEY] });
  await world.ready;
  server = await startReferenceServer();
  for (const [answer] of [await both("POST", "/api/conversations", { json: { conversation_id: ID, replay_json: recording } })]) expect(answer.status).toBe(200);
});
afterAll(async () => {
  world?.close();
  await server?.close();
});

const search = `/api/conversations/${ID}/events/search`;
const count = `/api/conversations/${ID}/events/count`;
const BAD_QUERIES: Array<Record<string, string | string[]>> = [
  { limit: "0" },
  { limit: "abc" },
  { limit: "1.5" },
  { limit: "101", sort_order: "NEWEST" },
  { kind: "a-b", source: "robot", body: "x".repeat(1001) },
  { kind: "k".repeat(300) },
  { kind: ["MessageEvent", "ActionEvent"] },
  { timestamp__gte: "yesterday", timestamp__lt: "x".repeat(70) },
  { timestamp__gte: "20260205" },
  { timestamp__lt: "2026-02-30" },
  { page_id: "p".repeat(513), limit: "" },
  { page_id: "not-a-cursor" },
  { source: "", sort_order: "" },
];

describe("the browser mock and the server share", () => {
  it.each(BAD_QUERIES.flatMap((query) => [[search, query], [count, query]] as const))("the 422 of %s ? %j", async (route, query) => {
    const [browser, reference] = await both("GET", route, { query });
    expect(browser.status).toBe(reference.status);
    // (count has no limit, sort_order or page_id: it ignores them, a 200 on both)
    if (route === search || reference.status === 422) expect(browser.body).toEqual(reference.body);
  });

  it.each([
    ["a path that is no UUID", "/api/conversations/not-a-uuid/events/search", { limit: "0" }],
    ["an unknown conversation (404 before a bad instant)", "/api/conversations/00000000-0000-4000-8000-00000000beef/events/count", { timestamp__gte: "2026-02-30" }],
    ["an uppercase id", `/api/conversations/${ID.toUpperCase()}/events/count`, { source: "hook" }],
  ] as const)("%s", async (_name, route, query) => {
    const [browser, reference] = await both("GET", route, { query });
    expect(browser).toEqual({ status: reference.status, body: reference.body });
  });

  it("page cursors: the core's codec, unsigned; tampered ones get the server's reasons", async () => {
    // The recorded agent's events (the runtimes record different status events of their own).
    const [browser, reference] = await both("GET", search, { query: { limit: "2", source: "agent" } });
    const next: string = browser.body.next_page_id;
    // Issued by the core's codec with the unsigned signer, and it round-trips.
    const decoded = cursorCodec(UNSIGNED_CURSORS).decode({ conversationId: ID, order: "asc" }, next);
    expect(decoded.ok).toBe(true);
    expect(cursorCodec(UNSIGNED_CURSORS).encode({ conversationId: ID, order: "asc" }, (decoded as { position: { ts: number; seq: number } }).position)).toBe(next);
    const [second, secondReference] = [await browserCall("GET", search, { query: { limit: "2", source: "agent", page_id: next } }), await server.call("GET", search, { query: { limit: "2", source: "agent", page_id: reference.body.next_page_id } })];
    expect(second.body.items.length).toBeGreaterThan(0);
    expect(second.body.items).toEqual(secondReference.body.items);
    // Each side's own cursor, used where it does not belong: the same 422.
    const tampered = (cursor: string): Array<Record<string, string>> => [
      { sort_order: "TIMESTAMP_DESC", page_id: cursor },
      { page_id: `x${cursor}` },
      { page_id: `${cursor}.x` },
    ];
    for (const [mine, theirs] of tampered(next).map((query, i) => [query, tampered(reference.body.next_page_id)[i]!] as const)) {
      const [fromBrowser, fromServer] = [await browserCall("GET", search, { query: mine }), await server.call("GET", search, { query: theirs })];
      expect(fromBrowser.status, JSON.stringify(mine)).toBe(422);
      expect(fromBrowser.body, JSON.stringify(mine)).toEqual(fromServer.body);
    }
  });

  it("the settings' merge and view", async () => {
    const steps: unknown[] = [
      { llm_model: "anthropic/claude", llm_api_key: "sk-1", max_iterations: 50, secrets_store: { provider_tokens: { github: { token: "ghp_x", host: "github.com" } }, custom_secrets: { A: "a" } } },
      { language: "fr", search_api_key: "", mcp_config: { sse_servers: [{ url: "https://sse", api_key: "k" }], stdio_servers: [{ name: "n", command: "c", env: { T: "t" } }] } },
      { llm_api_key: null, secrets_store: { provider_tokens: { github: { host: "example.com" }, gitlab: { token: "glpat" } } }, mcp_config: { sse_servers: [{ url: "https://sse" }], stdio_servers: [{ name: "n", command: "c", env: { T: null } }] } },
    ];
    for (const json of steps) {
      const [stored, storedReference] = await both("POST", "/api/settings", { json });
      expect(stored, JSON.stringify(json)).toEqual({ status: storedReference.status, body: storedReference.body });
      const [view, viewReference] = await both("GET", "/api/settings");
      expect(view, JSON.stringify(json)).toEqual({ status: viewReference.status, body: viewReference.body });
    }
  });
});
