/**
 * A PostgreSQL outage seen from the server (without disturbing the shared cluster: the scratch
 * database stops accepting connections and the server's connections are terminated, as a restart
 * does): requests answer 503 with a detail meanwhile, /health says unavailable, and once the
 * database is back requests succeed again and the live feed, reconnected, delivers an event
 * appended by another instance.
 */
import { connectLive, isEventFrame, livePath } from "@acs-toolkit/test-kit/live";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresEventStore } from "../../src/store/postgres/index.js";
import { expectConforms, KEY, startTestServer, type TestServer } from "../support/harness.js";
import { adminQuery, createScratchDatabase, type ScratchDatabase } from "../support/postgres.js";
import { events } from "../store/contract/fixtures.js";

let db: ScratchDatabase;
let t: TestServer;
let other: PostgresEventStore;
beforeAll(async () => {
  db = await createScratchDatabase();
  t = await startTestServer(["--store", db.url]);
  other = await openPostgresStore({ url: db.url, maxConnections: 2 }); // another instance's store
});
afterAll(async () => {
  await other?.close();
  await t?.close();
  await adminQuery(`alter database ${db.name} allow_connections true`).catch(() => undefined);
  await db?.drop();
});

async function outage(on: boolean): Promise<void> {
  await adminQuery(`alter database ${db.name} allow_connections ${on ? "false" : "true"}`);
  if (on) await adminQuery("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [db.name]);
}

describe("a database outage", () => {
  it("answers 503 meanwhile, then recovers, and the live feed follows other instances again", async () => {
    const id = (await t.call("POST", "/api/conversations", { json: {} })).body.conversation_id as string;
    const live = connectLive(t.url, livePath(id), { headers: { "X-Session-API-Key": KEY } });
    await live.waitFor(1);
    await outage(true);
    try {
      // Each a 503 the spec documents for the operation (components/responses/Unavailable).
      const calls: Array<[string, "GET" | "POST", string, unknown]> = [
        ["getConversation", "GET", `/api/conversations/${id}`, undefined],
        ["searchEvents", "GET", `/api/conversations/${id}/events/search`, undefined],
        ["countEvents", "GET", `/api/conversations/${id}/events/count`, undefined],
        ["sendMessage", "POST", `/api/conversations/${id}/events`, { role: "user", content: [{ type: "text", text: "hi" }] }],
        ["createConversation", "POST", "/api/conversations", {}],
      ];
      for (const [operationId, method, route, json] of calls) {
        const reply = await t.call(method, route, json === undefined ? {} : { json });
        expectConforms(operationId, reply, 503);
        expect(reply.body.detail, route).toMatch(/database is unavailable/);
        expect(reply.headers.get("retry-after")).toBe("1");
      }
      const health = await t.call("GET", "/health");
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: "unavailable", store: "postgres" });
    } finally {
      await outage(false);
    }
    // Back: the pool opens new connections on demand.
    await expect.poll(async () => (await t.call("GET", `/api/conversations/${id}`)).status, { timeout: 10_000, interval: 100 }).toBe(200);
    expect((await t.call("GET", "/health")).status).toBe(200);
    // The LISTEN connection came back too: an append by another instance reaches the subscriber.
    const listening = async () => (await adminQuery("select 1 from pg_stat_activity where datname = $1 and query ilike 'listen %'", [db.name])).length;
    await expect.poll(listening, { timeout: 10_000, interval: 100 }).toBeGreaterThan(0);
    const [appended] = await other.appendEvents(id, events(1, { seed: 42 }));
    const [frame] = await live.waitFor(1, isEventFrame, 10_000);
    expect(frame!.value.id).toBe(appended!.id);
    live.ws.terminate();
  });
});
