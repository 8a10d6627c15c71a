/**
 * Account settings and git-provider tokens (ground-truth §7) as pure functions over JSON documents.
 * No HTTP and no storage here: the server validates a request body against the schema, calls one of
 * these functions with the document it has stored (if any), and stores the returned document
 * (`JSON.stringify`) in its key-value space; `parseStoredSettings` reads it back.
 *
 * Secrets are sealed with the cipher of `./secrets.ts` before they enter the stored document and are
 * never returned by `settingsView`; `decryptedSecrets` is the only way back to clear values.
 *
 * Semantics (where the interface and ground truth leave a choice, the choice is marked DECISION):
 *
 * POST /api/settings (`storeSettings`) is a full replace:
 * - A field absent or null is null afterwards, except:
 *   - `llm_api_key`, `llm_model`, `llm_base_url`, `search_api_key`, `user_consents_to_analytics`
 *     (KEEP_WHEN_NULL) keep their stored values when sent as null. DECISION: absent counts as null
 *     (a client that never heard of a field must not erase it).
 *   - `enable_default_condenser` (true), `enable_proactive_conversation_starters` (true),
 *     `enable_solvability_analysis` (true) and `enable_sound_notifications` (false) take their
 *     default when absent or null. DECISION: null on these four means "default", never a stored null.
 * - DECISION: an empty string for a secret (`llm_api_key`, `search_api_key`, `sandbox_api_key`) clears
 *   it — the only way to remove a kept secret. Other strings are stored as given ("" included).
 * - DECISION (this project, beyond ground truth §7): `sandbox_api_key` is kept on null too. The view
 *   blanks it like the other two secrets, so without this, posting back what GET returned would
 *   erase it; the empty string still clears it.
 * - DECISION: unknown properties are dropped (the schema allows them and says "ignored"), at every
 *   level: top level, provider-token entries, custom-secret objects, MCP server entries. Nothing
 *   unknown is stored, so nothing unknown (possibly secret) can leak back out.
 * - DECISION: `secrets_store` absent or null keeps the stored provider tokens and custom secrets (the
 *   view never returns `secrets_store`, so a read-modify-write round trip must not erase them). When
 *   given, `secrets_store.provider_tokens` (if present) follows the add-git-providers rule below, and
 *   `secrets_store.custom_secrets` (if present) replaces the stored map, except that an entry with an
 *   empty secret (`""` or `{secret: ""}`) keeps the stored secret of that name (and is dropped if
 *   there is none); its description is taken from the entry when given, else kept.
 * - DECISION: `mcp_config` absent or null clears it (full replace). Within a given `mcp_config`, an
 *   sse/shttp server whose `api_key` is absent or null keeps the stored api_key of the stored server
 *   with the same url in the same list (the view blanks api_keys, so round trips must keep them; a
 *   key stays bound to its url, so it is never sent to another server); `""` means "no key".
 *   Defaults are filled in: lists [], stdio `args` [] and `env` {}, shttp `timeout` 60.
 * - Stdio `env` values are secrets (they hold tokens in practice: GITHUB_TOKEN, API keys): sealed
 *   like the others. A value sent as null or "" keeps the stored value of that variable of the
 *   stored stdio server with the same `name` and `command` (the view blanks them, so round trips
 *   must keep them; a value stays bound to the program it was given to); with nothing stored, the
 *   variable is dropped.
 *
 * POST /api/add-git-providers (`storeGitProviders`):
 * - The stored provider map is replaced by the incoming one: providers not sent are removed. An
 *   incoming entry with an empty (`""`, null or absent) token keeps the stored token of that provider,
 *   if any; otherwise it is stored without a token (and is not reported in `provider_tokens_set`).
 * - `host` comes from the incoming entry. `user_id` comes from the incoming entry; DECISION: when the
 *   stored token is kept and the incoming `user_id` is null or absent, the stored `user_id` is kept
 *   (as the reference does: it keeps the stored entry and updates only its host).
 * - DECISION (spec: `provider_tokens` defaults to {}): an absent `provider_tokens` is the empty map,
 *   so it removes every stored provider, like the reference.
 * - `mcp_config` when non-null replaces the stored one (api_keys kept by url as above); null or
 *   absent leaves the stored one alone.
 *
 * GET /api/settings (`settingsView`): every Settings field (null when unset), the three secrets null,
 * `secrets_store` null, every MCP api_key null, every stdio env value null (the server's `env_set`
 * names its variables), plus `llm_api_key_set`, `search_api_key_set`,
 * `sandbox_api_key_set` and `provider_tokens_set` (provider → host, only providers with a stored token).
 */
import type {
  AddGitProvidersRequest,
  MCPConfig,
  MCPSHTTPServer,
  MCPSSEServer,
  MCPStdioServer,
  ProviderType,
  Settings,
  SettingsView,
} from "@acs-toolkit/schema";
import { PROVIDER_TYPES } from "@acs-toolkit/schema";
import { SecretDecryptionError, isSealed, type SecretCipher } from "./secrets.js";

/** A string produced by `SecretCipher.encrypt` (`v1:<iv>:<ciphertext+tag>`). */
export type SealedSecret = string;

/** Version 2 seals stdio `env` values (version 1 held them in clear; readStoredSettings upgrades it). */
export const STORED_SETTINGS_VERSION = 2;

export interface StoredProviderToken {
  /** Sealed token; null when the provider is stored without one. */
  token: SealedSecret | null;
  host: string | null;
  user_id: string | null;
}

export interface StoredCustomSecret {
  secret: SealedSecret;
  description: string | null;
}

export interface StoredMCPSSEServer {
  url: string;
  api_key: SealedSecret | null;
}

export interface StoredMCPSHTTPServer {
  url: string;
  api_key: SealedSecret | null;
  timeout: number;
}

export interface StoredMCPStdioServer {
  name: string;
  command: string;
  args: string[];
  /** Variable name → sealed value. */
  env: Record<string, SealedSecret>;
}

export interface StoredMCPConfig {
  sse_servers: StoredMCPSSEServer[];
  stdio_servers: StoredMCPStdioServer[];
  shttp_servers: StoredMCPSHTTPServer[];
}

/**
 * The stored document: a plain JSON object, every field present. Settings fields keep their API
 * names; secrets are sealed; provider tokens and custom secrets sit at the top level (the API's
 * `secrets_store` is a request-only envelope).
 */
export interface StoredSettings {
  version: typeof STORED_SETTINGS_VERSION;
  language: string | null;
  agent: string | null;
  max_iterations: number | null;
  security_analyzer: string | null;
  confirmation_mode: boolean | null;
  llm_model: string | null;
  llm_api_key: SealedSecret | null;
  llm_base_url: string | null;
  remote_runtime_resource_factor: number | null;
  enable_default_condenser: boolean;
  enable_sound_notifications: boolean;
  enable_proactive_conversation_starters: boolean;
  enable_solvability_analysis: boolean;
  user_consents_to_analytics: boolean | null;
  sandbox_base_container_image: string | null;
  sandbox_runtime_container_image: string | null;
  mcp_config: StoredMCPConfig | null;
  search_api_key: SealedSecret | null;
  sandbox_api_key: SealedSecret | null;
  max_budget_per_task: number | null;
  email: string | null;
  email_verified: boolean | null;
  git_user_name: string | null;
  git_user_email: string | null;
  provider_tokens: Partial<Record<ProviderType, StoredProviderToken>>;
  custom_secrets: Record<string, StoredCustomSecret>;
}

/** Clear values for a runtime. Only `decryptedSecrets` produces one; never log or return it. */
export interface DecryptedSecrets {
  llm_api_key: string | null;
  search_api_key: string | null;
  sandbox_api_key: string | null;
  provider_tokens: Partial<Record<ProviderType, { token: string | null; host: string | null; user_id: string | null }>>;
  custom_secrets: Record<string, { secret: string; description: string | null }>;
  /** The stored MCP configuration with its api_keys and stdio env values in clear. */
  mcp_config: {
    sse_servers: { url: string; api_key: string | null }[];
    stdio_servers: { name: string; command: string; args: string[]; env: Record<string, string> }[];
    shttp_servers: { url: string; api_key: string | null; timeout: number }[];
  } | null;
}

/**
 * Where secrets sit, for leak scanners and reviews. Path syntax: `a.b` property, `*` any property
 * name, `[*]` any array element. In requests a custom secret is either the secret string itself
 * (`...custom_secrets.*`) or an object whose `secret` is (`...custom_secrets.*.secret`).
 */
export const SECRET_FIELD_PATHS = {
  /** POST /api/settings body (Settings). */
  settingsRequest: [
    "llm_api_key",
    "search_api_key",
    "sandbox_api_key",
    "secrets_store.provider_tokens.*.token",
    "secrets_store.custom_secrets.*",
    "secrets_store.custom_secrets.*.secret",
    "mcp_config.sse_servers[*].api_key",
    "mcp_config.shttp_servers[*].api_key",
    "mcp_config.stdio_servers[*].env.*",
  ],
  /** POST /api/add-git-providers body (AddGitProvidersRequest). */
  addGitProvidersRequest: [
    "provider_tokens.*.token",
    "mcp_config.sse_servers[*].api_key",
    "mcp_config.shttp_servers[*].api_key",
    "mcp_config.stdio_servers[*].env.*",
  ],
  /** The StoredSettings document: each of these holds a sealed string or null, never a clear value. */
  stored: [
    "llm_api_key",
    "search_api_key",
    "sandbox_api_key",
    "provider_tokens.*.token",
    "custom_secrets.*.secret",
    "mcp_config.sse_servers[*].api_key",
    "mcp_config.shttp_servers[*].api_key",
    "mcp_config.stdio_servers[*].env.*",
  ],
} as const;

/** Fields that keep their stored value when sent as null (or absent). */
export const KEEP_WHEN_NULL = [
  "llm_api_key",
  "llm_model",
  "llm_base_url",
  "search_api_key",
  "user_consents_to_analytics",
  "sandbox_api_key",
] as const;

/** Defaults of the settings that have one; every other field defaults to null. */
export const SETTINGS_DEFAULTS = {
  enable_default_condenser: true,
  enable_sound_notifications: false,
  enable_proactive_conversation_starters: true,
  enable_solvability_analysis: true,
} as const;

export const MCP_SHTTP_DEFAULT_TIMEOUT = 60;

const STRING_FIELDS = [
  "language",
  "agent",
  "security_analyzer",
  "llm_model",
  "llm_base_url",
  "sandbox_base_container_image",
  "sandbox_runtime_container_image",
  "email",
  "git_user_name",
  "git_user_email",
] as const;
const NUMBER_FIELDS = ["max_iterations", "remote_runtime_resource_factor", "max_budget_per_task"] as const;
const BOOLEAN_FIELDS = ["confirmation_mode", "user_consents_to_analytics", "email_verified"] as const;
const DEFAULTED_FIELDS = Object.keys(SETTINGS_DEFAULTS) as (keyof typeof SETTINGS_DEFAULTS)[];
const SECRET_FIELDS = ["llm_api_key", "search_api_key", "sandbox_api_key"] as const;

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An own property only (never one inherited from Object.prototype, e.g. `__proto__`, `constructor`). */
function own(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

function ownEntry<T>(map: Partial<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/** Messages name the field, never its value (it may be a secret). */
function typeError(path: string, expected: string): TypeError {
  return new TypeError(`${path} must be ${expected}`);
}

function optionalString(value: unknown, path: string): string | null | undefined {
  if (value === undefined || value === null || typeof value === "string") return value;
  throw typeError(path, "a string or null");
}

function requiredString(value: unknown, path: string): string {
  if (typeof value === "string") return value;
  throw typeError(path, "a string");
}

function optionalNumber(value: unknown, path: string): number | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  throw typeError(path, "a finite number or null");
}

function optionalBoolean(value: unknown, path: string): boolean | null | undefined {
  if (value === undefined || value === null || typeof value === "boolean") return value;
  throw typeError(path, "a boolean or null");
}

function isProviderType(value: string): value is ProviderType {
  return (PROVIDER_TYPES as readonly string[]).includes(value);
}

/** The document of an account that has never stored anything: defaults, no secrets. */
export function defaultStoredSettings(): StoredSettings {
  return {
    version: STORED_SETTINGS_VERSION,
    language: null,
    agent: null,
    max_iterations: null,
    security_analyzer: null,
    confirmation_mode: null,
    llm_model: null,
    llm_api_key: null,
    llm_base_url: null,
    remote_runtime_resource_factor: null,
    ...SETTINGS_DEFAULTS,
    user_consents_to_analytics: null,
    sandbox_base_container_image: null,
    sandbox_runtime_container_image: null,
    mcp_config: null,
    search_api_key: null,
    sandbox_api_key: null,
    max_budget_per_task: null,
    email: null,
    email_verified: null,
    git_user_name: null,
    git_user_email: null,
    provider_tokens: {},
    custom_secrets: {},
  };
}

/** POST /api/settings: the document to store after `incoming` (already schema-valid). See the module comment. */
export function storeSettings(stored: StoredSettings | undefined, incoming: Settings, cipher: SecretCipher): StoredSettings {
  if (!isObject(incoming)) throw typeError("settings", "an object");
  const previous = stored ?? defaultStoredSettings();
  const next = defaultStoredSettings();

  for (const field of STRING_FIELDS) next[field] = optionalString(own(incoming, field), field) ?? null;
  for (const field of NUMBER_FIELDS) next[field] = optionalNumber(own(incoming, field), field) ?? null;
  for (const field of BOOLEAN_FIELDS) next[field] = optionalBoolean(own(incoming, field), field) ?? null;
  for (const field of DEFAULTED_FIELDS) {
    next[field] = optionalBoolean(own(incoming, field), field) ?? SETTINGS_DEFAULTS[field];
  }
  for (const field of SECRET_FIELDS) {
    const value = optionalString(own(incoming, field), field);
    next[field] = value ? cipher.encrypt(value) : null; // "" clears
  }
  for (const field of KEEP_WHEN_NULL) {
    if (own(incoming, field) == null) (next as unknown as JsonObject)[field] = previous[field];
  }

  const mcp = own(incoming, "mcp_config");
  next.mcp_config = mcp == null ? null : normalizeMcpConfig(mcp, previous.mcp_config, cipher, "mcp_config");

  const secretsStore = own(incoming, "secrets_store");
  if (secretsStore == null) {
    next.provider_tokens = previous.provider_tokens;
    next.custom_secrets = previous.custom_secrets;
  } else {
    if (!isObject(secretsStore)) throw typeError("secrets_store", "an object or null");
    const tokens = own(secretsStore, "provider_tokens");
    next.provider_tokens =
      tokens === undefined
        ? previous.provider_tokens
        : mergeProviderTokens(previous.provider_tokens, tokens, cipher, "secrets_store.provider_tokens");
    const custom = own(secretsStore, "custom_secrets");
    next.custom_secrets =
      custom === undefined
        ? previous.custom_secrets
        : mergeCustomSecrets(previous.custom_secrets, custom, cipher, "secrets_store.custom_secrets");
  }
  return structuredClone(next);
}

/** POST /api/add-git-providers: the document to store after `request` (already schema-valid). */
export function storeGitProviders(
  stored: StoredSettings | undefined,
  request: AddGitProvidersRequest,
  cipher: SecretCipher,
): StoredSettings {
  if (!isObject(request)) throw typeError("request", "an object");
  const previous = stored ?? defaultStoredSettings();
  const next: StoredSettings = { ...previous };
  next.provider_tokens = mergeProviderTokens(
    previous.provider_tokens,
    own(request, "provider_tokens") ?? {},
    cipher,
    "provider_tokens",
  );
  const mcp = own(request, "mcp_config");
  if (mcp != null) next.mcp_config = normalizeMcpConfig(mcp, previous.mcp_config, cipher, "mcp_config");
  return structuredClone(next);
}

function mergeProviderTokens(
  stored: StoredSettings["provider_tokens"],
  incoming: unknown,
  cipher: SecretCipher,
  path: string,
): StoredSettings["provider_tokens"] {
  if (!isObject(incoming)) throw typeError(path, "an object");
  const entries: [ProviderType, StoredProviderToken][] = [];
  for (const [provider, entry] of Object.entries(incoming)) {
    if (!isProviderType(provider)) throw typeError(`each key of ${path}`, `one of ${PROVIDER_TYPES.join(", ")}`);
    const where = `${path}.${provider}`;
    if (!isObject(entry)) throw typeError(where, "an object");
    const token = optionalString(own(entry, "token"), `${where}.token`);
    const host = optionalString(own(entry, "host"), `${where}.host`) ?? null;
    const userId = optionalString(own(entry, "user_id"), `${where}.user_id`) ?? null;
    const kept = ownEntry(stored, provider);
    if (token) {
      entries.push([provider, { token: cipher.encrypt(token), host, user_id: userId }]);
    } else if (kept?.token) {
      entries.push([provider, { token: kept.token, host, user_id: userId ?? kept.user_id }]);
    } else {
      entries.push([provider, { token: null, host, user_id: userId }]);
    }
  }
  return Object.fromEntries(entries);
}

function mergeCustomSecrets(
  stored: StoredSettings["custom_secrets"],
  incoming: unknown,
  cipher: SecretCipher,
  path: string,
): StoredSettings["custom_secrets"] {
  if (!isObject(incoming)) throw typeError(path, "an object");
  const entries: [string, StoredCustomSecret][] = [];
  for (const [name, value] of Object.entries(incoming)) {
    let secret: string;
    let description: string | null | undefined;
    if (typeof value === "string") {
      secret = value;
    } else if (isObject(value)) {
      secret = optionalString(own(value, "secret"), `each entry of ${path}: secret`) ?? "";
      description = optionalString(own(value, "description"), `each entry of ${path}: description`);
    } else {
      throw typeError(`each entry of ${path}`, "a string or an object with secret");
    }
    const kept = ownEntry(stored, name);
    if (secret) {
      entries.push([name, { secret: cipher.encrypt(secret), description: description ?? null }]);
    } else if (kept) {
      entries.push([name, { secret: kept.secret, description: description === undefined ? kept.description : description }]);
    }
    // An empty secret with nothing stored under that name is dropped.
  }
  return Object.fromEntries(entries);
}

function normalizeMcpConfig(
  incoming: unknown,
  stored: StoredMCPConfig | null,
  cipher: SecretCipher,
  path: string,
): StoredMCPConfig {
  if (!isObject(incoming)) throw typeError(path, "an object or null");
  const list = (key: string): JsonObject[] => {
    const value = own(incoming, key);
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || !value.every(isObject)) throw typeError(`${path}.${key}`, "an array of objects");
    return value;
  };
  const sealKey = (value: unknown, url: string, storedServers: readonly { url: string; api_key: string | null }[], where: string) => {
    const apiKey = optionalString(value, where);
    if (apiKey) return cipher.encrypt(apiKey);
    if (apiKey === "") return null;
    return storedServers.find((server) => server.url === url)?.api_key ?? null;
  };

  const sse_servers = list("sse_servers").map((server, index): StoredMCPSSEServer => {
    const where = `${path}.sse_servers[${index}]`;
    const url = requiredString(own(server, "url"), `${where}.url`);
    return { url, api_key: sealKey(own(server, "api_key"), url, stored?.sse_servers ?? [], `${where}.api_key`) };
  });
  const shttp_servers = list("shttp_servers").map((server, index): StoredMCPSHTTPServer => {
    const where = `${path}.shttp_servers[${index}]`;
    const url = requiredString(own(server, "url"), `${where}.url`);
    return {
      url,
      api_key: sealKey(own(server, "api_key"), url, stored?.shttp_servers ?? [], `${where}.api_key`),
      timeout: optionalNumber(own(server, "timeout"), `${where}.timeout`) ?? MCP_SHTTP_DEFAULT_TIMEOUT,
    };
  });
  const stdio_servers = list("stdio_servers").map((server, index): StoredMCPStdioServer => {
    const where = `${path}.stdio_servers[${index}]`;
    const args = own(server, "args") ?? [];
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string")) throw typeError(`${where}.args`, "an array of strings");
    const env = own(server, "env") ?? {};
    if (!isObject(env)) throw typeError(`${where}.env`, "an object of strings");
    const name = requiredString(own(server, "name"), `${where}.name`);
    const command = requiredString(own(server, "command"), `${where}.command`);
    const kept = stored?.stdio_servers.find((candidate) => candidate.name === name && candidate.command === command)?.env ?? {};
    const sealed: [string, SealedSecret][] = [];
    for (const [variable, value] of Object.entries(env)) {
      const given = optionalString(value, `${where}.env.${variable}`);
      if (given) sealed.push([variable, cipher.encrypt(given)]);
      else if (Object.hasOwn(kept, variable)) sealed.push([variable, kept[variable]!]);
      // Blank with nothing stored under that name: dropped.
    }
    return { name, command, args: [...(args as string[])], env: Object.fromEntries(sealed) };
  });
  return { sse_servers, stdio_servers, shttp_servers };
}

/** GET /api/settings: the stored settings with every secret blanked and the `*_set` flags. */
export function settingsView(stored: StoredSettings | undefined): SettingsView {
  const s = stored ?? defaultStoredSettings();
  const provider_tokens_set: Record<string, string | null> = {};
  for (const provider of PROVIDER_TYPES) {
    const entry = ownEntry(s.provider_tokens, provider);
    if (entry?.token) provider_tokens_set[provider] = entry.host;
  }
  const mcp = s.mcp_config;
  const mcp_config: MCPConfig | null =
    mcp === null
      ? null
      : {
          sse_servers: mcp.sse_servers.map((server): MCPSSEServer => ({ url: server.url, api_key: null })),
          stdio_servers: mcp.stdio_servers.map(
            (server): MCPStdioServer => ({
              name: server.name,
              command: server.command,
              args: [...server.args],
              env: Object.fromEntries(Object.keys(server.env).map((variable) => [variable, null])),
              env_set: Object.keys(server.env),
            }),
          ),
          shttp_servers: mcp.shttp_servers.map(
            (server): MCPSHTTPServer => ({ url: server.url, api_key: null, timeout: server.timeout }),
          ),
        };
  return {
    language: s.language,
    agent: s.agent,
    max_iterations: s.max_iterations,
    security_analyzer: s.security_analyzer,
    confirmation_mode: s.confirmation_mode,
    llm_model: s.llm_model,
    llm_api_key: null,
    llm_base_url: s.llm_base_url,
    remote_runtime_resource_factor: s.remote_runtime_resource_factor,
    secrets_store: null,
    enable_default_condenser: s.enable_default_condenser,
    enable_sound_notifications: s.enable_sound_notifications,
    enable_proactive_conversation_starters: s.enable_proactive_conversation_starters,
    enable_solvability_analysis: s.enable_solvability_analysis,
    user_consents_to_analytics: s.user_consents_to_analytics,
    sandbox_base_container_image: s.sandbox_base_container_image,
    sandbox_runtime_container_image: s.sandbox_runtime_container_image,
    mcp_config,
    search_api_key: null,
    sandbox_api_key: null,
    max_budget_per_task: s.max_budget_per_task,
    email: s.email,
    email_verified: s.email_verified,
    git_user_name: s.git_user_name,
    git_user_email: s.git_user_email,
    llm_api_key_set: s.llm_api_key !== null,
    search_api_key_set: s.search_api_key !== null,
    sandbox_api_key_set: s.sandbox_api_key !== null,
    provider_tokens_set,
  };
}

/**
 * Every secret slot of a stored document with its path (syntax of SECRET_FIELD_PATHS, concrete
 * names and indexes) and its sealed value or null.
 */
export function secretSlots(stored: StoredSettings): { path: string; sealed: SealedSecret | null }[] {
  const slots: { path: string; sealed: SealedSecret | null }[] = SECRET_FIELDS.map((field) => ({ path: field, sealed: stored[field] }));
  for (const [provider, entry] of Object.entries(stored.provider_tokens)) {
    slots.push({ path: `provider_tokens.${provider}.token`, sealed: entry?.token ?? null });
  }
  for (const [name, entry] of Object.entries(stored.custom_secrets)) {
    slots.push({ path: `custom_secrets.${name}.secret`, sealed: entry.secret });
  }
  stored.mcp_config?.sse_servers.forEach((server, index) =>
    slots.push({ path: `mcp_config.sse_servers[${index}].api_key`, sealed: server.api_key }),
  );
  stored.mcp_config?.shttp_servers.forEach((server, index) =>
    slots.push({ path: `mcp_config.shttp_servers[${index}].api_key`, sealed: server.api_key }),
  );
  stored.mcp_config?.stdio_servers.forEach((server, index) => {
    for (const [variable, sealed] of Object.entries(server.env)) slots.push({ path: `mcp_config.stdio_servers[${index}].env.${variable}`, sealed });
  });
  return slots;
}

/** The clear secrets for a runtime: the only place clear values come back. */
export function decryptedSecrets(stored: StoredSettings | undefined, cipher: SecretCipher): DecryptedSecrets {
  const s = stored ?? defaultStoredSettings();
  const open = (sealed: SealedSecret | null, path: string): string | null => {
    if (sealed === null) return null;
    try {
      return cipher.decrypt(sealed);
    } catch (error) {
      const reason = error instanceof SecretDecryptionError ? error.message : "unexpected error";
      throw new SecretDecryptionError(`cannot open the stored secret at ${path}: ${reason}`);
    }
  };
  const provider_tokens: DecryptedSecrets["provider_tokens"] = {};
  for (const provider of PROVIDER_TYPES) {
    const entry = ownEntry(s.provider_tokens, provider);
    if (entry) {
      provider_tokens[provider] = {
        token: open(entry.token, `provider_tokens.${provider}.token`),
        host: entry.host,
        user_id: entry.user_id,
      };
    }
  }
  const custom_secrets = Object.fromEntries(
    Object.entries(s.custom_secrets).map(([name, entry]) => [
      name,
      { secret: open(entry.secret, `custom_secrets.${name}.secret`) ?? "", description: entry.description },
    ]),
  );
  const mcp = s.mcp_config;
  return {
    llm_api_key: open(s.llm_api_key, "llm_api_key"),
    search_api_key: open(s.search_api_key, "search_api_key"),
    sandbox_api_key: open(s.sandbox_api_key, "sandbox_api_key"),
    provider_tokens,
    custom_secrets,
    mcp_config:
      mcp === null
        ? null
        : {
            sse_servers: mcp.sse_servers.map((server, index) => ({
              url: server.url,
              api_key: open(server.api_key, `mcp_config.sse_servers[${index}].api_key`),
            })),
            stdio_servers: mcp.stdio_servers.map((server, index) => ({
              name: server.name,
              command: server.command,
              args: [...server.args],
              env: Object.fromEntries(
                Object.entries(server.env).map(([variable, sealed]) => [variable, open(sealed, `mcp_config.stdio_servers[${index}].env.${variable}`) ?? ""]),
              ),
            })),
            shttp_servers: mcp.shttp_servers.map((server, index) => ({
              url: server.url,
              api_key: open(server.api_key, `mcp_config.shttp_servers[${index}].api_key`),
              timeout: server.timeout,
            })),
          },
  };
}

/**
 * Reads back a stored document as parseStoredSettings does, and upgrades one of version 1 (its
 * stdio `env` values in clear) by sealing them: `upgraded` says the caller should store it again.
 */
export function readStoredSettings(text: string, cipher: SecretCipher): { settings: StoredSettings; upgraded: boolean } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error("stored settings are not valid JSON");
  }
  if (!isObject(value) || value.version !== 1) return { settings: parseStoredSettings(text), upgraded: false };
  const mcp = value.mcp_config as StoredMCPConfig | null | undefined;
  const upgraded = {
    ...value,
    version: STORED_SETTINGS_VERSION,
    mcp_config: mcp && {
      ...mcp,
      stdio_servers: (mcp.stdio_servers ?? []).map((server) => ({
        ...server,
        env: Object.fromEntries(Object.entries(server.env ?? {}).map(([variable, clear]) => [variable, cipher.encrypt(String(clear))])),
      })),
    },
  };
  return { settings: parseStoredSettings(JSON.stringify(upgraded)), upgraded: true };
}

/**
 * Reads back a stored document (the JSON text of a StoredSettings). Checks the version and that
 * every secret slot holds a sealed string or null; a missing field takes its default, so documents
 * written before a field existed still load.
 * @throws Error when the text is not a stored settings document of a known version
 */
export function parseStoredSettings(text: string): StoredSettings {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error("stored settings are not valid JSON");
  }
  if (!isObject(value)) throw new Error("stored settings are not a JSON object");
  if (value.version !== STORED_SETTINGS_VERSION) throw new Error("stored settings have an unknown version");
  const document: StoredSettings = { ...defaultStoredSettings(), ...(value as Partial<StoredSettings>) };
  if (!isObject(document.provider_tokens) || !isObject(document.custom_secrets)) {
    throw new Error("stored settings have a malformed provider_tokens or custom_secrets");
  }
  for (const slot of secretSlots(document)) {
    if (slot.sealed !== null && !isSealed(slot.sealed)) {
      throw new Error(`stored settings hold a value that is not sealed at ${slot.path}`);
    }
  }
  return document;
}
