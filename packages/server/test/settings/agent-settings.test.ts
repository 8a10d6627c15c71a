/**
 * The agent server's view of the settings over HTTP (GET and PATCH /api/settings, the two settings
 * schemas, /api/profiles, /api/agent-profiles): one stored document read in two views that agree,
 * PATCH writing the fields the agent runs with, secrets never answered or logged, bad input a 400 or
 * a 422 naming its place.
 */
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expect422, expectConforms, startTestServer, type Reply, type TestServer } from "../support/harness.js";
import { LLM_KEY, startAgentServer, waitForStatus, type AgentServer } from "../agent/support.js";

const SECRET = "sk-patch-secret-0123456789abcdef";
const REDACTED = "**********";
const NOTHING = "At least one of agent_settings_diff, conversation_settings_diff, misc_settings_diff, active_profile, or active_agent_profile_id must be provided";

type Schemas = Record<string, { properties?: Record<string, unknown>; examples?: unknown[]; allOf?: Array<{ $ref?: string }> }>;
const schemas = (openapiDocument as { components: { schemas: Schemas } }).components.schemas;
/** The properties of a definition and of the definitions its allOf names. */
const propertiesOf = (name: string): string[] => [
  ...Object.keys(schemas[name]!.properties ?? {}),
  ...(schemas[name]!.allOf ?? []).flatMap((part) => (part.$ref ? propertiesOf(part.$ref.split("/").pop()!) : [])),
];

const patch = (t: TestServer, json: unknown) => t.call("PATCH", "/api/settings", { json });
const read = (t: TestServer) => t.call("GET", "/api/settings");

describe("GET and PATCH /api/settings", () => {
  let t: TestServer;
  const replies: Reply[] = [];
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    // Whatever a test did, no answer and no log line holds a secret it sent.
    for (const reply of replies.splice(0)) expect(reply.text).not.toContain(SECRET);
    expect(t.logs.join("\n")).not.toContain(SECRET);
    await t.close();
  });
  const kept = (reply: Reply) => (replies.push(reply), reply);

  it("answers 200 with the defaults on a fresh server, the two views side by side", async () => {
    const fresh = kept(await read(t));
    expectConforms("getSettings", fresh, 200);
    expect(fresh.body).toMatchObject({
      llm_model: null,
      llm_api_key: null,
      llm_api_key_set: false,
      max_iterations: null,
      user_consents_to_analytics: null,
      agent_settings: { schema_version: 5, agent_kind: "openhands", llm: { model: null, api_key: null, base_url: null }, mcp_config: {} },
      conversation_settings: { schema_version: 1, max_iterations: 500, confirmation_mode: false, security_analyzer: null },
      llm_api_key_is_set: false,
      active_profile: null,
      active_agent_profile_id: null,
      misc_settings: { app_preferences: { enable_sound_notifications: false } },
    });
    // No analytics answer yet: the UI keeps asking until it is a boolean.
    expect(fresh.body.misc_settings.app_preferences).not.toHaveProperty("user_consents_to_analytics");
  });

  it("has no field name in both views", () => {
    const flat = propertiesOf("SettingsView");
    const agent = propertiesOf("SettingsResponse");
    expect(agent.filter((name) => flat.includes(name))).toEqual([]);
  });

  it("PATCH of the analytics consent is the flat user_consents_to_analytics, both ways", async () => {
    const patched = kept(await patch(t, { misc_settings_diff: { app_preferences: { user_consents_to_analytics: true } } }));
    expectConforms("updateSettings", patched, 200);
    expect(patched.body).toMatchObject({ user_consents_to_analytics: true, misc_settings: { app_preferences: { user_consents_to_analytics: true } } });
    expect((await read(t)).body).toMatchObject({ user_consents_to_analytics: true, misc_settings: { app_preferences: { user_consents_to_analytics: true } } });

    expect((await t.call("POST", "/api/settings", { json: { user_consents_to_analytics: false, language: "fr" } })).status).toBe(200);
    expect((await read(t)).body.misc_settings.app_preferences).toMatchObject({ user_consents_to_analytics: false, language: "fr" });

    // A null inside the nested map removes the entry: the flat field is null again.
    const removed = kept(await patch(t, { misc_settings_diff: { app_preferences: { user_consents_to_analytics: null, enabled_skills: ["a"] } } }));
    expect(removed.body.user_consents_to_analytics).toBeNull();
    expect(removed.body.misc_settings.app_preferences).toEqual({ language: "fr", enable_sound_notifications: false, enabled_skills: ["a"] });
  });

  it("PATCH of the LLM is the flat llm_model, llm_api_key and llm_base_url; the key never comes back", async () => {
    const patched = kept(await patch(t, { agent_settings_diff: { llm: { model: "openai/gpt-4o", api_key: SECRET, base_url: "http://llm.test/v1" } } }));
    expectConforms("updateSettings", patched, 200);
    for (const headers of [{}, { "X-Expose-Secrets": "encrypted" }, { "X-Expose-Secrets": "plaintext" }] as Array<Record<string, string>>) {
      const view = kept(await t.call("GET", "/api/settings", { headers }));
      expectConforms("getSettings", view, 200);
      expect(view.body).toMatchObject({
        llm_model: "openai/gpt-4o",
        llm_api_key: null,
        llm_api_key_set: true,
        llm_base_url: "http://llm.test/v1",
        agent_settings: { llm: { model: "openai/gpt-4o", api_key: REDACTED, base_url: "http://llm.test/v1" } },
        llm_api_key_is_set: true,
        active_profile: "default",
      });
    }
    const profiles = kept(await t.call("GET", "/api/profiles"));
    expectConforms("listLlmProfiles", profiles, 200);
    expect(profiles.body).toEqual({
      profiles: [{ name: "default", model: "openai/gpt-4o", base_url: "http://llm.test/v1", provider_connection_id: null, provider_connection_broken: false, api_key_set: true }],
      active_profile: "default",
    });

    // The redacted key sent back keeps the stored one; null (RFC 7386) removes it; the model stays.
    expect(kept(await patch(t, { agent_settings_diff: { llm: { api_key: REDACTED, model: "openai/gpt-4o-mini" } } })).body).toMatchObject({ llm_api_key_set: true, llm_model: "openai/gpt-4o-mini" });
    expect(kept(await patch(t, { agent_settings_diff: { llm: { api_key: null } } })).body).toMatchObject({ llm_api_key_set: false, llm_model: "openai/gpt-4o-mini", active_profile: "default" });
    // A whole llm of null is no LLM: no profile either.
    expect(kept(await patch(t, { agent_settings_diff: { llm: null } })).body).toMatchObject({ llm_model: null, llm_base_url: null, active_profile: null });
    expect((await t.call("GET", "/api/profiles")).body).toEqual({ profiles: [], active_profile: null });
  });

  it("POST then PATCH then POST of what GET gave: the two views agree at every step, nothing is lost", async () => {
    const posted = { llm_model: "anthropic/claude-sonnet-4-5-20250929", llm_api_key: SECRET, max_iterations: 20, confirmation_mode: true, security_analyzer: "llm", git_user_name: "me" };
    expect((await t.call("POST", "/api/settings", { json: posted })).status).toBe(200);
    const agree = (body: Record<string, any>) => {
      expect(body.agent_settings.llm).toEqual({ model: body.llm_model, api_key: body.llm_api_key_set ? REDACTED : null, base_url: body.llm_base_url });
      expect(body.conversation_settings).toMatchObject({ max_iterations: body.max_iterations ?? 500, confirmation_mode: body.confirmation_mode ?? false, security_analyzer: body.security_analyzer });
      expect(body.llm_api_key_is_set).toBe(body.llm_api_key_set);
      expect(body.misc_settings.app_preferences.git_user_name).toBe(body.git_user_name ?? undefined);
    };
    agree((await read(t)).body);

    const patched = kept(await patch(t, { conversation_settings_diff: { max_iterations: 30, security_analyzer: "none", schema_version: 1, future_setting: 1 }, misc_settings_diff: { ui: { theme: "dark" } } }));
    expectConforms("updateSettings", patched, 200);
    expect(patched.body).toMatchObject({ max_iterations: 30, security_analyzer: "none", confirmation_mode: true, llm_model: posted.llm_model, llm_api_key_set: true });
    agree(patched.body);

    const current = kept(await read(t));
    expect(current.body).toEqual(patched.body);
    expect((await t.call("POST", "/api/settings", { json: current.body })).status).toBe(200);
    const again = kept(await read(t));
    expect(again.body).toEqual(current.body);
    expect(again.body.misc_settings.ui).toEqual({ theme: "dark" });
    // A null inside a nested map removes that entry; lists are replaced whole.
    const removed = kept(await patch(t, { misc_settings_diff: { ui: { theme: null, panels: ["a"] } } }));
    expect(removed.body.misc_settings.ui).toEqual({ panels: ["a"] });
  });

  it.each<[string, unknown, number, Array<string | number> | string]>([
    ["no field", {}, 400, NOTHING],
    ["only null diffs", { agent_settings_diff: null, misc_settings_diff: null }, 400, NOTHING],
    ["a null conversation setting that cannot be null", { conversation_settings_diff: { max_iterations: null } }, 422, ["body", "conversation_settings_diff", "max_iterations"]],
    ["a null confirmation_mode", { conversation_settings_diff: { confirmation_mode: null } }, 422, ["body", "conversation_settings_diff", "confirmation_mode"]],
    ["a diff that is not an object", { misc_settings_diff: 5 }, 422, ["body", "misc_settings_diff"]],
    ["an agent diff that is a list", { agent_settings_diff: [] }, 422, ["body", "agent_settings_diff"]],
    ["a model of the wrong type", { agent_settings_diff: { llm: { model: 5 } } }, 422, ["body", "agent_settings_diff", "llm", "model"]],
    ["an api_key of the wrong type", { agent_settings_diff: { llm: { api_key: 7 } } }, 422, ["body", "agent_settings_diff", "llm", "api_key"]],
    ["an LLM setting not stored here", { agent_settings_diff: { llm: { temperature: 0.2 } } }, 422, ["body", "agent_settings_diff", "llm", "temperature"]],
    ["an agent setting not stored here", { agent_settings_diff: { condenser: { enabled: true } } }, 422, ["body", "agent_settings_diff", "condenser"]],
    ["a change of the MCP servers", { agent_settings_diff: { mcp_config: { fetch: { command: "uvx" } } } }, 422, ["body", "agent_settings_diff", "mcp_config", "fetch"]],
    ["another kind of agent", { agent_settings_diff: { agent_kind: "acp" } }, 422, ["body", "agent_settings_diff", "agent_kind"]],
    ["an unknown security analyzer", { conversation_settings_diff: { security_analyzer: "invariant" } }, 422, ["body", "conversation_settings_diff", "security_analyzer"]],
    ["a fractional max_iterations", { conversation_settings_diff: { max_iterations: 2.5 } }, 422, ["body", "conversation_settings_diff", "max_iterations"]],
    ["a consent that is no boolean", { misc_settings_diff: { app_preferences: { user_consents_to_analytics: "yes" } } }, 422, ["body", "misc_settings_diff", "app_preferences", "user_consents_to_analytics"]],
    ["app preferences that are no object", { misc_settings_diff: { app_preferences: 3 } }, 422, ["body", "misc_settings_diff", "app_preferences"]],
    ["an ill-formed profile name", { active_profile: "no such name!" }, 422, ["body", "active_profile"]],
    ["a body that is no object", [1], 422, ["body"]],
    ["a profile this server does not have", { active_profile: "fast" }, 404, "Profile 'fast' not found"],
    ["an agent profile", { active_agent_profile_id: "3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9" }, 404, "Agent profile '3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9' not found"],
  ])("refuses %s, changing nothing", async (_name, body, status, expected) => {
    expect((await patch(t, { agent_settings_diff: { llm: { model: "openai/gpt-4o", api_key: SECRET } } })).status).toBe(200);
    const before = kept(await read(t)).body;
    const reply = kept(await patch(t, body));
    if (Array.isArray(expected)) expect422("updateSettings", reply, expected);
    else {
      expectConforms("updateSettings", reply, status);
      expect(reply.body).toEqual({ detail: expected });
    }
    expect(kept(await read(t)).body).toEqual(before);
  });

  it("accepts null for what it does not store (removing nothing), and the active profile it has", async () => {
    const reply = kept(await patch(t, { agent_settings_diff: { llm: { model: "openai/gpt-4o", auth_type: null }, condenser: null, agent_kind: "openhands" }, active_profile: "default", active_agent_profile_id: null }));
    expectConforms("updateSettings", reply, 200);
    expect(reply.body).toMatchObject({ llm_model: "openai/gpt-4o", active_profile: "default" });
    expect422("updateSettings", kept(await patch(t, { active_profile: null })), ["body", "active_profile"]);
  });
});

describe("the settings schemas and the profiles", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it.each([
    ["getAgentSettingsSchema", "/api/settings/agent-schema", "AgentSettingsSchema"],
    ["getConversationSettingsSchema", "/api/settings/conversation-schema", "ConversationSettingsSchema"],
  ])("%s answers the spec's document", async (operationId, path, name) => {
    const reply = await t.call("GET", path);
    expectConforms(operationId, reply, 200);
    expect(reply.body).toEqual(schemas[name]!.examples![0]);
    expect((await t.call("GET", path, { key: null })).status).toBe(401);
  });

  it("lists no LLM profile and no agent profile on a fresh server", async () => {
    const profiles = await t.call("GET", "/api/profiles");
    expectConforms("listLlmProfiles", profiles, 200);
    expect(profiles.body).toEqual({ profiles: [], active_profile: null });
    const agents = await t.call("GET", "/api/agent-profiles");
    expectConforms("listAgentProfiles", agents, 200);
    expect(agents.body).toEqual({ profiles: [], active_agent_profile_id: null });
  });
});

describe("the agent runs the LLM a PATCH set", () => {
  let s: AgentServer;
  beforeAll(async () => {
    s = await startAgentServer();
  });
  afterAll(() => s.close());

  it("calls the patched endpoint with the patched key and model, the redacted key sent back kept", async () => {
    const reply = await s.t.call("PATCH", "/api/settings", {
      json: { agent_settings_diff: { llm: { model: "openai/gpt-4o", api_key: LLM_KEY, base_url: s.llm.url } }, conversation_settings_diff: { max_iterations: 3 } },
    });
    expectConforms("updateSettings", reply, 200);
    // What a GET gave, sent back (the UI's round trip): the stored key stays.
    const echoed = await s.t.call("PATCH", "/api/settings", { json: { agent_settings_diff: reply.body.agent_settings } });
    expectConforms("updateSettings", echoed, 200);
    s.llm.play({ toolCalls: [{ name: "finish", arguments: { message: "done" } }] });
    const { peer } = await s.create({ initial_user_msg: "hello" });
    await waitForStatus(peer, "finished");
    expect(s.llm.requests[0]!.headers.authorization).toBe(`Bearer ${LLM_KEY}`);
    expect((s.llm.requests[0]!.body as { model: string }).model).toBe("gpt-4o");
  });
});
