/**
 * The server's side of the account settings: the merge of a request and the view (core/settings.ts,
 * shared with the browser mock) with its secrets sealed by the server's cipher (secrets.ts), and what
 * only the server does with a stored document: where its secrets sit, opening them for a runtime,
 * reading a stored document back (and upgrading an older one). The semantics of the merge and the
 * view are told in core/settings.ts.
 */
import type { ProviderType } from "@acs-toolkit/schema";
import { PROVIDER_TYPES } from "@acs-toolkit/schema";
import {
  createSettingsCore,
  secretFields,
  SPEC_SETTINGS_TABLE,
  STORED_SETTINGS_VERSION,
  type SealedSecret,
  type SecretField,
  type SettingsCore,
  type SettingsTable,
  type StoredMCPConfig,
  type StoredSettings,
} from "./core/settings.js";
import { SecretDecryptionError, isSealed, type SecretCipher } from "./secrets.js";

export { KEEP_WHEN_NULL, SETTINGS_DEFAULTS, type StoredSettings } from "./core/settings.js";

/** Clear values for a runtime. Only `decryptedSecrets` produces one; never log or return it. */
type DecryptedSecrets = { [F in SecretField]: string | null } & {
  provider_tokens: Partial<Record<ProviderType, { token: string | null; host: string | null; user_id: string | null }>>;
  custom_secrets: Record<string, { secret: string; description: string | null }>;
  /** The stored MCP configuration with its api_keys and stdio env values in clear. */
  mcp_config: {
    sse_servers: { url: string; api_key: string | null }[];
    stdio_servers: { name: string; command: string; args: string[]; env: Record<string, string> }[];
    shttp_servers: { url: string; api_key: string | null; timeout: number }[];
  } | null;
};

const SECRET_FIELDS = secretFields(SPEC_SETTINGS_TABLE) as SecretField[];

/**
 * Where secrets sit, for leak scanners and reviews. Path syntax: `a.b` property, `*` any property
 * name, `[*]` any array element. In requests a custom secret is either the secret string itself
 * (`...custom_secrets.*`) or an object whose `secret` is (`...custom_secrets.*.secret`). The
 * top-level ones are the secret fields of the generated table.
 */
export const SECRET_FIELD_PATHS: { readonly settingsRequest: readonly string[]; readonly addGitProvidersRequest: readonly string[]; readonly stored: readonly string[] } = {
  /** POST /api/settings body (Settings). */
  settingsRequest: [
    ...SECRET_FIELDS,
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
    ...SECRET_FIELDS,
    "provider_tokens.*.token",
    "custom_secrets.*.secret",
    "mcp_config.sse_servers[*].api_key",
    "mcp_config.shttp_servers[*].api_key",
    "mcp_config.stdio_servers[*].env.*",
  ],
};

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function ownEntry<T>(map: Partial<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/** One secret slot of a stored document: its path and its sealed value or null. */
type SecretSlot = { path: string; sealed: SealedSecret | null };

/** The settings functions of this module, written over one {@link SettingsTable}. */
interface SettingsHandlers extends SettingsCore {
  /**
   * Every secret slot of a stored document with its path (syntax of SECRET_FIELD_PATHS, concrete
   * names and indexes) and its sealed value or null.
   */
  secretSlots(stored: StoredSettings): SecretSlot[];
  /** The clear secrets for a runtime: the only place clear values come back. */
  decryptedSecrets(stored: StoredSettings | undefined, cipher: SecretCipher): DecryptedSecrets;
  /**
   * Reads back a stored document as parseStoredSettings does, and upgrades one of version 1 (its
   * stdio `env` values in clear) by sealing them: `upgraded` says the caller should store it again.
   */
  readStoredSettings(text: string, cipher: SecretCipher): { settings: StoredSettings; upgraded: boolean };
  /**
   * Reads back a stored document (the JSON text of a StoredSettings). Checks the version and that
   * every secret slot holds a sealed string or null; a missing field takes its default, so documents
   * written before a field existed still load.
   * @throws Error when the text is not a stored settings document of a known version
   */
  parseStoredSettings(text: string): StoredSettings;
}

/**
 * The settings functions over `table`: the core's merge and view, and the server's own. The
 * module's own exports are these over the generated table; tests build them over a table with more
 * fields.
 * @throws Error when the table has a property that is neither scalar nor one of the structured fields the core handles
 */
function createSettingsHandlers(table: SettingsTable): SettingsHandlers {
  const core = createSettingsCore(table);
  const { defaultStoredSettings } = core;
  const secrets = secretFields(table);

  const secretSlots = (stored: StoredSettings): SecretSlot[] => listSecretSlots(secrets, stored);

  function decryptedSecrets(stored: StoredSettings | undefined, cipher: SecretCipher): DecryptedSecrets {
    const s = (stored ?? defaultStoredSettings()) as JsonObject & StoredSettings;
    const open = secretOpener(cipher);
    // Opened in this order: of several unreadable secrets, the error names the first one opened.
    const provider_tokens = openProviderTokens(s.provider_tokens, open);
    const custom_secrets = openCustomSecrets(s.custom_secrets, open);
    return {
      ...Object.fromEntries(secrets.map((name) => [name, open(s[name] as SealedSecret | null, name)])),
      provider_tokens,
      custom_secrets,
      mcp_config: openMcpConfig(s.mcp_config, open),
    } as DecryptedSecrets;
  }

  function readStoredSettings(text: string, cipher: SecretCipher): { settings: StoredSettings; upgraded: boolean } {
    const value = parseJson(text);
    if (!isObject(value) || value.version !== 1) return { settings: parseStoredSettings(text), upgraded: false };
    return { settings: parseStoredSettings(JSON.stringify(upgradeFromVersion1(value, cipher))), upgraded: true };
  }

  function parseStoredSettings(text: string): StoredSettings {
    const value = parseJson(text);
    if (!isObject(value)) throw new Error("stored settings are not a JSON object");
    if (value.version !== STORED_SETTINGS_VERSION) throw new Error("stored settings have an unknown version");
    const document: StoredSettings = { ...defaultStoredSettings(), ...(value as Partial<StoredSettings>) };
    if (!isObject(document.provider_tokens) || !isObject(document.custom_secrets)) {
      throw new Error("stored settings have a malformed provider_tokens or custom_secrets");
    }
    if (!isObject(document.misc_settings)) throw new Error("stored settings have a malformed misc_settings");
    for (const slot of secretSlots(document)) {
      if (slot.sealed !== null && !isSealed(slot.sealed)) {
        throw new Error(`stored settings hold a value that is not sealed at ${slot.path}`);
      }
    }
    return document;
  }

  return { ...core, secretSlots, decryptedSecrets, readStoredSettings, parseStoredSettings };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error("stored settings are not valid JSON");
  }
}

/** Every secret slot of `stored`: the top-level `secrets`, then the nested ones. */
function listSecretSlots(secrets: readonly string[], stored: StoredSettings): SecretSlot[] {
  const document = stored as JsonObject & StoredSettings;
  const slots: SecretSlot[] = secrets.map((name) => ({ path: name, sealed: document[name] as SealedSecret | null }));
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

/** Opens one sealed secret (null stays null); `path` names the slot in the error. */
type OpenSecret = (sealed: SealedSecret | null, path: string) => string | null;

function secretOpener(cipher: SecretCipher): OpenSecret {
  return (sealed, path) => {
    if (sealed === null) return null;
    try {
      return cipher.decrypt(sealed);
    } catch (error) {
      const reason = error instanceof SecretDecryptionError ? error.message : "unexpected error";
      throw new SecretDecryptionError(`cannot open the stored secret at ${path}: ${reason}`);
    }
  };
}

function openProviderTokens(tokens: StoredSettings["provider_tokens"], open: OpenSecret): DecryptedSecrets["provider_tokens"] {
  const provider_tokens: DecryptedSecrets["provider_tokens"] = {};
  for (const provider of PROVIDER_TYPES) {
    const entry = ownEntry(tokens, provider);
    if (entry) {
      provider_tokens[provider] = {
        token: open(entry.token, `provider_tokens.${provider}.token`),
        host: entry.host,
        user_id: entry.user_id,
      };
    }
  }
  return provider_tokens;
}

function openCustomSecrets(secrets: StoredSettings["custom_secrets"], open: OpenSecret): DecryptedSecrets["custom_secrets"] {
  return Object.fromEntries(
    Object.entries(secrets).map(([name, entry]) => [
      name,
      { secret: open(entry.secret, `custom_secrets.${name}.secret`) ?? "", description: entry.description },
    ]),
  );
}

function openMcpConfig(mcp: StoredMCPConfig | null, open: OpenSecret): DecryptedSecrets["mcp_config"] {
  if (mcp === null) return null;
  return {
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
  };
}

/** A version 1 document (its stdio `env` values in clear) as the current version, those values sealed. */
function upgradeFromVersion1(value: JsonObject, cipher: SecretCipher): JsonObject {
  const mcp = value.mcp_config as StoredMCPConfig | null | undefined;
  return {
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
}

/** The settings functions over the table generated from spec/ (see {@link SettingsHandlers} for each). */
export const {
  defaultStoredSettings,
  storeSettings,
  storeGitProviders,
  settingsView,
  secretSlots,
  decryptedSecrets,
  readStoredSettings,
  parseStoredSettings,
}: SettingsHandlers = createSettingsHandlers(SPEC_SETTINGS_TABLE);
