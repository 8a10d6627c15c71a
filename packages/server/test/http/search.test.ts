/**
 * Event search over HTTP: the paging property (random filters × page sizes × both orders: the
 * concatenated pages equal the filtered list, no duplicate, no gap, next_page_id null exactly at the
 * end), and replays of the recorded corpus read back unchanged.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Event } from "@acs-toolkit/schema";
import { trajectoryEntries } from "@acs-toolkit/validator";
import { exampleEvents, seededRandom } from "@acs-toolkit/schema/examples";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectConforms, startTestServer, type TestServer } from "../support/harness.js";
import { expectedSearchIds, randomSearchQuery, randomTrajectory } from "@acs-toolkit/test-kit/trajectory";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../fixtures/openhands-recorded");
const releases = path.resolve(fixtures, "../openhands-releases");


let t: TestServer;
beforeAll(async () => void (t = await startTestServer()));
afterAll(() => t.close());

describe("paging property", () => {
  it("concatenated pages equal the filtered list, in both orders, for random filters and sizes", async () => {
    const rand = seededRandom(20261122);
    const events = randomTrajectory(rand, 300);
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: events.map((e) => JSON.stringify(e)).join("\n") } });
    expectConforms("createConversation", created, 200);
    const route = `/api/conversations/${created.body.conversation_id}/events/search`;
    const kinds = [...new Set(events.map((e) => e.kind))];

    for (let round = 0; round < 40; round++) {
      const { query, limit, desc } = randomSearchQuery(rand, kinds);
      const expected = expectedSearchIds(events, query, desc);

      const received: string[] = [];
      let pageId: string | null | undefined;
      let pages = 0;
      do {
        const reply = await t.call("GET", route, { query: { ...query, limit, ...(desc && { sort_order: "TIMESTAMP_DESC" }), ...(pageId && { page_id: pageId }) } });
        expect(reply.status, `${JSON.stringify(query)} ${reply.text}`).toBe(200);
        received.push(...reply.body.items.map((e: Event) => e.id));
        pageId = reply.body.next_page_id;
        pages++;
        // next_page_id is null exactly at the end: a non-null cursor always leads to more events.
        if (pageId) expect(reply.body.items).toHaveLength(limit);
      } while (pageId && pages < 400);
      expect(received, `round ${round}: ${JSON.stringify({ ...query, limit, desc })}`).toEqual(expected);
    }
  });

  it("TIMESTAMP_DESC is the exact reverse of TIMESTAMP, ties included", async () => {
    const events = randomTrajectory(seededRandom(7), 120).map((e) => ({ ...e, timestamp: "2026-02-05T11:00:00" }));
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: JSON.stringify(events) } });
    const route = `/api/conversations/${created.body.conversation_id}/events/search`;
    const asc = (await t.call("GET", route, { query: { limit: 100 } })).body;
    const ascAll = [...asc.items, ...(await t.call("GET", route, { query: { limit: 100, page_id: asc.next_page_id } })).body.items].map((e: Event) => e.id);
    const desc = (await t.call("GET", route, { query: { limit: 100, sort_order: "TIMESTAMP_DESC" } })).body;
    const descAll = [...desc.items, ...(await t.call("GET", route, { query: { limit: 100, sort_order: "TIMESTAMP_DESC", page_id: desc.next_page_id } })).body.items].map((e: Event) => e.id);
    expect(ascAll).toEqual(events.map((e) => e.id));
    expect(descAll).toEqual([...ascAll].reverse());
  });

  it("a cursor keeps working while events are appended (no duplicate, no gap)", async () => {
    const events = exampleEvents({ seed: 3 });
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: JSON.stringify(events) } });
    const id = created.body.conversation_id;
    const route = `/api/conversations/${id}/events/search`;
    const first = await t.call("GET", route, { query: { limit: 10 } });
    await t.server.conversations.record(id, exampleEvents({ seed: 4, start: new Date(Date.UTC(2027, 0, 1)) }));
    const rest: string[] = [];
    let pageId = first.body.next_page_id;
    while (pageId) {
      const reply = await t.call("GET", route, { query: { limit: 10, page_id: pageId } });
      rest.push(...reply.body.items.map((e: Event) => e.id));
      pageId = reply.body.next_page_id;
    }
    const all = [...first.body.items.map((e: Event) => e.id), ...rest];
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(events.length * 2);
  });
});

describe("recordings of later releases (fixtures/openhands-releases)", () => {
  const files = readdirSync(releases).filter((f) => f.endsWith(".jsonl") || f.endsWith(".json"));
  const replay = async (file: string) => {
    const text = readFileSync(path.join(releases, file), "utf8");
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: text } });
    expectConforms("createConversation", created, 200);
    return { id: created.body.conversation_id as string, original: [...trajectoryEntries(text)].map((entry) => entry.value as Event) };
  };

  it.each(files)("%s replays and reads back unchanged", async (file) => {
    const { id, original } = await replay(file);
    const reply = await t.call("GET", `/api/conversations/${id}/events/search`);
    expectConforms("searchEvents", reply, 200);
    expect(reply.body.items).toEqual(original);
  });

  it("source=hook keeps the HookExecutionEvents, and is an empty page where there are none (not a 422)", async () => {
    const withHooks = await replay("v1.13-page-window.jsonl");
    const hooks = await t.call("GET", `/api/conversations/${withHooks.id}/events/search`, { query: { source: "hook" } });
    expectConforms("searchEvents", hooks, 200);
    expect(hooks.body.items.map((e: Event) => e.kind)).toEqual(["HookExecutionEvent", "HookExecutionEvent"]);
    expect((await t.call("GET", `/api/conversations/${withHooks.id}/events/count`, { query: { source: "hook" } })).body).toBe(2);
    const without = await replay("v1.31-acp-agent.jsonl");
    const none = await t.call("GET", `/api/conversations/${without.id}/events/search`, { query: { source: "hook" } });
    expectConforms("searchEvents", none, 200);
    expect(none.body).toEqual({ items: [], next_page_id: null });
    const byKind = await t.call("GET", `/api/conversations/${without.id}/events/search`, { query: { kind: "HookExecutionEvent" } });
    expect(byKind.status).toBe(200);
    expect(byKind.body.items).toEqual([]);
  });
});

describe("replay of the recorded corpus", () => {
  const recordings = readdirSync(fixtures).filter((f) => f.endsWith(".jsonl"));
  it.each(recordings)("%s reads back unchanged", async (file) => {
    const text = readFileSync(path.join(fixtures, file), "utf8");
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: text } });
    expectConforms("createConversation", created, 200);
    const reply = await t.call("GET", `/api/conversations/${created.body.conversation_id}/events/search`);
    expectConforms("searchEvents", reply, 200);
    const original = text.trim().split("\n").map((line) => JSON.parse(line));
    expect(reply.body.items).toEqual(original);
    // Byte for byte: each item's JSON text is the recorded line's JSON text.
    expect(reply.body.items.map((e: unknown) => JSON.stringify(e))).toEqual(original.map((e) => JSON.stringify(e)));
  });
});
