/**
 * The server on a PostgreSQL store (`--store postgres://…`), over HTTP: creation, append, search
 * pages and counts equal to the filtered list, settings and provider tokens encrypted at rest (the
 * raw table holds no plaintext), /health naming the store, and a statement past `--store-timeout-ms`
 * answered 503 with a detail instead of holding the request.
 */
import type { Event } from "@acs-toolkit/schema";
import { seededRandom } from "@acs-toolkit/schema/examples";
import { expectedSearchIds, randomSearchQuery, randomTrajectory } from "@acs-toolkit/test-kit/trajectory";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config.js";
import { expectConforms, startTestServer, type TestServer } from "../support/harness.js";
import { adminQuery, createScratchDatabase, type ScratchDatabase } from "../support/postgres.js";

let db: ScratchDatabase;
let t: TestServer;
beforeAll(async () => {
  db = await createScratchDatabase();
  t = await startTestServer(["--store", db.url, "--store-timeout-ms", "300", "--store-pool", "4"]);
});
afterAll(async () => {
  await t?.close();
  await db?.drop();
});

const text = (t: string) => ({ type: "text", text: t });

describe("a PostgreSQL-backed server", () => {
  it("reports the store in /health", async () => {
    const health = await t.call("GET", "/health");
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: "ok", store: "postgres" });
  });

  it("creates, appends, pages and counts as the filtered list says", async () => {
    const rand = seededRandom(20261125);
    const events = randomTrajectory(rand, 300);
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: events.map((e) => JSON.stringify(e)).join("\n") } });
    expectConforms("createConversation", created, 200);
    const id = created.body.conversation_id as string;
    const route = `/api/conversations/${id}/events/search`;
    const kinds = [...new Set(events.map((e) => e.kind))];
    for (let round = 0; round < 15; round++) {
      const { query, limit, desc } = randomSearchQuery(rand, kinds);
      const received: string[] = [];
      let pageId: string | null | undefined;
      do {
        const reply = await t.call("GET", route, { query: { ...query, limit, ...(desc && { sort_order: "TIMESTAMP_DESC" }), ...(pageId && { page_id: pageId }) } });
        expectConforms("searchEvents", reply, 200);
        received.push(...reply.body.items.map((e: Event) => e.id));
        pageId = reply.body.next_page_id;
      } while (pageId);
      expect(received, JSON.stringify({ query, limit, desc })).toEqual(expectedSearchIds(events, query, desc));
      const count = await t.call("GET", `/api/conversations/${id}/events/count`, { query });
      expectConforms("countEvents", count, 200);
      expect(count.body).toBe(expectedSearchIds(events, query, false).length);
    }
    const sent = await t.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [text("appended through postgres")] } });
    expect(sent.status, sent.text).toBe(200);
    expect((await t.call("GET", `/api/conversations/${id}/events/count`)).body).toBe(events.length + 1);
    const found = await t.call("GET", route, { query: { body: "APPENDED THROUGH" } });
    expect(found.body.items).toHaveLength(1);
    expect((await t.call("GET", `/api/conversations/${id}`)).body).toMatchObject({ conversation_id: id });
  });

  it("keeps settings and provider tokens encrypted in the database", async () => {
    const key = "sk-PLAINTEXT-pg-4471";
    const token = "ghp_PLAINTEXTpgtoken0099";
    expect((await t.call("POST", "/api/settings", { json: { llm_model: "gpt-4o", llm_api_key: key } })).status).toBe(200);
    expect((await t.call("POST", "/api/add-git-providers", { json: { provider_tokens: { github: { token, host: "github.com" } } } })).status).toBe(200);
    const view = await t.call("GET", "/api/settings");
    expect(view.body).toMatchObject({ llm_model: "gpt-4o", llm_api_key_set: true, provider_tokens_set: { github: "github.com" } });
    const rows = await adminQuery<{ key: string; value: string }>("select key, value from acs.documents", [], db.url);
    expect(rows.length).toBeGreaterThan(0);
    const raw = rows.map((r) => `${r.key}=${r.value}`).join("\n");
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(token);
    expect(raw).not.toContain("PLAINTEXT");
  });

  it("answers 503 with a detail when a statement runs past the timeout, then serves again", async () => {
    const created = await t.call("POST", "/api/conversations", { json: {} });
    const id = created.body.conversation_id as string;
    // Another session holds the conversation's row (as a stuck writer would): the append waits on it.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query("begin");
      await client.query("select 1 from acs.conversations where id = $1 for update", [id]);
      const started = Date.now();
      const reply = await t.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [text("stuck")] } });
      expectConforms("sendMessage", reply, 503); // documented: components/responses/Unavailable
      expect(reply.body.detail).toMatch(/statement timeout/);
      expect(Date.now() - started).toBeLessThan(3_000);
      await client.query("commit");
    } finally {
      await client.end();
    }
    const again = await t.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [text("unstuck")] } });
    expect(again.status, again.text).toBe(200);
  });

  it("takes --store from ACS_STORE_URL and refuses a URL of another database", () => {
    expect(parseConfig([], { ACS_STORE_URL: "postgres://u@h/db" }).store).toEqual({ url: "postgres://u@h/db", maxConnections: 10, statementTimeoutMs: 10_000, leaseTtlMs: 45_000, forwardTimeoutMs: 5_000 });
    expect(parseConfig([], {}).store).toBeUndefined();
    expect(() => parseConfig(["--store", "mysql://root:pw@h/db"], {})).toThrow(ConfigError);
    expect(() => parseConfig(["--store", "mysql://root:pw@h/db"], {})).toThrow(/got "mysql:\/\/…@h\/db"/);
    expect(() => parseConfig(["--store-pool", "0"], {})).toThrow(/--store-pool must be at least 1/);
    expect(parseConfig(["--store", "postgres://u@h/db", "--lease-ttl-ms", "2000"], { ACS_FORWARD_TIMEOUT_MS: "700" }).store).toMatchObject({ leaseTtlMs: 2000, forwardTimeoutMs: 700 });
    expect(() => parseConfig(["--lease-ttl-ms", "100"], {})).toThrow(/--lease-ttl-ms must be at least 300/);
  });
});
