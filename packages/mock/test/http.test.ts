/** The stateful world over HTTP, Prism's answers on request (Prefer), and the frontend comforts. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { KEY, startTestMock, type TestMock } from "./support.js";

let t: TestMock;
let happy: string;
beforeAll(async () => {
  t = await startTestMock({ scenarios: ["happy", "errors"] });
  happy = t.mock.world.scenarios[0]!.conversationId;
});
afterAll(() => t.close());

describe("a stateful world", () => {
  it("a created conversation can be searched, and the scripted agent answers its first message", async () => {
    const created = await t.call("POST", "/api/conversations", { json: { initial_user_msg: "Fix the flaky test" } });
    expect(created.body).toMatchObject({ status: "ok", conversation_status: "STARTING" });
    const id = created.body.conversation_id;
    await expect.poll(async () => (await t.call("GET", `/api/conversations/${id}/events/count`)).body).toBe(7);
    const page = await t.call("GET", `/api/conversations/${id}/events/search`);
    expect(page.body.items.map((e: { kind: string }) => e.kind)).toEqual([
      "MessageEvent", "ConversationStateUpdateEvent", "ConversationStateUpdateEvent", "ActionEvent", "ObservationEvent", "MessageEvent", "ConversationStateUpdateEvent",
    ]);
    expect(page.body.items[5].llm_message.content[0].text).toContain("Fix the flaky test");
    expect((await t.call("GET", `/api/conversations/${id}`)).body.status).toBe("RUNNING");
    const messages = await t.call("GET", `/api/conversations/${id}/events/search`, { query: { body: "FLAKY", source: "agent" } });
    expect(messages.body.items).toHaveLength(1);
  });

  it("a replay_json fills the conversation", async () => {
    const events = exampleEvents({ seed: 5 });
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: JSON.stringify(events) } });
    const page = await t.call("GET", `/api/conversations/${created.body.conversation_id}/events/search`, { query: { limit: events.length } });
    expect(page.body.items).toEqual(events);
  });

  it("an event batch (JSONL) is appended whole, and a bad line is a 422 at its line with nothing stored", async () => {
    const created = await t.call("POST", "/api/conversations", { json: { replay_json: "[]" } });
    const id = created.body.conversation_id as string;
    const before = (await t.call("GET", `/api/conversations/${id}/events/count`)).body as number;
    const events = exampleEvents({ seed: 6 });
    const jsonl = (list: unknown[]) => list.map((e) => JSON.stringify(e)).join("\n");
    const headers = { "Content-Type": "application/x-ndjson" };
    const appended = await t.call("POST", `/api/conversations/${id}/events/batch`, { body: jsonl(events), headers });
    expect(appended.status, appended.text).toBe(200);
    expect(appended.body).toEqual({ appended: events.length, event_count: before + events.length });
    const bad = await t.call("POST", `/api/conversations/${id}/events/batch`, { body: jsonl([{ ...events[0], id: "0f9a7a9e-2c4e-4c5e-9a55-5b1f3f6b7c11" }, { kind: "Nope" }]), headers });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.body.detail[0].loc.slice(0, 2), bad.text).toEqual(["body", 2]);
    const page = await t.call("GET", `/api/conversations/${id}/events/search`, { query: { limit: 100 } });
    // Stored as sent, and nothing of the refused batch (search orders by time: compare by id).
    const byId = new Map((page.body.items as Array<{ id: string }>).map((e) => [e.id, e]));
    expect(byId.size).toBe(before + events.length);
    for (const event of events) expect(byId.get(event.id)).toEqual(event);
  });

  it("a stored setting reads back masked", async () => {
    await t.call("POST", "/api/settings", { json: { llm_model: "gpt-4o", llm_api_key: "sk-mock-secret", language: "en" } });
    const read = await t.call("GET", "/api/settings");
    expect(read.body).toMatchObject({ llm_model: "gpt-4o", llm_api_key: null, llm_api_key_set: true, language: "en" });
    expect(read.text).not.toContain("sk-mock-secret");
    await t.call("POST", "/api/add-git-providers", { json: { provider_tokens: { github: { token: "ghp_mock", host: "github.com" } } } });
    expect((await t.call("GET", "/api/settings")).body.provider_tokens_set).toEqual({ github: "github.com" });
  });

  it("the agent server's settings routes answer in its shapes, one document with the flat settings", async () => {
    const patched = await t.call("PATCH", "/api/settings", { json: { agent_settings_diff: { llm: { model: "openai/gpt-4o", api_key: "sk-mock-patched" } }, misc_settings_diff: { app_preferences: { user_consents_to_analytics: true } } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ llm_model: "openai/gpt-4o", llm_api_key_set: true, agent_settings: { llm: { model: "openai/gpt-4o", api_key: "**********" } }, user_consents_to_analytics: true });
    expect(patched.text).not.toContain("sk-mock-patched");
    expect((await t.call("GET", "/api/settings")).body.misc_settings.app_preferences.user_consents_to_analytics).toBe(true);
    const nothing = await t.call("PATCH", "/api/settings", { json: {} });
    expect(nothing.status, nothing.text).toBe(400);
    const invalid = await t.call("PATCH", "/api/settings", { json: { misc_settings_diff: 5 } });
    expect(invalid.status, invalid.text).toBe(422);
    expect(invalid.body.detail[0].loc).toEqual(["body", "misc_settings_diff"]);
    expect((await t.call("GET", "/api/settings/agent-schema")).body.model_name).toBe("AgentSettings");
    expect((await t.call("GET", "/api/settings/conversation-schema")).body.model_name).toBe("ConversationSettings");
    expect((await t.call("GET", "/api/profiles")).body).toMatchObject({ profiles: [{ name: "default", model: "openai/gpt-4o", api_key_set: true }], active_profile: "default" });
    expect((await t.call("GET", "/api/agent-profiles")).body).toEqual({ profiles: [], active_agent_profile_id: null });
  });

  it("an upload's URL serves the bytes", async () => {
    const bytes = new Uint8Array([0, 1, 2, 255, 254, 10, 13]);
    const form = new FormData();
    form.append("files", new Blob([bytes]), "data.bin");
    form.append("files", new Blob(["x"]), "../escape.txt");
    const reply = await t.call("POST", `/api/conversations/${happy}/upload-files`, { body: form });
    expect(reply.body.skipped_files).toEqual(["../escape.txt"]);
    const download = await fetch(new URL(reply.body.file_urls[0], t.url), { headers: { "X-Session-API-Key": KEY } });
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);
  });

  it("a user message over HTTP gets the scripted agent's turn with run: true, and is only recorded without", async () => {
    const send = (text: string, run?: boolean) => t.call("POST", `/api/conversations/${happy}/events`, { json: { role: "user", content: [{ type: "text", text }], ...(run !== undefined && { run }) } });
    for (const [text, run] of [["Not yet: without run", undefined], ["Not yet: run false", false], ["And the docs?", true]] as const) {
      const sent = await send(text, run);
      expect(sent.body).toMatchObject({ kind: "MessageEvent", source: "user", llm_message: { role: "user", content: [{ type: "text", text }] } });
      expect(sent.body.llm_message).not.toHaveProperty("run");
    }
    await expect.poll(async () => (await t.call("GET", `/api/conversations/${happy}/events/search`, { query: { body: "and the docs", source: "agent" } })).body.items.length).toBe(1);
    // Turns are recorded in the order their messages came: had either of the first two run, its reply would be there by now.
    expect((await t.call("GET", `/api/conversations/${happy}/events/search`, { query: { body: "not yet", source: "agent" } })).body.items).toEqual([]);
  });

  it("answers each message once, one turn after another, even one sent before the conversation runs", async () => {
    // Paced, so that both messages arrive before the conversation is RUNNING and while a turn plays.
    const paced = await startTestMock({ speed: 20 });
    try {
      const created = await paced.call("POST", "/api/conversations", { json: {} });
      const id = created.body.conversation_id as string;
      const send = (text: string) => paced.call("POST", `/api/conversations/${id}/events`, { json: { role: "user", content: [{ type: "text", text }], run: true } });
      await send("first");
      await send("second");
      const search = (query: Record<string, string | number>) => paced.call("GET", `/api/conversations/${id}/events/search`, { query });
      await expect.poll(async () => (await search({ body: "said: \"second", source: "agent" })).body.items.length).toBe(1);
      const agent = ((await search({ limit: 100 })).body.items as Array<{ source: string; kind: string; llm_message?: { content: Array<{ text: string }> } }>)
        .filter((event) => event.source === "agent")
        .map((event) => (event.kind === "MessageEvent" ? /said: "(\w+)"/.exec(event.llm_message!.content[0]!.text)![1] : event.kind));
      expect(agent).toEqual(["ActionEvent", "first", "ActionEvent", "second"]);
    } finally {
      await paced.close();
    }
  });

  it("the errors scenario ends in ERROR", async () => {
    const info = await t.call("GET", `/api/conversations/${t.mock.world.scenarios[1]!.conversationId}`);
    expect(info.body.status).toBe("ERROR");
  });
});

describe("Prism's answers on request", () => {
  const route = () => `/api/conversations/${happy}/events/search`;

  it("Prefer: code=404 answers the documented 404 example", async () => {
    const reply = await t.call("GET", route(), { headers: { Prefer: "code=404" } });
    expect(reply.status).toBe(404);
    expect(reply.body.detail).toMatch(/^Conversation not found: /);
  });

  it("Prefer: code=200 answers the spec's example page (conforming), without touching the world", async () => {
    const reply = await t.call("GET", route(), { headers: { Prefer: "code=200" } });
    expect(reply.status).toBe(200);
    expect(reply.body.items.length).toBeGreaterThan(0);
    const created = await t.call("POST", "/api/conversations", { json: {}, headers: { Prefer: "code=200" } });
    expect(created.status).toBe(200);
    expect((await t.call("GET", `/api/conversations/${created.body.conversation_id}`)).status).toBe(404);
  });

  it("Prefer: example= selects a named example, an unknown one is a 422 at the header", async () => {
    const bad = await t.call("GET", route(), { headers: { Prefer: "code=200, example=nope" } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["header", "Prefer"]);
  });

  it("Prefer: dynamic=true generates data (deterministic under the seed)", async () => {
    const [a, b] = [await t.call("GET", "/health", { headers: { Prefer: "dynamic=true" } }), await t.call("GET", "/health", { headers: { Prefer: "dynamic=true" } })];
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    const settings = await t.call("GET", "/api/settings", { headers: { Prefer: "dynamic=true" } });
    expect(settings.status).toBe(200);
  });

  it("Prefer: code=500 injects a failure in the server's error shape; a bad code is a 422", async () => {
    const reply = await t.call("GET", route(), { headers: { Prefer: "code=500" } });
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({ detail: "Internal Server Error" });
    const gateway = await t.call("POST", "/api/conversations", { json: {}, headers: { Prefer: "code=502" } });
    expect(gateway.body).toEqual({ detail: "Bad Gateway" });
    // A documented error status is Prism's: the spec's example (503: components/responses/Unavailable).
    const unavailable = await t.call("POST", "/api/conversations", { json: {}, headers: { Prefer: "code=503" } });
    expect(unavailable.status).toBe(503);
    expect(unavailable.body).toEqual({ detail: "the database did not answer within the statement timeout" });
    const bad = await t.call("GET", route(), { headers: { Prefer: "code=abc" } });
    expect(bad.status).toBe(422);
  });

  it("validation comes before Prefer, as in Prism", async () => {
    const reply = await t.call("GET", route(), { query: { limit: 0 }, headers: { Prefer: "code=200" } });
    expect(reply.status).toBe(422);
  });
});

describe("frontend comforts", () => {
  it("CORS is on by default, for the world's answers and Prism's", async () => {
    const variants: Array<Record<string, string>> = [{ Origin: "http://localhost:5173" }, { Origin: "http://localhost:5173", Prefer: "code=500" }];
    for (const headers of variants) {
      const reply = await t.call("GET", `/api/conversations/${happy}/events/search`, { headers });
      expect(reply.headers.get("access-control-allow-origin")).toBe("*");
    }
    const unauthorized = await t.call("POST", "/api/conversations", { key: null, json: {}, headers: { Origin: "http://localhost:5173" } });
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe("*");
    const preflight = await fetch(new URL("/api/conversations", t.url), {
      method: "OPTIONS",
      headers: { Origin: "http://localhost:5173", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, x-session-api-key" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type, x-session-api-key");
  });

  it("latency per request (Prefer: latency=…) is accepted, a bad one is a 422", async () => {
    expect((await t.call("GET", "/health", { headers: { Prefer: "latency=20ms" } })).status).toBe(200);
    const bad = await t.call("GET", `/api/conversations/${happy}/events/search`, { headers: { Prefer: "latency=soon" } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["header", "Prefer"]);
  });

  it("GET /__mock lists the scenarios and never the keys", async () => {
    const reply = await t.call("GET", "/__mock");
    expect(reply.body.scenarios.map((s: { name: string }) => s.name)).toEqual(["happy", "errors"]);
    expect(reply.body.scenarios[0].conversation_id).toBe(happy);
    expect(reply.text).not.toContain(KEY);
  });

  it("event search is open without a key (the interface declares none), writes are not", async () => {
    expect((await t.call("GET", `/api/conversations/${happy}/events/search`, { key: null })).status).toBe(200);
    expect((await t.call("POST", "/api/conversations", { key: null, json: {} })).status).toBe(401);
  });

  it("the docs page and its assets are the server's", async () => {
    const page = await t.call("GET", "/docs", { key: null });
    expect(page.status).toBe(200);
    expect((await t.call("GET", "/docs/assets/swagger-ui.css", { key: null })).status).toBe(200);
  });
});

describe("listing, updating and deleting conversations", () => {
  it("routes /search and /count as themselves, and PATCH and DELETE of a conversation, Prism's 422s with the server's loc", async () => {
    const before = (await t.call("GET", "/api/conversations/count")).body as number;
    const created = await t.call("POST", "/api/conversations", { json: { initial_user_msg: "list me" } });
    const id = created.body.conversation_id as string;
    const page = await t.call("GET", "/api/conversations/search", { query: { limit: 1, sort_order: "CREATED_AT_DESC" } });
    expect(page.status, page.text).toBe(200);
    expect(page.body.items.map((info: { id: string }) => info.id)).toEqual([id]);
    expect(page.body.next_page_id).toMatch(/^[0-9a-f]{32}$/); // the scenarios' conversations come after it
    const count = await t.call("GET", "/api/conversations/count");
    expect(count.status, count.text).toBe(200);
    expect(count.body).toBe(before + 1);
    const updated = await t.call("PATCH", `/api/conversations/${id}`, { json: { title: "Listed", tags: { mock: "yes" } } });
    expect([updated.status, updated.body]).toEqual([200, { success: true }]);
    expect((await t.call("GET", `/api/conversations/${id}`)).body).toMatchObject({ title: "Listed", tags: { mock: "yes" } });
    const deleted = await t.call("DELETE", `/api/conversations/${id}`);
    expect([deleted.status, deleted.body]).toEqual([200, { success: true }]);
    expect((await t.call("GET", `/api/conversations/${id}`)).status).toBe(404);
    expect((await t.call("DELETE", `/api/conversations/${id}`)).body).toEqual({ detail: `Conversation not found: ${id}` });
    expect((await t.call("GET", "/api/conversations/count")).body).toBe(before);

    const badLimit = await t.call("GET", "/api/conversations/search", { query: { limit: 101 } });
    expect([badLimit.status, badLimit.body.detail[0].loc]).toEqual([422, ["query", "limit"]]);
    const badStatus = await t.call("GET", "/api/conversations/count", { query: { status: "busy" } });
    expect([badStatus.status, badStatus.body.detail[0].loc]).toEqual([422, ["query", "status"]]);
    const badTitle = await t.call("PATCH", `/api/conversations/${happy}`, { json: { title: "x".repeat(201) } });
    expect([badTitle.status, badTitle.body.detail[0].loc]).toEqual([422, ["body", "title"]]);
    const badTag = await t.call("PATCH", `/api/conversations/${happy}`, { json: { tags: { Upper: "x" } } });
    expect([badTag.status, badTag.body.detail[0].loc]).toEqual([422, ["body", "tags", "Upper"]]);
    expect((await t.call("DELETE", `/api/conversations/${happy}`, { key: null })).status).toBe(401);
  });
});

describe("bodies larger than the front reads", () => {
  it("go to the server whole (the part read, then the rest of the stream)", async () => {
    const small = await startTestMock({ scenarios: [], jsonLimitBytes: 1024 });
    try {
      const events = exampleEvents({ seed: 11 });
      const created = await small.call("POST", "/api/conversations", { json: { replay_json: JSON.stringify(events) } });
      expect(created.status, created.text).toBe(200);
      const page = await small.call("GET", `/api/conversations/${created.body.conversation_id}/events/search`, { query: { limit: events.length } });
      expect(page.body.items).toEqual(events);
    } finally {
      await small.close();
    }
  });
});
