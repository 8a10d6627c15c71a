/**
 * Event search on the mock: the reference server's paging property tests (its
 * test/http/search.test.ts, run here against the mock over HTTP, through Prism): random filters ×
 * page sizes × both orders equal the filtered list with no duplicate and no gap; DESC is the exact
 * reverse of ASC; a cursor survives appends; recordings read back byte for byte. Then the long
 * scenario paged end to end in both orders.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Event } from "@acs-toolkit/schema";
import { exampleEvents, seededRandom } from "@acs-toolkit/schema/examples";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedSearchIds, randomSearchQuery, randomTrajectory } from "@acs-toolkit/test-kit/trajectory";
import { startTestMock, type TestMock } from "./support.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/openhands-recorded");


let t: TestMock;
beforeAll(async () => void (t = await startTestMock({ scenarios: ["long"] })));
afterAll(() => t.close());

/** Every page of a search, following next_page_id. */
async function pageAll(route: string, query: Record<string, string | number>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pageId: string | null | undefined;
  let pages = 0;
  do {
    const reply = await t.call("GET", route, { query: { ...query, ...(pageId && { page_id: pageId }) } });
    expect(reply.status, `${JSON.stringify(query)} ${reply.text}`).toBe(200);
    ids.push(...reply.body.items.map((e: Event) => e.id));
    pageId = reply.body.next_page_id;
    pages++;
    if (pageId) expect(reply.body.items).toHaveLength(Number(query.limit ?? 100));
  } while (pageId && pages < 400);
  return { ids, pages };
}

describe("paging property (the server's, against the mock)", () => {
  it("concatenated pages equal the filtered list, in both orders, for random filters and sizes", async () => {
    const rand = seededRandom(20261122);
    const events = randomTrajectory(rand, 300);
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: events.map((e) => JSON.stringify(e)).join("\n") } });
    expect(created.status).toBe(200);
    const id = created.body.conversation_id;
    // The scripted agent moves the conversation to RUNNING with a state update: wait for it, then
    // the list is the replayed events plus that one.
    await expect.poll(async () => (await t.call("GET", `/api/conversations/${id}`)).body.status).toBe("RUNNING");
    const statusEvent = (await t.call("GET", `/api/conversations/${id}/events/search`, { query: { kind: "ConversationStateUpdateEvent", sort_order: "TIMESTAMP_DESC", limit: 1 } })).body.items[0];
    const all: Event[] = [...events, statusEvent];
    const route = `/api/conversations/${id}/events/search`;
    const kinds = [...new Set(all.map((e) => e.kind))];

    for (let round = 0; round < 40; round++) {
      const { query, limit, desc } = randomSearchQuery(rand, kinds);
      const expected = expectedSearchIds(all, query, desc);
      const { ids } = await pageAll(route, { ...query, limit, ...(desc && { sort_order: "TIMESTAMP_DESC" }) });
      expect(ids, `round ${round}: ${JSON.stringify({ ...query, limit, desc })}`).toEqual(expected);
    }
  });

  it("TIMESTAMP_DESC is the exact reverse of TIMESTAMP, ties included", async () => {
    const events = randomTrajectory(seededRandom(7), 120).map((e) => ({ ...e, timestamp: "2026-02-05T11:00:00" }));
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: JSON.stringify(events) } });
    const route = `/api/conversations/${created.body.conversation_id}/events/search`;
    const asc = await pageAll(route, { limit: 100, timestamp__lt: "2026-02-05T11:00:01Z" });
    const desc = await pageAll(route, { limit: 100, sort_order: "TIMESTAMP_DESC", timestamp__lt: "2026-02-05T11:00:01Z" });
    expect(asc.ids).toEqual(events.map((e) => e.id));
    expect(desc.ids).toEqual([...asc.ids].reverse());
  });

  it("a cursor keeps working while events are appended (no duplicate, no gap)", async () => {
    const events = exampleEvents({ seed: 3 });
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: JSON.stringify(events) } });
    const id = created.body.conversation_id;
    const route = `/api/conversations/${id}/events/search`;
    // The scripted agent's status update comes first (recorded now), so nothing else moves meanwhile.
    await expect.poll(async () => (await t.call("GET", `/api/conversations/${id}`)).body.status).toBe("RUNNING");
    const first = await t.call("GET", route, { query: { limit: 10 } });
    await t.mock.world.conversations.record(id, exampleEvents({ seed: 4, start: new Date(Date.UTC(2027, 0, 1)) }));
    const rest = await pageAll(route, { limit: 10, page_id: first.body.next_page_id });
    const all = [...first.body.items.map((e: Event) => e.id), ...rest.ids];
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(events.length * 2 + 1);
  });
});

describe("replay of the recorded corpus", () => {
  const recordings = readdirSync(fixtures).filter((f) => f.endsWith(".jsonl"));
  it.each(recordings)("%s reads back unchanged", async (file) => {
    const text = readFileSync(path.join(fixtures, file), "utf8");
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: text } });
    const original = text.trim().split("\n").map((line) => JSON.parse(line));
    const reply = await t.call("GET", `/api/conversations/${created.body.conversation_id}/events/search`, { query: { limit: original.length } });
    expect(reply.body.items).toEqual(original);
    expect(reply.body.items.map((e: unknown) => JSON.stringify(e))).toEqual(original.map((e) => JSON.stringify(e)));
  });
});

describe("the long scenario, for infinite scroll", () => {
  it("pages through every event in both orders, exactly the scenario", async () => {
    const scenario = t.mock.world.scenarios[0]!;
    const route = `/api/conversations/${scenario.conversationId}/events/search`;
    const asc = await pageAll(route, { limit: 100 });
    expect(asc.ids).toEqual(scenario.events.map((e) => e.id));
    expect(asc.pages).toBe(Math.ceil(scenario.events.length / 100));
    const desc = await pageAll(route, { limit: 37, sort_order: "TIMESTAMP_DESC" });
    expect(desc.ids).toEqual([...asc.ids].reverse());
    const count = await t.call("GET", `/api/conversations/${scenario.conversationId}/events/count`);
    expect(count.body).toBe(scenario.events.length);
  });
});
