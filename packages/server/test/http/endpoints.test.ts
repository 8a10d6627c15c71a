/** Every endpoint over real HTTP: success shapes, documented errors, and bad input → 422 with `loc`. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { badInputRows } from "@acs-toolkit/test-kit/bad-input";
import { expect422, expectConforms, startTestServer, type TestServer } from "../support/harness.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../fixtures/openhands-recorded");
const recording = readFileSync(path.join(fixtures, "conversation-2026-02-05.jsonl"), "utf8");

let t: TestServer;
let conversationId: string;
const missing = "00000000-0000-4000-8000-00000000beef";

beforeAll(async () => {
  t = await startTestServer();
  const created = await t.call("POST", "/api/conversations", { json: { replay_json: recording, initial_user_msg: "And now?" } });
  expectConforms("createConversation", created, 200);
  conversationId = created.body.conversation_id;
});
afterAll(() => t.close());

describe("POST /api/conversations", () => {
  it("creates a conversation with a generated id", async () => {
    const reply = await t.call("POST", "/api/conversations", { json: {} });
    expectConforms("createConversation", reply, 200);
    expect(reply.body).toMatchObject({ status: "ok", message: null, conversation_status: "STOPPED" });
    expect(reply.body.conversation_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("accepts a caller id as 32 hex digits and stores it canonical", async () => {
    const reply = await t.call("POST", "/api/conversations", { json: { conversation_id: "ABCDEF0123456789ABCDEF0123456789" } });
    expectConforms("createConversation", reply, 200);
    expect(reply.body.conversation_id).toBe("abcdef01-2345-6789-abcd-ef0123456789");
    const info = await t.call("GET", "/api/conversations/abcdef01-2345-6789-abcd-ef0123456789");
    expectConforms("getConversation", info, 200);
  });

  it("answers a repeated id with 409", async () => {
    const id = "11111111-2222-4333-8444-555555555555";
    expectConforms("createConversation", await t.call("POST", "/api/conversations", { json: { conversation_id: id } }), 200);
    const again = await t.call("POST", "/api/conversations", { json: { conversation_id: id.replace(/-/g, "") } });
    expectConforms("createConversation", again, 409);
    expect(again.body).toEqual({ detail: `Conversation already exists: ${id}` });
  });

  it("records initial_user_msg with image_urls as a user MessageEvent", async () => {
    const reply = await t.call("POST", "/api/conversations", { json: { initial_user_msg: "Look at this", image_urls: ["https://example.com/a.png"] } });
    const page = await t.call("GET", `/api/conversations/${reply.body.conversation_id}/events/search`);
    expectConforms("searchEvents", page, 200);
    expect(page.body.items).toHaveLength(1);
    expect(page.body.items[0]).toMatchObject({
      source: "user",
      kind: "MessageEvent",
      llm_message: { role: "user", content: [{ type: "text", text: "Look at this" }, { type: "image", image_urls: ["https://example.com/a.png"] }] },
    });
  });

  it("accepts replay_json as a JSON array and as an EventPage", async () => {
    const events = exampleEvents({ seed: 7 });
    for (const replay of [JSON.stringify(events), JSON.stringify({ items: events, next_page_id: null })]) {
      const reply = await t.call("POST", "/api/conversations", { json: { replay_json: replay } });
      expectConforms("createConversation", reply, 200);
      const info = await t.call("GET", `/api/conversations/${reply.body.conversation_id}`);
      expect(info.body.event_count).toBe(events.length);
    }
  });
});

describe("GET /api/conversations/{id} and /events/count", () => {
  it("reports status, times and event count", async () => {
    const reply = await t.call("GET", `/api/conversations/${conversationId}`);
    expectConforms("getConversation", reply, 200);
    expect(reply.body).toMatchObject({ conversation_id: conversationId, status: "STOPPED", event_count: 9 });
  });

  it("counts with the search filters", async () => {
    const all = await t.call("GET", `/api/conversations/${conversationId}/events/count`);
    expectConforms("countEvents", all, 200);
    expect(all.body).toBe(9);
    const messages = await t.call("GET", `/api/conversations/${conversationId}/events/count`, { query: { kind: "MessageEvent", source: "user" } });
    expect(messages.body).toBe(3);
    const body = await t.call("GET", `/api/conversations/${conversationId}/events/count`, { query: { body: "PWD" } });
    expect(body.body).toBe(2);
  });

  it("404 for an unknown conversation", async () => {
    expectConforms("getConversation", await t.call("GET", `/api/conversations/${missing}`), 404);
    expectConforms("countEvents", await t.call("GET", `/api/conversations/${missing}/events/count`), 404);
  });
});

describe("GET …/events/search", () => {
  it("returns the replayed events then the initial message", async () => {
    const reply = await t.call("GET", `/api/conversations/${conversationId}/events/search`);
    expectConforms("searchEvents", reply, 200);
    expect(reply.body.next_page_id).toBeNull();
    expect(reply.body.items.map((e: { kind: string }) => e.kind)).toEqual([
      "SystemPromptEvent", "MessageEvent", "ActionEvent", "ObservationEvent", "ActionEvent", "ObservationEvent", "MessageEvent", "MessageEvent", "MessageEvent",
    ]);
  });

  it("accepts the kind as a fully qualified path", async () => {
    const short = await t.call("GET", `/api/conversations/${conversationId}/events/search`, { query: { kind: "ActionEvent" } });
    const qualified = await t.call("GET", `/api/conversations/${conversationId}/events/search`, { query: { kind: "openhands.sdk.event.llm_convertible.action.ActionEvent" } });
    expect(short.body.items).toHaveLength(2);
    expect(qualified.body).toEqual(short.body);
  });

  it("404 with the reference's detail for an unknown conversation", async () => {
    const reply = await t.call("GET", `/api/conversations/${missing}/events/search`);
    expectConforms("searchEvents", reply, 404);
    expect(reply.body).toEqual({ detail: `Conversation not found: ${missing}` });
  });
});

describe("settings and git providers", () => {
  it("stores, reads back masked, keeps null-sent secrets", async () => {
    const first = await t.call("POST", "/api/settings", { json: { llm_model: "gpt-4o", llm_api_key: "sk-first-secret", language: "en" } });
    expectConforms("storeSettings", first, 200);
    expect(first.body).toEqual({ message: "Settings stored" });
    const second = await t.call("POST", "/api/settings", { json: { llm_model: null, llm_api_key: null, language: "fr" } });
    expectConforms("storeSettings", second, 200);
    const read = await t.call("GET", "/api/settings");
    expectConforms("getSettings", read, 200);
    expect(read.body).toMatchObject({ llm_model: "gpt-4o", llm_api_key: null, llm_api_key_set: true, language: "fr", search_api_key_set: false });
    expect(read.text).not.toContain("sk-first-secret");
  });

  it("stores git provider tokens and reports which are set", async () => {
    const reply = await t.call("POST", "/api/add-git-providers", { json: { provider_tokens: { github: { token: "ghp_secret_token_1", host: "github.com" } } } });
    expectConforms("addGitProviders", reply, 200);
    expect(reply.body).toEqual({ message: "Git providers stored" });
    const read = await t.call("GET", "/api/settings");
    expect(read.body.provider_tokens_set).toEqual({ github: "github.com" });
    expect(read.text).not.toContain("ghp_secret_token_1");
  });
});

describe("meta", () => {
  it("/health", async () => {
    const reply = await t.call("GET", "/health", { key: null });
    expectConforms("getHealth", reply, 200);
    expect(reply.body).toMatchObject({ status: "ok", store: "sqlite" });
  });

  it("/openapi.json is the bundled document", async () => {
    const reply = await t.call("GET", "/openapi.json", { key: null });
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe("3.1.0");
    expect(Object.keys(reply.body.paths)).toContain("/api/conversations/{conversation_id}/events/search");
  });

  it("/docs serves the reference page and its assets from the server itself", async () => {
    const page = await t.call("GET", "/docs", { key: null });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const asset of assets) {
      expect(asset.startsWith("/"), `${asset} is served locally`).toBe(true);
      expect((await t.call("GET", asset, { key: null })).status).toBe(200);
    }
  });

  it("an unknown route is a 404 in the error shape", async () => {
    const reply = await t.call("GET", "/api/nothing-here");
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ detail: "Not Found" });
  });
});

describe("auth: X-Session-API-Key on every /api route", () => {
  const routes: Array<[string, string, string, unknown?]> = [
    ["searchEvents", "GET", "/api/conversations/{id}/events/search"],
    ["countEvents", "GET", "/api/conversations/{id}/events/count"],
    ["getConversation", "GET", "/api/conversations/{id}"],
    ["createConversation", "POST", "/api/conversations", {}],
    ["storeSettings", "POST", "/api/settings", {}],
    ["getSettings", "GET", "/api/settings"],
    ["addGitProviders", "POST", "/api/add-git-providers", {}],
    ["uploadFiles", "POST", "/api/conversations/{id}/upload-files"],
  ];
  it.each(routes)("%s: missing or wrong key → 401", async (operationId, method, route, json) => {
    for (const key of [null, "wrong-key", ""]) {
      const reply = await t.call(method, route.replace("{id}", conversationId), { key, json });
      expectConforms(operationId, reply, 401);
      expect(reply.body).toEqual({ detail: "Unauthorized" });
    }
  });
});

describe("bad input: 422 with the culprit's loc, never a 500", () => {
  const search = () => `/api/conversations/${conversationId}/events/search`;
  const rows = badInputRows(() => conversationId, recording);

  it.each(rows)("%s", async (_name, operationId, method, route, options, loc) => {
    expect422(operationId, await t.call(method, route(), options), loc);
  });

  it("a cursor from another conversation", async () => {
    const other = await t.call("POST", "/api/conversations", { json: { replay_json: recording } });
    const page = await t.call("GET", `/api/conversations/${other.body.conversation_id}/events/search`, { query: { limit: 2 } });
    const reply = await t.call("GET", search(), { query: { page_id: page.body.next_page_id } });
    expect422("searchEvents", reply, ["query", "page_id"]);
    expect(reply.body.detail[0].msg).toBe("page_id belongs to another conversation");
  });

  it("a cursor used with the other order", async () => {
    const page = await t.call("GET", search(), { query: { limit: 2 } });
    const reply = await t.call("GET", search(), { query: { page_id: page.body.next_page_id, sort_order: "TIMESTAMP_DESC" } });
    expect422("searchEvents", reply, ["query", "page_id"]);
  });

  it("secrets sent with a wrong type are not echoed", async () => {
    const reply = await t.call("POST", "/api/settings", { json: { llm_api_key: 1234567890123 } });
    expect422("storeSettings", reply, ["body", "llm_api_key"]);
    expect(reply.text).not.toContain("1234567890123");
  });

  it("no request of this suite answered 500", () => {
    expect(t.logs.filter((line) => line.includes('"status":500'))).toEqual([]);
  });
});
