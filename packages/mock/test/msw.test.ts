/** MSW handlers from the same world: a frontend's unit tests run without any server, same answers. */
import { setupServer } from "msw/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMockHandlers, mockUrlPattern, type MockHandlers } from "../src/msw.js";
import { KEY, specValidators } from "./support.js";

const BASE = "http://localhost:4010";
let mock: MockHandlers;
let server: ReturnType<typeof setupServer>;
beforeAll(async () => {
  mock = await createMockHandlers({ baseUrl: BASE, scenarios: ["happy", "long"] });
  server = setupServer(...mock.handlers);
  server.listen({ onUnhandledRequest: "error" });
});
afterAll(() => {
  server.close();
  mock.close();
});

const json = async (response: Response, operationId: string) => {
  const body = await response.json();
  expect(specValidators.response(operationId, response.status, body)).toEqual([]);
  return body;
};

describe("MSW handlers", () => {
  it("serve event search with the server's paging", async () => {
    const long = mock.world.scenarios[1]!;
    const first = await json(await fetch(`${BASE}/api/conversations/${long.conversationId}/events/search?limit=50`), "searchEvents");
    expect(first.items.map((e: { id: string }) => e.id)).toEqual(long.events.slice(0, 50).map((e) => e.id));
    const second = await json(await fetch(`${BASE}/api/conversations/${long.conversationId}/events/search?limit=50&page_id=${encodeURIComponent(first.next_page_id)}`), "searchEvents");
    expect(second.items[0].id).toBe(long.events[50]!.id);
  });

  it("keep state: create, then search; settings masked", async () => {
    const headers = { "X-Session-API-Key": KEY, "Content-Type": "application/json" };
    const created = await json(await fetch(`${BASE}/api/conversations`, { method: "POST", headers, body: JSON.stringify({ initial_user_msg: "hello" }) }), "createConversation");
    const page = await json(await fetch(`${BASE}/api/conversations/${created.conversation_id}/events/search`), "searchEvents");
    expect(page.items[0]).toMatchObject({ kind: "MessageEvent", source: "user" });
    await json(await fetch(`${BASE}/api/settings`, { method: "POST", headers, body: JSON.stringify({ llm_api_key: "sk-secret" }) }), "storeSettings");
    const settings = await json(await fetch(`${BASE}/api/settings`, { headers }), "getSettings");
    expect(settings).toMatchObject({ llm_api_key: null, llm_api_key_set: true });
  });

  it("answer the agent server's settings routes: PATCH, the schemas, the profiles", async () => {
    const headers = { "X-Session-API-Key": KEY, "Content-Type": "application/json" };
    const patched = await json(
      await fetch(`${BASE}/api/settings`, { method: "PATCH", headers, body: JSON.stringify({ agent_settings_diff: { llm: { model: "openai/gpt-4o", api_key: "sk-msw-secret" } }, misc_settings_diff: { app_preferences: { user_consents_to_analytics: true } } }) }),
      "updateSettings",
    );
    expect(patched).toMatchObject({ llm_model: "openai/gpt-4o", agent_settings: { llm: { api_key: "**********" } }, user_consents_to_analytics: true });
    expect(JSON.stringify(patched)).not.toContain("sk-msw-secret");
    const settings = await json(await fetch(`${BASE}/api/settings`, { headers }), "getSettings");
    expect(settings).toMatchObject({ misc_settings: { app_preferences: { user_consents_to_analytics: true } }, llm_api_key_is_set: true });
    const nothing = await fetch(`${BASE}/api/settings`, { method: "PATCH", headers, body: "{}" });
    expect(nothing.status).toBe(400);
    await json(nothing, "updateSettings");
    const invalid = await fetch(`${BASE}/api/settings`, { method: "PATCH", headers, body: JSON.stringify({ conversation_settings_diff: { max_iterations: null } }) });
    expect((await json(invalid, "updateSettings")).detail[0].loc).toEqual(["body", "conversation_settings_diff", "max_iterations"]);
    expect((await json(await fetch(`${BASE}/api/settings/agent-schema`, { headers }), "getAgentSettingsSchema")).model_name).toBe("AgentSettings");
    expect((await json(await fetch(`${BASE}/api/settings/conversation-schema`, { headers }), "getConversationSettingsSchema")).model_name).toBe("ConversationSettings");
    expect(await json(await fetch(`${BASE}/api/profiles`, { headers }), "listLlmProfiles")).toMatchObject({ profiles: [{ name: "default", api_key_set: true }], active_profile: "default" });
    expect(await json(await fetch(`${BASE}/api/agent-profiles`, { headers }), "listAgentProfiles")).toEqual({ profiles: [], active_agent_profile_id: null });
  });

  it("answer bad input as the mock does (Prism's and the server's 422s), and failures on request", async () => {
    const id = mock.world.scenarios[0]!.conversationId;
    const limit = await json(await fetch(`${BASE}/api/conversations/${id}/events/search?limit=0`), "searchEvents");
    expect(limit.detail[0].loc).toEqual(["query", "limit"]);
    const ids = await fetch(`${BASE}/api/conversations?ids=${id}&ids=nope`, { headers: { "X-Session-API-Key": KEY } });
    expect((await json(ids, "batchGetConversations")).detail[0].loc).toEqual(["query", "ids", 1]);
    const malformed = await fetch(`${BASE}/api/conversations`, { method: "POST", headers: { "X-Session-API-Key": KEY, "Content-Type": "application/json" }, body: '{"initial_user_msg": ' });
    expect((await json(malformed, "createConversation")).detail[0].loc).toEqual(["body", 21]);
    const failure = await fetch(`${BASE}/api/conversations/${id}/events/search`, { headers: { Prefer: "code=502" } });
    expect(failure.status).toBe(502);
    expect(await failure.json()).toEqual({ detail: "Bad Gateway" });
    // Documented (components/responses/Unavailable): the spec's example.
    const unavailable = await fetch(`${BASE}/api/conversations/${id}/events/search`, { headers: { Prefer: "code=503" } });
    expect(unavailable.status).toBe(503);
    expect(await unavailable.json()).toEqual({ detail: "the database did not answer within the statement timeout" });
  });

  it("upload and download bytes", async () => {
    const id = mock.world.scenarios[0]!.conversationId;
    const form = new FormData();
    form.append("files", new Blob([new Uint8Array([0, 255, 1])]), "b.bin");
    const uploaded = await json(await fetch(`${BASE}/api/conversations/${id}/upload-files`, { method: "POST", headers: { "X-Session-API-Key": KEY }, body: form }), "uploadFiles");
    const bytes = new Uint8Array(await (await fetch(`${BASE}${uploaded.file_urls[0]}`, { headers: { "X-Session-API-Key": KEY } })).arrayBuffer());
    expect(bytes).toEqual(new Uint8Array([0, 255, 1]));
  });

  it("match the mock's paths under the base URL only", () => {
    expect(mockUrlPattern(BASE).test(`${BASE}/api/settings`)).toBe(true);
    expect(mockUrlPattern(BASE).test(`${BASE}/other`)).toBe(false);
    expect(mockUrlPattern(BASE).test("http://elsewhere:1/api/settings")).toBe(false);
    expect(mockUrlPattern().test("https://any.example/health")).toBe(true);
  });
});
