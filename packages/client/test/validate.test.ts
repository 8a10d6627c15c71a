/**
 * `validate`: each received event is checked with @acs-toolkit/validator; the first invalid one
 * rejects the call with its index, id and pointer. The reference server only ever answers valid
 * events, so the invalid ones are put into its real answers by a `fetch` in between.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, InvalidEventError, InvalidResponseError, type SearchedEvent } from "@acs-toolkit/client";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { jsonl, KEY, startReferenceServer, type ReferenceServer } from "./support/server.js";

const events = exampleEvents({ seed: 11 });
const click = events.findIndex((event) => event.kind === "ActionEvent" && event.action?.kind === "BrowserClickAction");
let ref: ReferenceServer;
let conversationId: string;

/** A fetch that passes requests to the server and edits the events of its search answers. */
const tampering =
  (edit: (event: Record<string, any>, index: number) => void) =>
  async (request: Request): Promise<Response> => {
    const response = await fetch(request);
    if (!new URL(request.url).pathname.endsWith("/events/search") || !response.ok) return response;
    const page = (await response.json()) as { items: Array<Record<string, any>> };
    page.items.forEach(edit);
    return Response.json(page);
  };

const badIndex = (event: Record<string, any>) => {
  if (event.id === events[click]!.id) event.action.index = -1;
};

beforeAll(async () => {
  ref = await startReferenceServer();
  const setup = createClient({ baseUrl: ref.url, apiKey: KEY });
  ({ conversation_id: conversationId } = await setup.createConversation({ replay_json: jsonl(events) }));
});

afterAll(async () => {
  await ref?.close();
});

describe("validate", () => {
  it("passes valid events through", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY, validate: true });
    const all: SearchedEvent[] = [];
    for await (const event of client.iterateEvents(conversationId, { limit: 9 })) all.push(event);
    expect(all).toEqual(events);
  });

  it("reports the first invalid event: its index, id and pointer", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY, validate: true, fetch: tampering(badIndex) });
    const error = await client.searchEvents(conversationId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidEventError);
    expect(error).toBeInstanceOf(InvalidResponseError);
    const invalid = error as InvalidEventError;
    expect(invalid.operation).toBe("searchEvents");
    expect(invalid.index).toBe(click);
    expect(invalid.pointer).toBe("/action/index");
    expect((invalid.event as { id: string }).id).toBe(events[click]!.id);
    expect(invalid.issues.map((issue) => issue.rule)).toEqual(["minimum"]);
    expect(invalid.message).toBe(
      `searchEvents: received event ${click} (id ${events[click]!.id}, ActionEvent) is invalid: /action/index: must be >= 0, got -1`,
    );
  });

  it("iterateEvents yields the valid pages before the invalid one, then rejects", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY, validate: true, fetch: tampering(badIndex) });
    const seen: string[] = [];
    const iteration = (async () => {
      for await (const event of client.iterateEvents(conversationId, { limit: 5 })) seen.push(event.id);
    })();
    const error = (await iteration.catch((e: unknown) => e)) as InvalidEventError;
    expect(error).toBeInstanceOf(InvalidEventError);
    expect(error.index).toBe(click % 5);
    expect(seen).toEqual(events.slice(0, click - (click % 5)).map((event) => event.id));
  });

  it("when off (the default), events are not checked", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY, fetch: tampering(badIndex) });
    const page = await client.searchEvents(conversationId);
    expect(page.items[click]).toMatchObject({ action: { index: -1 } });
  });

  it("takes the validator's options: unknown kinds from a newer version can be accepted", async () => {
    const newer = tampering((event, index) => {
      if (index === 2) event.kind = "FutureEvent";
    });
    const strict = createClient({ baseUrl: ref.url, apiKey: KEY, validate: true, fetch: newer });
    await expect(strict.searchEvents(conversationId)).rejects.toMatchObject({ name: "InvalidEventError", index: 2, pointer: "/kind" });
    const lenient = createClient({ baseUrl: ref.url, apiKey: KEY, validate: { unknownKinds: "warn" }, fetch: newer });
    expect((await lenient.searchEvents(conversationId)).items[2]?.kind).toBe("FutureEvent");
  });

  it("a page without an items array is an InvalidResponseError, validate or not", async () => {
    const client = createClient({ baseUrl: ref.url, fetch: async () => Response.json({ events: [] }) });
    await expect(client.searchEvents(conversationId)).rejects.toThrow(/searchEvents: the page has no items array/);
  });
});
