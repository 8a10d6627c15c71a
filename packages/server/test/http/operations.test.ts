/**
 * The server as a process: restart keeps everything, SIGKILL inside a large replay's write leaves
 * the conversation absent, SIGTERM finishes in-flight requests; CORS; --public-read; the
 * key printed once.
 */
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY, startTestServer, type TestServer } from "../support/harness.js";
import { exited, spawnServer } from "../support/process.js";

const api = (url: string, route: string, init: RequestInit = {}) =>
  fetch(new URL(route, url), { ...init, headers: { "X-Session-API-Key": KEY, "Content-Type": "application/json", ...init.headers } });

describe("restart and crash", () => {
  let dataDir: string;
  beforeAll(async () => void (dataDir = await mkdtemp(path.join(tmpdir(), "acs-process-"))));
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("everything is still there after a restart", async () => {
    const first = await spawnServer(dataDir);
    const events = exampleEvents({ seed: 11 });
    const created = await (await api(first.url, "/api/conversations", { method: "POST", body: JSON.stringify({ replay_json: JSON.stringify(events) }) })).json();
    await api(first.url, "/api/settings", { method: "POST", body: JSON.stringify({ language: "de", llm_api_key: "sk-restart" }) });
    const before = await (await api(first.url, `/api/conversations/${created.conversation_id}/events/search`)).text();
    first.process.kill("SIGTERM");
    expect(await exited(first.process)).toBe(0);

    const second = await spawnServer(dataDir);
    const after = await (await api(second.url, `/api/conversations/${created.conversation_id}/events/search`)).text();
    expect(after).toBe(before);
    const settings = await (await api(second.url, "/api/settings")).json();
    expect(settings).toMatchObject({ language: "de", llm_api_key_set: true });
    second.process.kill("SIGTERM");
    expect(await exited(second.process)).toBe(0);
  });

  // The kill comes from inside the server's write transaction (test/support/kill-in-write.ts), not
  // after a delay: a delay mostly lands between writes, where any store passes.
  for (const [mode, moment] of [
    ["import", "while its events are written, some already committed"],
    ["finish", "while it is made visible"],
  ] as const) {
    it(`SIGKILL inside a large replay's write, ${moment}: the conversation is absent, nothing of it is left`, async () => {
      const events = Array.from({ length: 8 }, (_, seed) => exampleEvents({ seed: 100 + seed, start: new Date(Date.UTC(2026, 0, 1 + seed)) })).flat();
      // Ids unique across copies: the first 8 hex digits carry the seed, so the copy number goes before the seed's 4.
      const big = Array.from({ length: 8 }, (_, i) => events.map((e) => ({ ...e, id: `${i.toString(16).padStart(4, "0")}${e.id.slice(4)}` }))).flat();
      expect(new Set(big.map((e) => e.id)).size).toBe(big.length);
      const server = await spawnServer(dataDir, {
        nodeArgs: ["--import", "./test/support/kill-in-write.mjs"],
        env: { SESSION_API_KEY: KEY, ACS_TEST_KILL_IN_WRITE: mode },
      });
      const id = crypto.randomUUID();
      const request = api(server.url, "/api/conversations", { method: "POST", body: JSON.stringify({ conversation_id: id, replay_json: big.map((e) => JSON.stringify(e)).join("\n") }) });
      await expect(request).rejects.toThrow(); // the connection dies with the process
      await exited(server.process);
      expect(server.process.signalCode).toBe("SIGKILL");
      expect(server.stdout.join("")).toMatch(mode === "import" ? /inside write: importing, [1-9]\d* rows committed, in a transaction\n/ : /inside write: finishing the import, in a transaction\n/);

      const again = await spawnServer(dataDir);
      try {
        const info = await api(again.url, `/api/conversations/${id}`);
        expect(info.status === 404 ? "absent" : `present with ${(await info.json()).event_count} of ${big.length} events`).toBe("absent");
        // The same replay goes in whole afterwards: the crash left no id or row behind to collide with.
        const retry = await api(again.url, "/api/conversations", { method: "POST", body: JSON.stringify({ conversation_id: id, replay_json: big.map((e) => JSON.stringify(e)).join("\n") }) });
        expect(retry.status).toBe(200);
        expect((await (await api(again.url, `/api/conversations/${id}`)).json()).event_count).toBe(big.length);
      } finally {
        again.process.kill("SIGTERM");
        await exited(again.process);
      }
      // No staged conversation, no orphan row: every stored event is counted by its conversation.
      const db = new Database(path.join(dataDir, "acs.sqlite"), { readonly: true });
      try {
        expect(db.prepare("SELECT count(*) AS n FROM conversations WHERE id NOT LIKE '________-____-____-____-____________'").get()).toEqual({ n: 0 });
        const { stored } = db.prepare("SELECT count(*) AS stored FROM events").get() as { stored: number };
        const { counted } = db.prepare("SELECT sum(event_count) AS counted FROM conversations").get() as { counted: number };
        expect(stored).toBe(counted);
      } finally {
        db.close();
      }
    });
  }

  it("SIGTERM lets an in-flight request finish, then exits 0", async () => {
    const server = await spawnServer(dataDir);
    const events = Array.from({ length: 30 }, (_, seed) => exampleEvents({ seed: 500 + seed, start: new Date(Date.UTC(2025, 0, 1 + seed)) })).flat();
    const body = JSON.stringify({ replay_json: JSON.stringify(events) });
    // `Expect: 100-continue`: the server answers 100 once it has the request (its handler has
    // started), so SIGTERM provably arrives while the request is in flight; the body follows.
    const request = httpRequest(new URL("/api/conversations", server.url), {
      method: "POST",
      headers: { "X-Session-API-Key": KEY, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body), Expect: "100-continue" },
    });
    const reply = new Promise<{ status: number; text: string }>((resolve, reject) => {
      request.on("response", (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode!, text }));
        res.on("error", reject);
      });
      request.on("error", reject);
    });
    await once(request, "continue");
    server.process.kill("SIGTERM");
    request.end(body);
    const { status, text } = await reply;
    expect(status).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ status: "ok" });
    expect(await exited(server.process)).toBe(0);
  });

  it("prints a generated key once, at the start that created it", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "acs-keygen-"));
    try {
      const first = await spawnServer(dir, { env: {} });
      const printed = /X-Session-API-Key: (\S+)/.exec(first.stdout.join(""))?.[1];
      expect(printed).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect((await fetch(new URL("/api/settings", first.url), { headers: { "X-Session-API-Key": printed! } })).status).toBe(200);
      first.process.kill("SIGTERM");
      await exited(first.process);
      const second = await spawnServer(dir, { env: {} });
      expect(second.stdout.join("")).not.toContain("X-Session-API-Key");
      second.process.kill("SIGTERM");
      await exited(second.process);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("--public-read and CORS", () => {
  let t: TestServer;
  let id: string;
  beforeAll(async () => {
    t = await startTestServer(["--public-read", "--cors-origin", "http://app.test"]);
    id = (await t.call("POST", "/api/conversations", { json: { initial_user_msg: "hi" } })).body.conversation_id;
  });
  afterAll(() => t.close());

  it("search and count need no key; everything else still does", async () => {
    expect((await t.call("GET", `/api/conversations/${id}/events/search`, { key: null })).status).toBe(200);
    expect((await t.call("GET", `/api/conversations/${id}/events/count`, { key: null })).status).toBe(200);
    expect((await t.call("GET", `/api/conversations/${id}`, { key: null })).status).toBe(401);
    expect((await t.call("POST", "/api/conversations", { key: null, json: {} })).status).toBe(401);
  });

  it("answers a preflight from an allowed origin", async () => {
    const reply = await t.call("OPTIONS", "/api/conversations", {
      key: null,
      headers: { Origin: "http://app.test", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-session-api-key" },
    });
    expect(reply.status).toBe(204);
    expect(reply.headers.get("access-control-allow-origin")).toBe("http://app.test");
    expect(reply.headers.get("access-control-allow-headers")).toMatch(/X-Session-API-Key/i);
  });

  it("sets no CORS header for another origin", async () => {
    const reply = await t.call("GET", `/api/conversations/${id}/events/search`, { headers: { Origin: "http://evil.test" } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("access-control-allow-origin")).toBeNull();
  });
});
