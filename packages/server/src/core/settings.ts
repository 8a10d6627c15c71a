/**
 * Account settings and git-provider tokens (ground-truth §7): the merge of a request onto the stored
 * document and the view of it, as pure functions over JSON documents and the generated Settings
 * table, for the server (settings.ts, routes/settings.ts) and the browser mock alike. No HTTP, no
 * storage and no cryptography here: the caller validates a request body, calls one of these
 * functions with the document it has stored (if any), and stores the returned document
 * (`JSON.stringify`).
 *
 * Secrets are sealed by the injected {@link SettingsSealer} before they enter the stored document
 * (the server's AES-GCM cipher, secrets.ts; the browser mock keeps them plain, {@link PLAIN_SECRETS})
 * and are never returned by `settingsView`.
 *
 * Semantics (where the interface and ground truth leave a choice, the choice is marked DECISION):
 *
 * POST /api/settings (`storeSettings`) is a full replace:
 * Which fields exist, their JSON types, defaults, which are secrets and which are kept on null all
 * come from spec/ through the generated SETTINGS_FIELDS table (`@acs-toolkit/schema`): a scalar
 * field added to the spec is stored, returned and typed with no edit here.
 *
 * - A field absent or null is null afterwards, except:
 *   - fields marked `x-keep-when-null` in the spec (KEEP_WHEN_NULL: `llm_api_key`, `llm_model`,
 *     `llm_base_url`, `search_api_key`, `user_consents_to_analytics`, and `sandbox_api_key`, see
 *     below) keep their stored values when sent as null. DECISION: absent counts as null (a client
 *     that never heard of a field must not erase it).
 *   - fields with a `default` in the spec (SETTINGS_DEFAULTS: `enable_default_condenser` (true),
 *     `enable_proactive_conversation_starters` (true), `enable_solvability_analysis` (true),
 *     `enable_sound_notifications` (false)) take it when absent or null. DECISION: null on these
 *     means "default", never a stored null.
 * - DECISION: an empty string for a secret (`x-secret`: `llm_api_key`, `search_api_key`, `sandbox_api_key`) clears
 *   it — the only way to remove a kept secret. Other strings are stored as given ("" included).
 * - DECISION (this project, beyond ground truth §7): `sandbox_api_key` is kept on null too (marked
 *   `x-keep-when-null` in the spec, whose Settings description says so). The view blanks it like the
 *   other two secrets, so without this, posting back what GET returned would erase it; the empty
 *   string still clears it.
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
 *   Defaults are filled in: lists [], stdio `args` [] and `env` {}, shttp `timeout` 60 (the spec's
 *   default, MCP_SHTTP_DEFAULT_TIMEOUT).
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
 * GET /api/settings (`settingsView`): every Settings field (null when unset), the secrets null,
 * `secrets_store` null, every MCP api_key null, every stdio env value null (the server's `env_set`
 * names its variables), plus a `<secret>_set` flag for each secret field (`llm_api_key_set`,
 * `search_api_key_set`, `sandbox_api_key_set`) and `provider_tokens_set` (provider → host, only
 * providers with a stored token). The generator refuses a secret without its flag in SettingsView.
 */
import type {
  AddGitProvidersRequest,
  MCPConfig,
  MCPSHTTPServer,
  MCPSSEServer,
  MCPStdioServer,
  ProviderType,
  Settings,
  SettingsField,
  SettingsView,
} from "@acs-toolkit/schema";
import { MCP_SHTTP_DEFAULT_TIMEOUT, PROVIDER_TYPES, SETTINGS_FIELDS, SETTINGS_PROPERTIES } from "@acs-toolkit/schema";


/** A string produced by a {@link SettingsSealer} (the server's: `v1:<iv>:<ciphertext+tag>`). */
export type SealedSecret = string;

/** Seals a secret before it is stored (the server encrypts; the browser mock stores it as it is). */
export interface SettingsSealer {
  encrypt(clear: string): SealedSecret;
}

/** No sealing: secrets stored as given (the browser mock's; a mock has nothing to protect). */
export const PLAIN_SECRETS: SettingsSealer = { encrypt: (clear) => clear };

/** Version 2 seals stdio `env` values (version 1 held them in clear; readStoredSettings upgrades it). */
export const STORED_SETTINGS_VERSION = 2;

/** A git provider's entry in the stored document. */
export interface StoredProviderToken {
  /** Sealed token; null when the provider is stored without one. */
  token: SealedSecret | null;
  host: string | null;
  user_id: string | null;
}

/** A custom secret in the stored document. */
export interface StoredCustomSecret {
  secret: SealedSecret;
  description: string | null;
}

/** A stored MCP server-sent-events server. */
export interface StoredMCPSSEServer {
  url: string;
  api_key: SealedSecret | null;
}

/** A stored MCP streamable-HTTP server. */
export interface StoredMCPSHTTPServer {
  url: string;
  api_key: SealedSecret | null;
  timeout: number;
}

/** A stored MCP stdio server. */
export interface StoredMCPStdioServer {
  name: string;
  command: string;
  args: string[];
  /** Variable name → sealed value. */
  env: Record<string, SealedSecret>;
}

/** A stored MCP configuration, every list present. */
export interface StoredMCPConfig {
  sse_servers: StoredMCPSSEServer[];
  stdio_servers: StoredMCPStdioServer[];
  shttp_servers: StoredMCPSHTTPServer[];
}

/** The generated table's type. */
export type Fields = typeof SETTINGS_FIELDS;
/** A scalar Settings field of the generated table. */
export type FieldName = keyof Fields;
/** The scalar Settings fields whose table entry has `Value` at `Key`. */
export type FieldsWhere<Key extends keyof SettingsField, Value> = { [F in FieldName]: Fields[F][Key] extends Value ? F : never }[FieldName];
/** The scalar Settings fields marked secret in the spec. */
export type SecretField = FieldsWhere<"secret", true>;
/** The scalar Settings fields with a default in the spec (never null once stored). */
export type DefaultedField = Exclude<FieldName, FieldsWhere<"default", null>>;
/** The scalar Settings fields marked `x-keep-when-null` in the spec. */
export type KeptField = FieldsWhere<"keepWhenNull", true>;

/** Each scalar field as stored: its Settings type, sealed when secret, never null when it has a default. */
export type StoredScalars = {
  -readonly [F in FieldName]: F extends SecretField
    ? SealedSecret | null
    : F extends DefaultedField
      ? NonNullable<Settings[F]>
      : Exclude<Settings[F], undefined>;
};

/**
 * The stored document: a plain JSON object, every field present. Settings fields keep their API
 * names (the scalar ones are those of the generated SETTINGS_FIELDS); secrets are sealed; provider
 * tokens and custom secrets sit at the top level (the API's `secrets_store` is a request-only envelope).
 */
export type StoredSettings = { version: typeof STORED_SETTINGS_VERSION } & StoredScalars & {
    mcp_config: StoredMCPConfig | null;
    provider_tokens: Partial<Record<ProviderType, StoredProviderToken>>;
    custom_secrets: Record<string, StoredCustomSecret>;
    /**
     * The agent server's frontend-owned `misc_settings` (core/agent-settings.ts), without the app
     * preferences that are Settings fields (those live in their fields only, so the two views agree).
     */
    misc_settings: Record<string, unknown>;
  };


const fieldNames = Object.keys(SETTINGS_FIELDS) as FieldName[];

/** The secret scalar fields of a table, in the spec's order. */
export function secretFields(table: SettingsTable): string[] {
  return table.properties.filter((name) => Object.hasOwn(table.fields, name) && table.fields[name]!.secret);
}

/** Fields that keep their stored value when sent as null (or absent): those marked `x-keep-when-null`. */
export const KEEP_WHEN_NULL = fieldNames.filter((name) => SETTINGS_FIELDS[name].keepWhenNull) as readonly KeptField[];

/** Defaults of the settings that have one (their spec `default`); every other field defaults to null. */
export const SETTINGS_DEFAULTS = Object.fromEntries(
  fieldNames.filter((name) => SETTINGS_FIELDS[name].default !== null).map((name) => [name, SETTINGS_FIELDS[name].default]),
) as { readonly [F in DefaultedField]: Fields[F]["default"] };

/**
 * The Settings table the handlers are written over: the generated one (SETTINGS_PROPERTIES and
 * SETTINGS_FIELDS of `@acs-toolkit/schema`), or a test's copy with more fields.
 */
export interface SettingsTable {
  /** Every Settings property in the spec's order: the key order of stored and returned documents. */
  readonly properties: readonly string[];
  /** The scalar ones, with their type, default and policies. */
  readonly fields: { readonly [name: string]: SettingsField };
}

/** The table generated from spec/. */
export const SPEC_SETTINGS_TABLE: SettingsTable = { properties: SETTINGS_PROPERTIES, fields: SETTINGS_FIELDS };

/**
 * The Settings properties that hold a definition of their own: each is handled below by hand. A new
 * one in the spec makes createSettingsCore throw (at import), so it cannot be dropped silently.
 */
const STRUCTURED_FIELDS: readonly string[] = ["secrets_store", "mcp_config"];

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


/** Reads a scalar field of a request as its table type says; undefined or null when absent or null. */
function readScalar(field: SettingsField, value: unknown, path: string): string | number | boolean | null | undefined {
  switch (field.type) {
    case "string":
      return optionalString(value, path);
    case "number":
    case "integer":
      return optionalNumber(value, path);
    case "boolean":
      return optionalBoolean(value, path);
  }
}

function mergeProviderTokens(
  stored: StoredSettings["provider_tokens"],
  incoming: unknown,
  cipher: SettingsSealer,
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
  cipher: SettingsSealer,
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
  cipher: SettingsSealer,
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


function mcpView(mcp: StoredMCPConfig | null): MCPConfig | null {
  if (mcp === null) return null;
  return {
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
    shttp_servers: mcp.shttp_servers.map((server): MCPSHTTPServer => ({ url: server.url, api_key: null, timeout: server.timeout })),
  };
}

/** The merge and the view over one {@link SettingsTable}. */
export interface SettingsCore {
  /** The document of an account that has never stored anything: defaults, no secrets. */
  defaultStoredSettings(): StoredSettings;
  /** POST /api/settings: the document to store after `incoming` (already schema-valid). See the module comment. */
  storeSettings(stored: StoredSettings | undefined, incoming: Settings, cipher: SettingsSealer): StoredSettings;
  /** POST /api/add-git-providers: the document to store after `request` (already schema-valid). */
  storeGitProviders(stored: StoredSettings | undefined, request: AddGitProvidersRequest, cipher: SettingsSealer): StoredSettings;
  /** GET /api/settings: the stored settings with every secret blanked and the `*_set` flags. */
  settingsView(stored: StoredSettings | undefined): SettingsView;
}

/**
 * The merge and the view over `table`: every scalar field is stored, defaulted, kept, sealed and
 * returned as its table entry says, so a field added to the spec needs no edit here.
 * @throws Error when the table has a property that is neither scalar nor one of the structured fields handled here
 */
export function createSettingsCore(table: SettingsTable): SettingsCore {
  for (const name of table.properties) {
    if (!Object.hasOwn(table.fields, name) && !STRUCTURED_FIELDS.includes(name)) {
      throw new Error(`Settings.${name} holds a definition the server does not know how to store: handle it in core/settings.ts`);
    }
  }
  const names = table.properties.filter((name) => Object.hasOwn(table.fields, name));
  const field = (name: string): SettingsField => table.fields[name]!;
  const secrets = secretFields(table);
  // The handlers below work on plain JSON objects; the table guarantees the StoredSettings shape.
  type Document = JsonObject & StoredSettings;

  function defaultStoredSettings(): StoredSettings {
    const document: JsonObject = { version: STORED_SETTINGS_VERSION };
    for (const name of table.properties) {
      if (name === "secrets_store") continue; // request-only: its contents sit at the top level
      document[name] = name === "mcp_config" ? null : field(name).default;
    }
    document.provider_tokens = {};
    document.custom_secrets = {};
    document.misc_settings = {};
    return document as StoredSettings;
  }

  function storeSettings(stored: StoredSettings | undefined, incoming: Settings, cipher: SettingsSealer): StoredSettings {
    if (!isObject(incoming)) throw typeError("settings", "an object");
    const previous = (stored ?? defaultStoredSettings()) as Document;
    const next = defaultStoredSettings() as Document;

    for (const name of names) {
      const { secret, keepWhenNull } = field(name);
      const value = readScalar(field(name), own(incoming, name), name);
      if (value == null) next[name] = keepWhenNull ? previous[name] : field(name).default;
      else if (secret) next[name] = value === "" ? null : cipher.encrypt(String(value)); // "" clears
      else next[name] = value;
    }

    const mcp = own(incoming, "mcp_config");
    next.mcp_config = mcp == null ? null : normalizeMcpConfig(mcp, previous.mcp_config, cipher, "mcp_config");
    // Not a Settings field: a full replace of the Settings leaves the agent server's view data alone.
    next.misc_settings = previous.misc_settings;

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

  function storeGitProviders(stored: StoredSettings | undefined, request: AddGitProvidersRequest, cipher: SettingsSealer): StoredSettings {
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

  function settingsView(stored: StoredSettings | undefined): SettingsView {
    const s = (stored ?? defaultStoredSettings()) as Document;
    const view: JsonObject = {};
    for (const name of table.properties) {
      if (name === "secrets_store") view[name] = null;
      else if (name === "mcp_config") view[name] = mcpView(s.mcp_config);
      else view[name] = field(name).secret ? null : s[name];
    }
    for (const name of secrets) view[`${name}_set`] = s[name] !== null;
    const provider_tokens_set: Record<string, string | null> = {};
    for (const provider of PROVIDER_TYPES) {
      const entry = ownEntry(s.provider_tokens, provider);
      if (entry?.token) provider_tokens_set[provider] = entry.host;
    }
    view.provider_tokens_set = provider_tokens_set;
    return view as SettingsView;
  }

  return { defaultStoredSettings, storeSettings, storeGitProviders, settingsView };
}

/** The merge and the view over the table generated from spec/ (see {@link SettingsCore} for each). */
export const { defaultStoredSettings, storeSettings, storeGitProviders, settingsView }: SettingsCore = createSettingsCore(SPEC_SETTINGS_TABLE);
