/**
 * The OpenHands agent server's view of the settings (openhands-agent-server 1.43.1:
 * settings_router.py, profiles_router.py, persistence/models.py), derived from the one stored
 * settings document that POST /api/settings writes (core/settings.ts), and PATCH /api/settings
 * merged into that same document. Pure functions over JSON, shared by the server and the browser
 * mock; no HTTP, storage or cryptography (secrets are sealed by the injected {@link SettingsSealer}).
 *
 * One document, two views: each value of the agent server's view is a stored Settings field, never a
 * copy of it, so the views cannot disagree:
 * - `agent_settings.llm.model` / `.api_key` / `.base_url` are `llm_model` / `llm_api_key` /
 *   `llm_base_url` (the runtime reads those, so a PATCH of the LLM configures the agent).
 * - `conversation_settings.max_iterations` / `.confirmation_mode` / `.security_analyzer` are the
 *   fields of those names; a null field reads the default the agent runs with (the conversation
 *   schema's `default`s, spec/schemas/agent-settings.yaml).
 * - `misc_settings` is stored as given (the agent server never reads it), except the app preferences
 *   that are Settings fields (MIRRORED_PREFERENCES): they live in their fields only, are shown under
 *   `misc_settings.app_preferences` while set, and a patch of them writes the fields.
 * - `llm_api_key_is_set` is `llm_api_key_set`; `active_profile` is `default` while a model is stored.
 * Secrets are never returned: a stored one reads `**********` in every mode of X-Expose-Secrets.
 *
 * PATCH (settings_router.py `update_settings`, persistence/models.py `PersistedSettings.update`):
 * `agent_settings_diff` is an RFC 7386 merge patch (null removes: the field goes back to null);
 * `conversation_settings_diff` and `misc_settings_diff` are deep merges where null inside a nested map
 * removes that entry. Values the spec's schema lets through but this server cannot store are refused
 * with a {@link SettingsInputError} naming their place, never silently dropped.
 */
import type { AgentSettingsView, ConversationSettingsView, ProfileListResponse, SettingsResponse, SettingsSchema, SettingsUpdateRequest } from "@acs-toolkit/schema";
import { SETTINGS_FIELDS } from "@acs-toolkit/schema";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { defaultStoredSettings, type SettingsSealer, type StoredMCPConfig, type StoredSettings } from "./settings.js";

/** What a stored secret reads as (the agent server's redaction). */
const REDACTED_SECRET = "**********" as const;

/** This server's one LLM profile: its stored LLM (the agent server's seed profile is named so too). */
const DEFAULT_LLM_PROFILE = "default";

/** The `misc_settings.app_preferences` entries that are Settings fields of the same name and type. */
const MIRRORED_PREFERENCES = ["language", "user_consents_to_analytics", "enable_sound_notifications", "git_user_name", "git_user_email"] as const;

/** The agent settings keys this server stores; any other is accepted only as null (removing nothing). */
const LLM_KEYS = ["model", "api_key", "base_url"] as const;

type JsonObject = Record<string, unknown>;

/** A value of a request this server cannot store, named by its place in the body (`loc` without `body`). */
export class SettingsInputError extends TypeError {
  constructor(
    readonly loc: Array<string | number>,
    message: string,
  ) {
    super(message);
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A schema document of the spec: the one example of its definition (spec/schemas/agent-settings.yaml). */
function specDocument(name: string): SettingsSchema {
  const schemas = (openapiDocument as { components?: { schemas?: Record<string, { examples?: unknown[] }> } }).components?.schemas;
  const document = schemas?.[name]?.examples?.[0];
  if (!isObject(document)) throw new Error(`spec: ${name} has no example to serve`);
  return document as unknown as SettingsSchema;
}

/** GET /api/settings/agent-schema. */
export const AGENT_SETTINGS_SCHEMA: SettingsSchema = specDocument("AgentSettingsSchema");
/** GET /api/settings/conversation-schema. */
export const CONVERSATION_SETTINGS_SCHEMA: SettingsSchema = specDocument("ConversationSettingsSchema");

/** The default of a conversation schema field: what the agent runs with while the setting is null. */
function conversationDefault(key: string): unknown {
  for (const section of CONVERSATION_SETTINGS_SCHEMA.sections) {
    const field = section.fields.find((candidate) => candidate.key === key);
    if (field) return field.default;
  }
  throw new Error(`spec: ConversationSettingsSchema has no field ${key}`);
}

const CONVERSATION_DEFAULTS = {
  max_iterations: conversationDefault("max_iterations") as number,
  confirmation_mode: conversationDefault("confirmation_mode") as boolean,
  security_analyzer: conversationDefault("security_analyzer") as string | null,
};

/** The stored MCP servers keyed by name, as the SDK's `mcp_config` map: stdio ones by name, remote ones by url. */
function mcpMap(mcp: StoredMCPConfig | null): AgentSettingsView["mcp_config"] {
  const entries: Array<[string, AgentSettingsView["mcp_config"][string]]> = [];
  const bearer = (apiKey: string | null) => (apiKey === null ? {} : { headers: { Authorization: REDACTED_SECRET } });
  for (const server of mcp?.stdio_servers ?? []) {
    entries.push([server.name, { command: server.command, args: [...server.args], env: Object.fromEntries(Object.keys(server.env).map((name) => [name, REDACTED_SECRET])) }]);
  }
  for (const server of mcp?.sse_servers ?? []) entries.push([server.url, { url: server.url, transport: "sse", ...bearer(server.api_key) }]);
  for (const server of mcp?.shttp_servers ?? []) {
    entries.push([server.url, { url: server.url, transport: "streamable-http", timeout: server.timeout, ...bearer(server.api_key) }]);
  }
  return Object.fromEntries(entries);
}

/** The stored `misc_settings` with the mirrored preferences that are set put back under `app_preferences`. */
function miscView(s: StoredSettings): JsonObject {
  const misc = structuredClone(s.misc_settings ?? {});
  const mirrored = MIRRORED_PREFERENCES.filter((name) => s[name] !== null).map((name) => [name, s[name]] as const);
  if (mirrored.length) misc.app_preferences = { ...(isObject(misc.app_preferences) ? misc.app_preferences : {}), ...Object.fromEntries(mirrored) };
  return misc;
}

const activeProfile = (s: StoredSettings): string | null => (s.llm_model ? DEFAULT_LLM_PROFILE : null);

/** The agent server's SettingsResponse of the stored document (GET and PATCH /api/settings). */
export function agentServerView(stored: StoredSettings | undefined): SettingsResponse {
  const s = stored ?? defaultStoredSettings();
  const conversation: ConversationSettingsView = {
    schema_version: 1,
    max_iterations: s.max_iterations ?? CONVERSATION_DEFAULTS.max_iterations,
    confirmation_mode: s.confirmation_mode ?? CONVERSATION_DEFAULTS.confirmation_mode,
    security_analyzer: s.security_analyzer ?? CONVERSATION_DEFAULTS.security_analyzer,
  };
  return {
    agent_settings: {
      schema_version: 5,
      agent_kind: "openhands",
      llm: { model: s.llm_model, api_key: s.llm_api_key === null ? null : REDACTED_SECRET, base_url: s.llm_base_url },
      mcp_config: mcpMap(s.mcp_config),
    },
    conversation_settings: conversation,
    llm_api_key_is_set: s.llm_api_key !== null,
    active_profile: activeProfile(s),
    active_agent_profile_id: null,
    misc_settings: miscView(s),
  };
}

/** GET /api/profiles: the stored LLM as the profile `default`, or none while no model is stored. */
export function llmProfiles(stored: StoredSettings | undefined): ProfileListResponse {
  const s = stored ?? defaultStoredSettings();
  const active = activeProfile(s);
  if (active === null) return { profiles: [], active_profile: null };
  return {
    profiles: [{ name: active, model: s.llm_model, base_url: s.llm_base_url, provider_connection_id: null, provider_connection_broken: false, api_key_set: s.llm_api_key !== null }],
    active_profile: active,
  };
}

/** Whether a PATCH asks for anything (the agent server: a null diff is no diff; a null pointer is a change). */
export function asksForUpdate(request: SettingsUpdateRequest): boolean {
  return (
    request.agent_settings_diff != null ||
    request.conversation_settings_diff != null ||
    request.misc_settings_diff != null ||
    Object.hasOwn(request, "active_profile") ||
    Object.hasOwn(request, "active_agent_profile_id")
  );
}

/**
 * A deep merge as persistence/models.py `_deep_merge`: nested objects merge, null inside a nested
 * map removes that entry, a null at the top level is kept, anything else replaces (lists whole).
 */
function deepMerge(base: JsonObject, overlay: JsonObject, nested = false): JsonObject {
  const result: JsonObject = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    if (value === null && nested) delete result[key];
    else if (isObject(result[key]) && isObject(value)) result[key] = deepMerge(result[key] as JsonObject, value, true);
    else result[key] = value;
  }
  return result;
}

/** RFC 7386: `patch` applied to `target` (null removes, objects merge, anything else replaces). */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function applyAgentDiff(next: StoredSettings, diff: JsonObject, cipher: SettingsSealer): void {
  for (const [key, value] of Object.entries(diff)) {
    const where = ["agent_settings_diff", key];
    if (key === "schema_version") continue;
    if (key === "agent_kind") {
      if (value !== null && value !== "openhands") throw new SettingsInputError(where, "this server runs only the openhands agent");
      continue;
    }
    if (key === "mcp_config") {
      // Read only here: sending back what GET gave (or any patch that changes nothing) is accepted.
      const current = mcpMap(next.mcp_config);
      const refused = "MCP servers are stored with POST /api/settings (mcp_config) on this server";
      if (!isObject(value)) throw new SettingsInputError(where, refused);
      for (const [name, server] of Object.entries(value)) {
        const before = Object.hasOwn(current, name) ? current[name] : undefined;
        if (JSON.stringify(mergePatch(before, server)) !== JSON.stringify(before)) throw new SettingsInputError([...where, name], refused);
      }
      continue;
    }
    if (key !== "llm") {
      if (value !== null) throw new SettingsInputError(where, "is not an agent setting this server stores (it stores llm.model, llm.api_key and llm.base_url)");
      continue;
    }
    if (value === null) {
      next.llm_model = null;
      next.llm_api_key = null;
      next.llm_base_url = null;
      continue;
    }
    if (!isObject(value)) throw new SettingsInputError(where, "must be an object or null");
    for (const [llmKey, llmValue] of Object.entries(value)) {
      const at = [...where, llmKey];
      if (!(LLM_KEYS as readonly string[]).includes(llmKey)) {
        if (llmValue !== null) throw new SettingsInputError(at, "is not an LLM setting this server stores (it stores model, api_key and base_url)");
        continue;
      }
      if (llmValue !== null && typeof llmValue !== "string") throw new SettingsInputError(at, "must be a string or null");
      if (llmKey === "model") next.llm_model = llmValue;
      else if (llmKey === "base_url") next.llm_base_url = llmValue;
      // The redacted value a GET gave keeps the stored key; "" clears it, as in POST /api/settings.
      else if (llmValue !== REDACTED_SECRET) next.llm_api_key = llmValue ? cipher.encrypt(llmValue) : null;
    }
  }
}

function applyConversationDiff(next: StoredSettings, diff: JsonObject): void {
  const where = (key: string) => ["conversation_settings_diff", key];
  if (Object.hasOwn(diff, "max_iterations")) {
    const value = diff.max_iterations;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) throw new SettingsInputError(where("max_iterations"), "must be an integer of at least 1");
    next.max_iterations = value;
  }
  if (Object.hasOwn(diff, "confirmation_mode")) {
    if (typeof diff.confirmation_mode !== "boolean") throw new SettingsInputError(where("confirmation_mode"), "must be a boolean");
    next.confirmation_mode = diff.confirmation_mode;
  }
  if (Object.hasOwn(diff, "security_analyzer")) {
    const value = diff.security_analyzer;
    if (value !== null && value !== "llm" && value !== "none") throw new SettingsInputError(where("security_analyzer"), "must be llm, none or null");
    next.security_analyzer = value;
  }
  // Other keys (schema_version, settings of a later SDK) are ignored, as ConversationSettings ignores them.
}

function applyMiscDiff(next: StoredSettings, diff: JsonObject): void {
  const merged = deepMerge(miscView(next), diff);
  const preferences = merged.app_preferences;
  if (preferences !== undefined && preferences !== null && !isObject(preferences)) {
    throw new SettingsInputError(["misc_settings_diff", "app_preferences"], "must be an object or null");
  }
  const given = isObject(preferences) ? preferences : {};
  for (const name of MIRRORED_PREFERENCES) {
    const value = Object.hasOwn(given, name) ? given[name] : null;
    const type = SETTINGS_FIELDS[name].type;
    if (value !== null && typeof value !== type) throw new SettingsInputError(["misc_settings_diff", "app_preferences", name], `must be a ${type} or null`);
    // A removed preference goes back to its field's default, as a null in POST /api/settings would.
    (next as Record<string, unknown>)[name] = value ?? SETTINGS_FIELDS[name].default;
  }
  const rest = Object.fromEntries(Object.entries(given).filter(([name]) => !(MIRRORED_PREFERENCES as readonly string[]).includes(name)));
  if (isObject(preferences)) merged.app_preferences = rest;
  else delete merged.app_preferences;
  next.misc_settings = merged;
}

/**
 * PATCH /api/settings: the document to store after `request` (already schema-valid, and asking for
 * something: {@link asksForUpdate}). The profile pointers are the caller's to check against the
 * result ({@link agentServerView}); nothing else is left out.
 * @throws SettingsInputError for a value this server cannot store
 */
export function updateSettings(stored: StoredSettings | undefined, request: SettingsUpdateRequest, cipher: SettingsSealer): StoredSettings {
  const next = structuredClone(stored ?? defaultStoredSettings());
  next.misc_settings ??= {};
  const { agent_settings_diff: agent, conversation_settings_diff: conversation, misc_settings_diff: misc } = request;
  for (const [name, diff] of [["agent_settings_diff", agent], ["conversation_settings_diff", conversation], ["misc_settings_diff", misc]] as const) {
    if (diff != null && !isObject(diff)) throw new SettingsInputError([name], "must be an object or null");
  }
  if (agent) applyAgentDiff(next, agent, cipher);
  if (conversation) applyConversationDiff(next, conversation);
  if (misc) applyMiscDiff(next, misc);
  return next;
}
