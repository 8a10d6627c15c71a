/**
 * `iterateEvents` over a replayed conversation of 10,000 events: every event once, in order, fetched
 * lazily page by page; `break` and an abort stop it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AbortError, createClient, InvalidResponseError, type SearchedEvent } from "@acs-toolkit/client";
import { EVENT_KINDS } from "@acs-toolkit/schema";
import { jsonl, KEY, manyEvents, startReferenceServer, type ReferenceServer } from "./support/server.js";

const COUNT = 10_000;
const events = manyEvents(COUNT);
let ref: ReferenceServer;
let conversationId: string;
/** Query strings of the searches the client sent. */
let searches: URLSearchParams[] = [];
let client: ReturnType<typeof createClient>;

async function collect(iterable: AsyncIterable<SearchedEvent>): Promise<SearchedEvent[]> {
  const all: SearchedEvent[] = [];
  for await (const event of iterable) all.push(event);
  return all;
}

beforeAll(async () => {
  ref = await startReferenceServer();
  client = createClient({
    baseUrl: ref.url,
    apiKey: KEY,
    fetch: (request) => {
      const url = new URL(request.url);
      if (url.pathname.endsWith("/events/search")) searches.push(url.searchParams);
      return fetch(request);
    },
  });
  ({ conversation_id: conversationId } = await client.createConversation({ replay_json: jsonl(events) }));
});

afterAll(async () => {
  await ref?.close();
});

describe("iterateEvents", () => {
  it("the replay holds 10,000 distinct events of every kind", async () => {
    expect(new Set(events.map((event) => event.id)).size).toBe(COUNT);
    expect(new Set(events.map((event) => event.kind)).size).toBe(EVENT_KINDS.length);
    expect(await client.countEvents(conversationId)).toBe(COUNT);
  });

  it("yields every event of the conversation, equal to the replayed list, 100 a page", async () => {
    searches = [];
    const all = await collect(client.iterateEvents(conversationId));
    expect(all.length).toBe(COUNT);
    expect(all).toEqual(events);
    expect(searches).toHaveLength(COUNT / 100);
    expect(searches[0]?.has("page_id")).toBe(false);
    expect(searches.slice(1).every((query) => query.has("page_id"))).toBe(true);
  });

  it("applies filters, order and limit as the page size", async () => {
    searches = [];
    const messages = await collect(client.iterateEvents(conversationId, { kind: "MessageEvent", sort_order: "TIMESTAMP_DESC", limit: 37 }));
    const expected = events.filter((event) => event.kind === "MessageEvent").reverse();
    expect(messages).toEqual(expected);
    expect(searches).toHaveLength(Math.ceil(expected.length / 37));
    expect(searches.every((query) => query.get("kind") === "MessageEvent" && query.get("limit") === "37")).toBe(true);
  });

  it("is lazy: break after a few events fetches one page and no more", async () => {
    searches = [];
    const first: SearchedEvent[] = [];
    for await (const event of client.iterateEvents(conversationId, { limit: 10 })) {
      first.push(event);
      if (first.length === 25) break;
    }
    expect(first).toEqual(events.slice(0, 25));
    expect(searches).toHaveLength(3);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(searches).toHaveLength(3);
  });

  it("stops with an AbortError when its signal fires, between or within pages", async () => {
    searches = [];
    const controller = new AbortController();
    let seen = 0;
    const iteration = (async () => {
      for await (const _event of client.iterateEvents(conversationId, {}, { signal: controller.signal })) {
        if (++seen === 250) controller.abort();
      }
    })();
    await expect(iteration).rejects.toBeInstanceOf(AbortError);
    expect(seen).toBe(250);
    expect(searches).toHaveLength(3);
  });

  it("searchEvents still returns one page", async () => {
    const page = await client.searchEvents(conversationId);
    expect(page.items).toEqual(events.slice(0, 100));
    expect(page.next_page_id).toEqual(expect.any(String));
  });

  it("refuses to loop when a server answers the same cursor again", async () => {
    const looping = createClient({
      baseUrl: ref.url,
      fetch: async () => Response.json({ items: [], next_page_id: "same" }),
    });
    await expect(collect(looping.iterateEvents(conversationId))).rejects.toBeInstanceOf(InvalidResponseError);
  });
});
