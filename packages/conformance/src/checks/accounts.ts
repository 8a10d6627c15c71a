/**
 * Account-scoped operations: settings and git-provider tokens stored and read back, and secrets
 * that never come back. These checks overwrite the account's settings and tokens with plainly-test
 * values (see the README): run the suite against a test account.
 */
import { ensure, expect422, expectConforms, expectStatus, type Check } from "../check.js";
import { TEST_SETTINGS, type CheckContext } from "../context.js";
import { describeReply, type Reply } from "../http.js";

/** The first reply (body or headers) that contains one of the secrets, worded as evidence. */
function leak(replies: readonly Reply[], secrets: Record<string, string>): string | undefined {
  for (const reply of replies) {
    const headers: string[] = [];
    reply.headers.forEach((value, name) => headers.push(`${name}: ${value}`));
    for (const [name, secret] of Object.entries(secrets)) {
      if (reply.text.includes(secret)) return `the stored ${name} is in the body of ${describeReply(reply)}`;
      if (headers.some((h) => h.includes(secret))) return `the stored ${name} is in a header of ${reply.method} ${reply.target}`;
    }
  }
  return undefined;
}

/** Stores the test settings with the run's secrets and reads them back. */
async function storeAndRead(ctx: CheckContext): Promise<{ stored: Reply; read: Reply; secrets: Record<string, string> }> {
  const { values } = await ctx.secrets();
  const stored = await ctx.request("POST", "/api/settings", {
    json: { ...TEST_SETTINGS, llm_api_key: values.llm_api_key, search_api_key: values.search_api_key, sandbox_api_key: values.sandbox_api_key },
  });
  expectConforms(ctx, "storeSettings", stored, 200);
  return { stored, read: await ctx.request("GET", "/api/settings"), secrets: values };
}

export const accountChecks: Check[] = [
  {
    id: "settings.store",
    title: "POST /api/settings stores settings and answers a MessageResponse",
    spec: "storeSettings 200",
    async run(ctx) {
      expectConforms(ctx, "storeSettings", await ctx.request("POST", "/api/settings", { json: TEST_SETTINGS }), 200);
    },
  },
  {
    id: "settings.read-back",
    title: "GET /api/settings returns what was stored, the secrets blanked and flagged as set",
    spec: "getSettings 200 (SettingsView)",
    needs: ["extension:getSettings"],
    async run(ctx) {
      const { read } = await storeAndRead(ctx);
      expectConforms(ctx, "getSettings", read, 200);
      for (const [name, value] of Object.entries(TEST_SETTINGS)) {
        ensure(read.json[name] === value, () => `${name} reads back as ${JSON.stringify(read.json[name])} instead of ${JSON.stringify(value)}`);
      }
      for (const name of ["llm_api_key", "search_api_key", "sandbox_api_key"]) {
        ensure(read.json[`${name}_set`] === true, `${name}_set is ${JSON.stringify(read.json[`${name}_set`])} after storing one`);
      }
    },
  },
  {
    id: "git-providers.store",
    title: "POST /api/add-git-providers stores tokens and answers a MessageResponse",
    spec: "addGitProviders 200",
    async run(ctx) {
      const { values } = await ctx.secrets();
      const reply = await ctx.request("POST", "/api/add-git-providers", { json: { provider_tokens: { github: { token: values.github_token, host: "github.invalid" } } } });
      expectConforms(ctx, "addGitProviders", reply, 200);
    },
  },
  {
    id: "git-providers.read-back",
    title: "stored provider tokens show in GET /api/settings as provider → host, never the token",
    spec: "getSettings 200 (SettingsView.provider_tokens_set)",
    needs: ["extension:getSettings"],
    async run(ctx) {
      const { values } = await ctx.secrets();
      const stored = await ctx.request("POST", "/api/add-git-providers", { json: { provider_tokens: { github: { token: values.github_token, host: "github.invalid" } } } });
      expectStatus(stored, 200);
      const read = await ctx.request("GET", "/api/settings");
      expectConforms(ctx, "getSettings", read, 200);
      ensure(read.json.provider_tokens_set?.github === "github.invalid", () => `provider_tokens_set is ${JSON.stringify(read.json.provider_tokens_set)}, not {"github":"github.invalid"}`);
    },
  },
  {
    id: "secrets.settings-view",
    title: "GET /api/settings contains none of the stored secrets",
    spec: "SettingsView (secrets blanked)",
    needs: ["extension:getSettings"],
    async run(ctx) {
      const { read, secrets } = await storeAndRead(ctx);
      const found = leak([read], secrets);
      ensure(!found, () => found!);
      expectConforms(ctx, "getSettings", read, 200);
    },
  },
  {
    id: "secrets.error-echo",
    title: "422 and 401 answers do not echo a secret that was sent",
    spec: "storeSettings 422, addGitProviders 422, 401",
    async run(ctx) {
      const { values } = await ctx.secrets();
      const replies = [
        await ctx.request("POST", "/api/settings", { json: { llm_api_key: { nested: values.llm_api_key }, search_api_key: [values.search_api_key] } }),
        await ctx.request("POST", "/api/settings", { json: { sandbox_api_key: 12345, llm_api_key: values.llm_api_key, max_iterations: "many" } }),
        await ctx.request("POST", "/api/add-git-providers", { json: { provider_tokens: { github: { token: { value: values.github_token } } } } }),
        await ctx.request("POST", "/api/settings", { key: values.llm_api_key, json: {} }),
      ];
      for (const reply of replies.slice(0, 3)) expectStatus(reply, 422);
      const found = leak(replies, values);
      ensure(!found, () => found!);
    },
  },
  {
    id: "settings.agent-view",
    title: "PATCH /api/settings sets the LLM and the analytics consent, and both views of GET /api/settings show them, the key redacted",
    spec: "updateSettings 200, getSettings 200 (AccountSettingsView)",
    needs: ["extension:updateSettings", "extension:getSettings"],
    async run(ctx) {
      const { values } = await ctx.secrets();
      const model = TEST_SETTINGS.llm_model;
      const patched = await ctx.request("PATCH", "/api/settings", {
        json: { agent_settings_diff: { llm: { model, api_key: values.llm_api_key } }, misc_settings_diff: { app_preferences: { user_consents_to_analytics: false } } },
      });
      expectConforms(ctx, "updateSettings", patched, 200);
      const read = await ctx.request("GET", "/api/settings");
      expectConforms(ctx, "getSettings", read, 200);
      const found = leak([patched, read], values);
      ensure(!found, () => found!);
      for (const reply of [patched, read]) {
        const body = reply.json;
        ensure(body.llm_model === model && body.agent_settings?.llm?.model === model, () => `llm_model is ${JSON.stringify(body.llm_model)} and agent_settings.llm.model ${JSON.stringify(body.agent_settings?.llm?.model)}, not both ${model}`);
        ensure(body.llm_api_key_set === true && body.llm_api_key_is_set === true, () => `llm_api_key_set is ${body.llm_api_key_set} and llm_api_key_is_set ${body.llm_api_key_is_set} after patching a key`);
        ensure(body.agent_settings?.llm?.api_key === "**********", () => `agent_settings.llm.api_key reads ${JSON.stringify(body.agent_settings?.llm?.api_key)}, not the redacted **********`);
        const consent = body.misc_settings?.app_preferences?.user_consents_to_analytics;
        ensure(consent === false && body.user_consents_to_analytics === false, () => `the consent reads ${JSON.stringify(consent)} in misc_settings and ${JSON.stringify(body.user_consents_to_analytics)} flat, not false`);
      }
    },
  },
  {
    id: "settings.patch-invalid",
    title: "PATCH /api/settings with nothing to change is a 400; a wrong value is a 422 naming it, and changes nothing",
    spec: "updateSettings 400, 422",
    needs: ["extension:updateSettings", "extension:getSettings"],
    async run(ctx) {
      const before = await ctx.request("GET", "/api/settings");
      expectConforms(ctx, "updateSettings", await ctx.request("PATCH", "/api/settings", { json: {} }), 400);
      const cases: Array<[unknown, Array<string | number>]> = [
        [{ conversation_settings_diff: { max_iterations: null } }, ["body", "conversation_settings_diff", "max_iterations"]],
        [{ conversation_settings_diff: { confirmation_mode: "yes" } }, ["body", "conversation_settings_diff", "confirmation_mode"]],
        [{ misc_settings_diff: 5 }, ["body", "misc_settings_diff"]],
        [{ agent_settings_diff: { llm: { model: 5 } } }, ["body", "agent_settings_diff", "llm", "model"]],
      ];
      for (const [json, loc] of cases) expect422(ctx, "updateSettings", await ctx.request("PATCH", "/api/settings", { json }), { loc });
      const after = await ctx.request("GET", "/api/settings");
      ensure(after.text === before.text, "GET /api/settings answers differently after refused PATCHes");
    },
  },
  {
    id: "settings.schemas",
    title: "GET /api/settings/agent-schema and /conversation-schema answer SettingsSchema documents",
    spec: "getAgentSettingsSchema 200, getConversationSettingsSchema 200",
    needs: ["extension:getAgentSettingsSchema", "extension:getConversationSettingsSchema"],
    async run(ctx) {
      for (const [operationId, path, keys] of [
        ["getAgentSettingsSchema", "/api/settings/agent-schema", ["llm.model", "llm.api_key"]],
        ["getConversationSettingsSchema", "/api/settings/conversation-schema", ["max_iterations", "confirmation_mode"]],
      ] as const) {
        const reply = await ctx.request("GET", path);
        expectConforms(ctx, operationId, reply, 200);
        const fields = (reply.json.sections as Array<{ fields: Array<{ key: string }> }>).flatMap((section) => section.fields.map((field) => field.key));
        for (const key of keys) ensure(fields.includes(key), () => `${path} has no field ${key} (it has ${fields.join(", ")})`);
      }
    },
  },
  {
    id: "profiles.list",
    title: "GET /api/profiles and /api/agent-profiles list profiles, the active one among them",
    spec: "listLlmProfiles 200, listAgentProfiles 200",
    needs: ["extension:listLlmProfiles", "extension:listAgentProfiles"],
    async run(ctx) {
      const llm = await ctx.request("GET", "/api/profiles");
      expectConforms(ctx, "listLlmProfiles", llm, 200);
      const names = (llm.json.profiles as Array<{ name: string }>).map((profile) => profile.name);
      ensure(llm.json.active_profile == null || names.includes(llm.json.active_profile), () => `active_profile ${JSON.stringify(llm.json.active_profile)} is not among ${JSON.stringify(names)}`);
      const agents = await ctx.request("GET", "/api/agent-profiles");
      expectConforms(ctx, "listAgentProfiles", agents, 200);
      const ids = (agents.json.profiles as Array<{ id?: string | null }>).map((profile) => profile.id);
      const active = agents.json.active_agent_profile_id;
      ensure(active == null || ids.includes(active), () => `active_agent_profile_id ${JSON.stringify(active)} is not among ${JSON.stringify(ids)}`);
    },
  },
  {
    id: "secrets.list-names",
    title: "GET /api/settings/secrets lists the stored custom secret by name, without its value",
    spec: "listSecrets 200",
    needs: ["extension:listSecrets"],
    async run(ctx) {
      const { values } = await ctx.secrets();
      const listed = await ctx.request("GET", "/api/settings/secrets");
      expectConforms(ctx, "listSecrets", listed, 200);
      const names = (listed.json.secrets as Array<{ name: string }>).map((secret) => secret.name);
      ensure(names.includes("ACS_CONFORMANCE"), () => `the stored custom secret ACS_CONFORMANCE is not among ${JSON.stringify(names)}`);
      ensure(!listed.text.includes(String(values.custom_secret)), "the list holds a secret's value");
    },
  },
  {
    id: "secrets.all-responses",
    title: "no answer of the whole run (body or header) contains a stored secret",
    spec: "Settings secrets (llm_api_key, search_api_key, sandbox_api_key, custom secrets, provider tokens, MCP api_key)",
    async run(ctx) {
      const { values } = await ctx.secrets();
      // A sweep of reads, so that something is scanned even when this check runs alone.
      const { id } = await ctx.main();
      await ctx.request("GET", "/api/settings");
      await ctx.request("GET", `/api/conversations/${id}/events/search`, { query: { limit: 5 } });
      await ctx.request("GET", `/api/conversations/${id}`);
      const created = await ctx.createConversation({ initial_user_msg: "hi", mcp_config: { sse_servers: [{ url: "https://mcp.invalid/sse", api_key: values.mcp_api_key }] } });
      await ctx.request("GET", `/api/conversations/${created}`);
      await ctx.request("GET", `/api/conversations/${created}/events/search`);
      const scanned = ctx.received;
      const found = leak(scanned, values);
      ensure(!found, () => found!);
      return `${scanned.length} answers scanned`;
    },
  },
];
