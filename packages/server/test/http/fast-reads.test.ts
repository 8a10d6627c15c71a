/**
 * The fast path of event search and count ahead of Express (http/fast-reads.ts): the same
 * answers as the Express route (a trailing slash takes that route: the two are compared byte for
 * byte, headers too), errors through the same handler with CORS, one request log line without the
 * query, and no more than one conversation lookup per read (none for a page that is not empty).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app.js";
import { EventBus } from "../../src/core/bus.js";
import { parseConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { recordingRuntime } from "../../src/core/runtime.js";
import { createCipher } from "../../src/secrets.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { EventStore } from "../../src/store/types.js";
import { expect422, expectConforms, KEY, startTestServer, type TestServer } from "../support/harness.js";
import { rawRequest } from "../support/raw-http.js";

const ORIGIN = "http://app.test";
const message = (text: string) => ({ role: "user", content: [{ type: "text", text }] });

describe("search and count ahead of Express", () => {
  let t: TestServer;
  let id: string;
  beforeAll(async () => {
    t = await startTestServer(["--cors-origin", ORIGIN]);
    id = (await t.call("POST", "/api/conversations", { json: {} })).body.conversation_id;
    for (let i = 0; i < 5; i++) expect((await t.call("POST", `/api/conversations/${id}/events`, { json: message(`m${i}`) })).status).toBeLessThan(300);
  });
  afterAll(() => t.close());

  /** Status, headers (but Date) and body of a GET. */
  async function raw(target: string, headers: Record<string, string> = {}) {
    const reply = await fetch(`${t.url}${target}`, { headers: { "X-Session-API-Key": KEY, ...headers } });
    const head: Record<string, string> = {};
    reply.headers.forEach((value, name) => void (name !== "date" && (head[name] = value)));
    return { status: reply.status, head, body: await reply.text() };
  }

  it("answers exactly as the Express route does (a trailing slash takes it)", async () => {
    for (const [route, query] of [
      ["search", "?limit=2"],
      ["search", "?limit=100&kind=MessageEvent&sort_order=TIMESTAMP_DESC"],
      ["count", ""],
      ["count", "?kind=MessageEvent"],
    ] as const) {
      for (const headers of [{}, { Origin: ORIGIN }, { Origin: "http://evil.test" }] as Array<Record<string, string>>) {
        const fast = await raw(`/api/conversations/${id}/events/${route}${query}`, headers);
        const express = await raw(`/api/conversations/${id}/events/${route}/${query}`, headers);
        expect(fast.status, fast.body).toBe(200);
        expect(fast).toEqual(express);
      }
    }
    const page = JSON.parse((await raw(`/api/conversations/${id}/events/search?limit=2`)).body);
    expect(page.next_page_id).toEqual(expect.any(String));
    const next = await raw(`/api/conversations/${id}/events/search?limit=2&page_id=${page.next_page_id}`);
    expect(next).toEqual(await raw(`/api/conversations/${id}/events/search/?limit=2&page_id=${page.next_page_id}`));
    expect(JSON.parse(next.body).items[0].id).not.toBe(page.items[0].id);
  });

  it("leaves to Express a target it parses another way (a fragment)", async () => {
    const target = `/api/conversations/${id}/events/search?limit=1#x`;
    const reply = await rawRequest(t.url, `GET ${target} HTTP/1.1\r\nHost: localhost\r\nX-Session-API-Key: ${KEY}\r\nConnection: close\r\n\r\n`);
    expect(reply.status, reply.body).toBe(200);
    expect(JSON.parse(reply.body).items).toHaveLength(1);
  });

  it("sets the CORS headers of an allowed origin", async () => {
    const { head } = await raw(`/api/conversations/${id}/events/search?limit=1`, { Origin: ORIGIN });
    expect(head["access-control-allow-origin"]).toBe(ORIGIN);
    expect(head["vary"]).toBe("Origin");
    expect(head["access-control-expose-headers"]).toBe("Content-Length, Content-Disposition");
  });

  it("answers errors as before: 422 with its loc, 404, 401, with CORS", async () => {
    expect422("searchEvents", await t.call("GET", `/api/conversations/${id}/events/search`, { query: { limit: 0 } }), ["query", "limit"]);
    expect422("countEvents", await t.call("GET", `/api/conversations/${id}/events/count`, { query: { timestamp__gte: "yesterday" } }), ["query", "timestamp__gte"]);
    expect422("searchEvents", await t.call("GET", `/api/conversations/${id}/events/search`, { query: { page_id: "nope" } }), ["query", "page_id"]);
    const missing = randomUUID();
    // A conversation that does not exist is a 404 before a query's 422, as before.
    for (const query of [{}, { page_id: "nope" }] as Array<Record<string, string>>) {
      expectConforms("searchEvents", await t.call("GET", `/api/conversations/${missing}/events/search`, { query }), 404);
      expectConforms("countEvents", await t.call("GET", `/api/conversations/${missing}/events/count`, { query }), 404);
    }
    expect((await t.call("GET", `/api/conversations/${id}/events/search`, { key: null })).status).toBe(401);
    const withOrigin = await raw(`/api/conversations/${missing}/events/search`, { Origin: ORIGIN });
    expect(withOrigin.status).toBe(404);
    expect(withOrigin.head["access-control-allow-origin"]).toBe(ORIGIN);
    expect(withOrigin).toEqual(await raw(`/api/conversations/${missing}/events/search/`, { Origin: ORIGIN }));
  });

  it("logs one line per answer, its path without the query, and never the key", async () => {
    const before = t.logs.length;
    await raw(`/api/conversations/${id}/events/count?kind=MessageEvent`);
    // A sentinel: a request answered after that one, through Express (logged at its response's
    // "finish", the latest a line is written). Once its line is there, any line of the first is too.
    const sentinel = `/api/conversations/${id}/events/search/`;
    await raw(`${sentinel}?limit=1`);
    const requestLines = () => t.logs.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === "request");
    await vi.waitFor(() => expect(requestLines().map((line) => line.path)).toContain(sentinel), { interval: 5 });
    const lines = requestLines();
    expect(lines.at(-1)).toMatchObject({ path: sentinel, status: 200 });
    expect(lines.slice(0, -1)).toEqual([expect.objectContaining({ method: "GET", path: `/api/conversations/${id}/events/count`, status: 200, ms: expect.any(Number) })]);
    expect(t.logs.slice(before).join("\n")).not.toContain(KEY);
  });

  it("an append is seen by the next count and page", async () => {
    const count = async () => (await t.call("GET", `/api/conversations/${id}/events/count`)).body;
    const before = await count();
    await t.call("POST", `/api/conversations/${id}/events`, { json: message("one more") });
    expect(await count()).toBe(before + 1);
    const page = (await t.call("GET", `/api/conversations/${id}/events/search`, { query: { sort_order: "TIMESTAMP_DESC", limit: 1 } })).body;
    expect(JSON.stringify(page.items[0])).toContain("one more");
  });
});

describe("conversation lookups per read", () => {
  let dir: string;
  let http: Server;
  let url: string;
  const calls = { getConversation: 0 };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "acs-fast-reads-"));
    const sqlite = openSqliteStore({ file: path.join(dir, "acs.sqlite") });
    const store = new Proxy(sqlite, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== "function") return value;
        if (name === "getConversation") return (...args: unknown[]) => (calls.getConversation++, (value as (...a: unknown[]) => unknown).apply(target, args));
        return value.bind(target);
      },
    }) as EventStore;
    const config = parseConfig(["--data-dir", dir], {});
    const app = createApp({ config, store, bus: new EventBus(), runtime: recordingRuntime, log: createLogger("silent"), keys: [KEY], cipher: createCipher(randomBytes(32)), cursorSecret: randomBytes(32), version: "test" });
    http = createServer(app.app);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => http.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (target: string) => fetch(`${url}${target}`, { headers: { "X-Session-API-Key": KEY } });

  it("none for a page or a count that is not empty, one for an empty one", async () => {
    const created = await fetch(`${url}/api/conversations`, { method: "POST", headers: { "X-Session-API-Key": KEY, "Content-Type": "application/json" }, body: JSON.stringify({ initial_user_msg: "hi" }) });
    const { conversation_id: id } = (await created.json()) as { conversation_id: string };
    const lookups = async (target: string, status = 200) => {
      calls.getConversation = 0;
      expect((await get(target)).status).toBe(status);
      return calls.getConversation;
    };
    expect(await lookups(`/api/conversations/${id}/events/search?limit=100`)).toBe(0);
    expect(await lookups(`/api/conversations/${id}/events/count`)).toBeLessThanOrEqual(1);
    expect(await lookups(`/api/conversations/${id}/events/count?kind=MessageEvent`)).toBe(0);
    expect(await lookups(`/api/conversations/${id}/events/search?kind=PauseEvent`)).toBe(1);
    expect(await lookups(`/api/conversations/${randomUUID()}/events/search`, 404)).toBe(1);
  });
});
