import { randomBytes } from "node:crypto";
import type { AddGitProvidersRequest, Settings } from "@acs-toolkit/schema";
import { describe, expect, it } from "vitest";
import { SecretDecryptionError, createCipher, isSealed } from "../../src/secrets.js";
import {
  KEEP_WHEN_NULL,
  SECRET_FIELD_PATHS,
  SETTINGS_DEFAULTS,
  type StoredSettings,
  decryptedSecrets,
  defaultStoredSettings,
  parseStoredSettings,
  readStoredSettings,
  secretSlots,
  settingsView,
  storeGitProviders,
  storeSettings,
} from "../../src/sealed-settings.js";

const cipher = createCipher(randomBytes(32));

/** Every field of the interface's Settings table, in its order. */
const SETTINGS_FIELDS = [
  "language",
  "agent",
  "max_iterations",
  "security_analyzer",
  "confirmation_mode",
  "llm_model",
  "llm_api_key",
  "llm_base_url",
  "remote_runtime_resource_factor",
  "secrets_store",
  "enable_default_condenser",
  "enable_sound_notifications",
  "enable_proactive_conversation_starters",
  "enable_solvability_analysis",
  "user_consents_to_analytics",
  "sandbox_base_container_image",
  "sandbox_runtime_container_image",
  "mcp_config",
  "search_api_key",
  "sandbox_api_key",
  "max_budget_per_task",
  "email",
  "email_verified",
  "git_user_name",
  "git_user_email",
] as const;

const SECRETS = {
  llm: "sk-ant-LLM-KEY-0123456789abcdef",
  search: "tvly-SEARCH-KEY-0123456789",
  sandbox: "SANDBOX-KEY-0123456789",
  github: "ghp_GITHUBTOKEN0123456789abcdef",
  gitlab: "glpat-GITLABTOKEN0123456789",
  customString: "CUSTOM-STRING-SECRET-0123",
  customObject: "CUSTOM-OBJECT-SECRET-4567",
  sse: "SSE-API-KEY-0123456789",
  shttp: "SHTTP-API-KEY-0123456789",
  stdioEnv: "ghp_STDIO-ENV-TOKEN-0123456789",
} as const;

function fullSettings(): Settings {
  return {
    language: "en",
    agent: "CodeActAgent",
    max_iterations: 100,
    security_analyzer: "llm",
    confirmation_mode: true,
    llm_model: "anthropic/claude-sonnet-4-5-20250929",
    llm_api_key: SECRETS.llm,
    llm_base_url: "https://llm.example.com",
    remote_runtime_resource_factor: 2,
    secrets_store: {
      provider_tokens: {
        github: { token: SECRETS.github, host: "github.com", user_id: "42" },
        gitlab: { token: SECRETS.gitlab, host: "gitlab.example.com", user_id: null },
      },
      custom_secrets: {
        STRING_SECRET: SECRETS.customString,
        OBJECT_SECRET: { secret: SECRETS.customObject, description: "for the deploy script" },
      },
    },
    enable_default_condenser: false,
    enable_sound_notifications: true,
    enable_proactive_conversation_starters: false,
    enable_solvability_analysis: false,
    user_consents_to_analytics: true,
    sandbox_base_container_image: "python:3.12",
    sandbox_runtime_container_image: "runtime:1",
    mcp_config: {
      sse_servers: [{ url: "https://sse.example.com/sse", api_key: SECRETS.sse }],
      stdio_servers: [{ name: "fetch", command: "uvx", args: ["mcp-server-fetch"], env: { LOG: "debug", GITHUB_TOKEN: SECRETS.stdioEnv } }],
      shttp_servers: [{ url: "https://shttp.example.com/mcp", api_key: SECRETS.shttp, timeout: 30 }],
    },
    search_api_key: SECRETS.search,
    sandbox_api_key: SECRETS.sandbox,
    max_budget_per_task: 5.5,
    email: "dev@example.com",
    email_verified: true,
    git_user_name: "openhands",
    git_user_email: "openhands@all-hands.dev",
  };
}

/** The stored document as the server persists it (through JSON, like the key-value store). */
const persisted = (document: StoredSettings): StoredSettings => parseStoredSettings(JSON.stringify(document));

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

describe("defaults", () => {
  it("an account that never stored anything reads as defaults", () => {
    const view = settingsView(undefined);
    for (const field of SETTINGS_FIELDS) {
      expect(view, field).toHaveProperty(field);
      const expected = field in SETTINGS_DEFAULTS ? SETTINGS_DEFAULTS[field as keyof typeof SETTINGS_DEFAULTS] : null;
      expect(view[field], field).toBe(expected);
    }
    expect(view).toMatchObject({
      enable_default_condenser: true,
      enable_proactive_conversation_starters: true,
      enable_solvability_analysis: true,
      enable_sound_notifications: false,
      llm_api_key_set: false,
      search_api_key_set: false,
      sandbox_api_key_set: false,
      provider_tokens_set: {},
    });
  });

  it("storing an empty body gives the defaults", () => {
    expect(storeSettings(undefined, {}, cipher)).toEqual(defaultStoredSettings());
  });

  it.each(Object.entries(SETTINGS_DEFAULTS))("%s takes its default (%s) when absent or null, and keeps an explicit value", (field, fallback) => {
    const previous = storeSettings(undefined, { [field]: !fallback }, cipher);
    expect(previous[field as keyof StoredSettings]).toBe(!fallback);
    expect(storeSettings(previous, {}, cipher)[field as keyof StoredSettings]).toBe(fallback);
    expect(storeSettings(previous, { [field]: null }, cipher)[field as keyof StoredSettings]).toBe(fallback);
    expect(storeSettings(previous, { [field]: fallback }, cipher)[field as keyof StoredSettings]).toBe(fallback);
  });
});

describe("POST /api/settings: full replace", () => {
  it("stores every field and reads them back (secrets blanked)", () => {
    const stored = persisted(storeSettings(undefined, fullSettings(), cipher));
    const view = settingsView(stored);
    const { secrets_store: _ignored, ...plain } = fullSettings();
    expect(view).toEqual({
      ...plain,
      llm_api_key: null,
      search_api_key: null,
      sandbox_api_key: null,
      secrets_store: null,
      mcp_config: {
        sse_servers: [{ url: "https://sse.example.com/sse", api_key: null }],
        stdio_servers: [{ name: "fetch", command: "uvx", args: ["mcp-server-fetch"], env: { LOG: null, GITHUB_TOKEN: null }, env_set: ["LOG", "GITHUB_TOKEN"] }],
        shttp_servers: [{ url: "https://shttp.example.com/mcp", api_key: null, timeout: 30 }],
      },
      llm_api_key_set: true,
      search_api_key_set: true,
      sandbox_api_key_set: true,
      provider_tokens_set: { github: "github.com", gitlab: "gitlab.example.com" },
    });
  });

  it("replaces every field that is not kept: absent means null (or the default)", () => {
    const first = storeSettings(undefined, fullSettings(), cipher);
    const second = storeSettings(first, { language: "fr" }, cipher);
    const view = settingsView(second);
    expect(view).toMatchObject({
      language: "fr",
      agent: null,
      max_iterations: null,
      security_analyzer: null,
      confirmation_mode: null,
      remote_runtime_resource_factor: null,
      enable_default_condenser: true,
      enable_sound_notifications: false,
      enable_proactive_conversation_starters: true,
      enable_solvability_analysis: true,
      sandbox_base_container_image: null,
      sandbox_runtime_container_image: null,
      mcp_config: null,
      max_budget_per_task: null,
      email: null,
      email_verified: null,
      git_user_name: null,
      git_user_email: null,
      sandbox_api_key_set: true, // kept, like the other blanked secrets
    });
  });

  const keepCases: [field: (typeof KEEP_WHEN_NULL)[number], first: string | boolean, next: string | boolean][] = [
    ["llm_api_key", "sk-first-key-000000", "sk-second-key-11111"],
    ["llm_model", "anthropic/claude-sonnet-4-5-20250929", "openai/gpt-5"],
    ["llm_base_url", "https://one.example.com", "https://two.example.com"],
    ["search_api_key", "tvly-first-000000", "tvly-second-111111"],
    ["user_consents_to_analytics", true, false],
    ["sandbox_api_key", "sbx-first-000000", "sbx-second-111111"],
  ];
  const clearOf = (document: StoredSettings, field: string): unknown => {
    const secrets = decryptedSecrets(document, cipher) as unknown as Record<string, unknown>;
    return field in secrets ? secrets[field] : (document as unknown as Record<string, unknown>)[field];
  };

  it("keeps the five fields of ground truth §7 and sandbox_api_key", () => {
    expect([...KEEP_WHEN_NULL].sort()).toEqual(keepCases.map(([field]) => field).sort());
  });

  it.each(keepCases)("%s sent as null or absent keeps its stored value; a value replaces it", (field, first, next) => {
    const stored = storeSettings(undefined, { [field]: first }, cipher);
    expect(clearOf(stored, field)).toBe(first);
    expect(clearOf(storeSettings(stored, { [field]: null }, cipher), field)).toBe(first);
    expect(clearOf(storeSettings(stored, {}, cipher), field)).toBe(first);
    expect(clearOf(storeSettings(stored, { language: "de" }, cipher), field)).toBe(first);
    expect(clearOf(storeSettings(stored, { [field]: next }, cipher), field)).toBe(next);
  });

  it.each(keepCases)("%s with nothing stored stays null", (field) => {
    expect(clearOf(storeSettings(undefined, { [field]: null }, cipher), field)).toBeNull();
  });

  it.each(["llm_api_key", "search_api_key", "sandbox_api_key"] as const)("%s sent as the empty string is cleared", (field) => {
    const stored = storeSettings(undefined, fullSettings(), cipher);
    const cleared = storeSettings(stored, { [field]: "" }, cipher);
    expect(cleared[field]).toBeNull();
    expect(settingsView(cleared)[`${field}_set`]).toBe(false);
  });

  it.each([
    ["language", null],
    ["max_iterations", undefined],
    ["confirmation_mode", null],
    ["git_user_email", undefined],
  ])("%s (not kept) sent as %s is cleared", (field, value) => {
    const stored = storeSettings(undefined, fullSettings(), cipher);
    const body: Settings = { ...fullSettings(), [field]: value };
    if (value === undefined) delete body[field];
    expect((storeSettings(stored, body, cipher) as unknown as Record<string, unknown>)[field]).toBeNull();
  });

  it("stores strings as given, the empty string included", () => {
    const stored = storeSettings(undefined, fullSettings(), cipher);
    expect(storeSettings(stored, { llm_model: "", language: "" }, cipher)).toMatchObject({ llm_model: "", language: "" });
  });

  it("drops unknown properties at every level", () => {
    const body = {
      ...fullSettings(),
      unknown_top_level: "x-unknown-1",
      secrets_store: {
        provider_tokens: { github: { token: SECRETS.github, host: "github.com", extra: "x-unknown-2" } },
        custom_secrets: { A: { secret: "abc-secret-value", description: null, extra: "x-unknown-3" } },
        extra: "x-unknown-4",
      },
      mcp_config: {
        sse_servers: [{ url: "https://sse.example.com", headers: { Authorization: "x-unknown-5" } }],
        stdio_servers: [{ name: "n", command: "c", extra: "x-unknown-6" }],
        shttp_servers: [{ url: "https://shttp.example.com", extra: "x-unknown-7" }],
        extra: "x-unknown-8",
      },
    } as Settings;
    const stored = storeSettings(undefined, body, cipher);
    const text = JSON.stringify(stored) + JSON.stringify(settingsView(stored)) + JSON.stringify(decryptedSecrets(stored, cipher));
    expect(text).not.toMatch(/x-unknown|unknown_top_level|extra|headers/);
  });

  it("refuses values of the wrong type, naming the field and not the value", () => {
    expect(() => storeSettings(undefined, { llm_api_key: 12345 } as unknown as Settings, cipher)).toThrow(/llm_api_key must be a string or null/);
    expect(() => storeSettings(undefined, { max_iterations: "many" } as unknown as Settings, cipher)).toThrow(/max_iterations/);
    const error = (() => {
      try {
        storeSettings(undefined, { mcp_config: { sse_servers: [{ url: "u", api_key: ["k-e-y-v-a-l-u-e"] }] } } as unknown as Settings, cipher);
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.message).toContain("mcp_config.sse_servers[0].api_key");
    expect(error?.message).not.toContain("k-e-y");
  });

  it("does not mutate its inputs and shares nothing with them", () => {
    const body = deepFreeze(fullSettings());
    const stored = deepFreeze(storeSettings(undefined, body, cipher));
    const next = storeSettings(stored, deepFreeze({ language: "fr" }), cipher);
    expect(next.provider_tokens).not.toBe(stored.provider_tokens);
    expect(next.custom_secrets).not.toBe(stored.custom_secrets);
    expect(next.provider_tokens).toEqual(stored.provider_tokens);
  });
});

describe("secrets at rest", () => {
  const allClear = Object.values(SECRETS);

  function expectNoClearSecret(document: StoredSettings) {
    const text = JSON.stringify(document);
    for (const secret of allClear) expect(text, secret).not.toContain(secret);
    for (const slot of secretSlots(document)) {
      if (slot.sealed !== null) expect(isSealed(slot.sealed), slot.path).toBe(true);
    }
  }

  it("no clear secret appears anywhere in the stored document", () => {
    const stored = storeSettings(undefined, fullSettings(), cipher);
    expectNoClearSecret(stored);
    // Every secret slot of the document is filled (sealed) for the full body.
    const slots = secretSlots(stored);
    expect(slots.map((slot) => slot.path).sort()).toEqual(
      [
        "llm_api_key",
        "search_api_key",
        "sandbox_api_key",
        "provider_tokens.github.token",
        "provider_tokens.gitlab.token",
        "custom_secrets.STRING_SECRET.secret",
        "custom_secrets.OBJECT_SECRET.secret",
        "mcp_config.sse_servers[0].api_key",
        "mcp_config.shttp_servers[0].api_key",
        "mcp_config.stdio_servers[0].env.LOG",
        "mcp_config.stdio_servers[0].env.GITHUB_TOKEN",
      ].sort(),
    );
    expect(slots.every((slot) => slot.sealed !== null)).toBe(true);
  });

  it("no clear secret after git providers are stored, nor after a settings round trip", () => {
    let stored = storeSettings(undefined, fullSettings(), cipher);
    stored = storeGitProviders(stored, { provider_tokens: { github: { token: SECRETS.github, host: "github.com" } } }, cipher);
    expectNoClearSecret(stored);
    stored = storeSettings(stored, settingsView(stored) as Settings, cipher);
    expectNoClearSecret(stored);
  });

  it("the view returns neither a clear nor a sealed secret", () => {
    const stored = storeSettings(undefined, fullSettings(), cipher);
    const text = JSON.stringify(settingsView(stored));
    for (const secret of allClear) expect(text, secret).not.toContain(secret);
    for (const slot of secretSlots(stored)) if (slot.sealed) expect(text).not.toContain(slot.sealed);
    expect(text).not.toMatch(/"v1:/);
    expect(text).not.toContain("custom_secrets");
  });

  it("decryptedSecrets gives back every clear value", () => {
    const stored = persisted(storeSettings(undefined, fullSettings(), cipher));
    expect(decryptedSecrets(stored, cipher)).toEqual({
      llm_api_key: SECRETS.llm,
      search_api_key: SECRETS.search,
      sandbox_api_key: SECRETS.sandbox,
      provider_tokens: {
        github: { token: SECRETS.github, host: "github.com", user_id: "42" },
        gitlab: { token: SECRETS.gitlab, host: "gitlab.example.com", user_id: null },
      },
      custom_secrets: {
        STRING_SECRET: { secret: SECRETS.customString, description: null },
        OBJECT_SECRET: { secret: SECRETS.customObject, description: "for the deploy script" },
      },
      mcp_config: {
        sse_servers: [{ url: "https://sse.example.com/sse", api_key: SECRETS.sse }],
        stdio_servers: [{ name: "fetch", command: "uvx", args: ["mcp-server-fetch"], env: { LOG: "debug", GITHUB_TOKEN: SECRETS.stdioEnv } }],
        shttp_servers: [{ url: "https://shttp.example.com/mcp", api_key: SECRETS.shttp, timeout: 30 }],
      },
    });
    expect(decryptedSecrets(undefined, cipher)).toEqual({
      llm_api_key: null,
      search_api_key: null,
      sandbox_api_key: null,
      provider_tokens: {},
      custom_secrets: {},
      mcp_config: null,
    });
  });

  it("decryptedSecrets with another key fails naming the path, not the value", () => {
    const stored = storeSettings(undefined, fullSettings(), cipher);
    const other = createCipher(randomBytes(32));
    expect(() => decryptedSecrets(stored, other)).toThrow(SecretDecryptionError);
    expect(() => decryptedSecrets(stored, other)).toThrow(/^cannot open the stored secret at [\w.[\]]+: /);
    try {
      decryptedSecrets(stored, other);
    } catch (error) {
      for (const secret of Object.values(SECRETS)) expect((error as Error).message).not.toContain(secret);
    }
  });

  it("SECRET_FIELD_PATHS.stored covers every slot secretSlots reports", () => {
    const stored = storeSettings(undefined, fullSettings(), cipher);
    const patterns = SECRET_FIELD_PATHS.stored.map(
      (path) => new RegExp(`^${path.replace(/[.[\]]/g, "\\$&").replace(/\\\[\*\\\]/g, "\\[\\d+\\]").replace(/\*/g, "[^.]+")}$`),
    );
    for (const slot of secretSlots(stored)) expect(patterns.some((pattern) => pattern.test(slot.path)), slot.path).toBe(true);
  });
});

describe("parseStoredSettings", () => {
  it("round-trips a stored document", () => {
    const stored = storeSettings(undefined, fullSettings(), cipher);
    expect(parseStoredSettings(JSON.stringify(stored))).toEqual(stored);
  });

  it("fills fields missing from an older document with their defaults", () => {
    expect(parseStoredSettings(JSON.stringify({ version: 2, language: "en" }))).toEqual({ ...defaultStoredSettings(), language: "en" });
  });

  it.each([
    ["invalid JSON", "{", /not valid JSON/],
    ["an array", "[]", /not a JSON object/],
    ["an unknown version", JSON.stringify({ version: 3 }), /unknown version/],
    [
      "a clear stdio env value",
      JSON.stringify({ ...defaultStoredSettings(), mcp_config: { sse_servers: [], shttp_servers: [], stdio_servers: [{ name: "n", command: "c", args: [], env: { T: "sk-clear-value" } }] } }),
      /not sealed at mcp_config.stdio_servers\[0\].env.T/,
    ],
    ["a clear secret", JSON.stringify({ ...defaultStoredSettings(), llm_api_key: "sk-clear-value" }), /not sealed at llm_api_key/],
    [
      "a clear provider token",
      JSON.stringify({ ...defaultStoredSettings(), provider_tokens: { github: { token: "ghp_clear", host: null, user_id: null } } }),
      /not sealed at provider_tokens.github.token/,
    ],
  ])("refuses %s", (_name, text, message) => {
    let error: unknown;
    try {
      parseStoredSettings(text);
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toMatch(/sk-clear-value|ghp_clear/);
  });
});

describe("POST /api/add-git-providers", () => {
  const base = () =>
    storeGitProviders(
      storeSettings(undefined, { llm_api_key: SECRETS.llm, language: "en" }, cipher),
      {
        provider_tokens: {
          github: { token: SECRETS.github, host: "github.com", user_id: "1" },
          gitlab: { token: SECRETS.gitlab, host: "gitlab.com", user_id: "2" },
        },
      },
      cipher,
    );
  const tokens = (document: StoredSettings) => decryptedSecrets(document, cipher).provider_tokens;

  it("stores tokens sealed and reports them with their hosts", () => {
    const stored = base();
    expect(settingsView(stored).provider_tokens_set).toEqual({ github: "github.com", gitlab: "gitlab.com" });
    expect(JSON.stringify(stored)).not.toContain(SECRETS.github);
    expect(tokens(stored)).toEqual({
      github: { token: SECRETS.github, host: "github.com", user_id: "1" },
      gitlab: { token: SECRETS.gitlab, host: "gitlab.com", user_id: "2" },
    });
  });

  it("leaves the other settings alone", () => {
    const stored = base();
    expect(stored.language).toBe("en");
    expect(decryptedSecrets(stored, cipher).llm_api_key).toBe(SECRETS.llm);
  });

  it("replaces the map: providers not sent are removed", () => {
    const next = storeGitProviders(base(), { provider_tokens: { bitbucket: { token: "bb-token-000000", host: "bitbucket.org" } } }, cipher);
    expect(Object.keys(next.provider_tokens)).toEqual(["bitbucket"]);
    expect(settingsView(next).provider_tokens_set).toEqual({ bitbucket: "bitbucket.org" });
    expect(JSON.stringify(next)).not.toContain("bb-token-000000");
  });

  it.each([
    ["an empty token", { token: "" }],
    ["a null token", { token: null }],
    ["no token", {}],
  ])("%s keeps the stored token; host comes from the incoming entry", (_name, entry) => {
    const stored = base();
    const next = storeGitProviders(stored, { provider_tokens: { github: { ...entry, host: "github.example.com", user_id: "9" } } }, cipher);
    expect(next.provider_tokens.github?.token).toBe(stored.provider_tokens.github?.token);
    expect(tokens(next)).toEqual({ github: { token: SECRETS.github, host: "github.example.com", user_id: "9" } });
    expect(settingsView(next).provider_tokens_set).toEqual({ github: "github.example.com" });
  });

  it("a kept token keeps its stored user_id when none is sent", () => {
    const next = storeGitProviders(base(), { provider_tokens: { github: { token: "", host: null, user_id: null } } }, cipher);
    expect(tokens(next)).toEqual({ github: { token: SECRETS.github, host: null, user_id: "1" } });
  });

  it("a new token replaces the stored one", () => {
    const next = storeGitProviders(base(), { provider_tokens: { github: { token: "ghp_NEWTOKEN_123456", host: "github.com" } } }, cipher);
    expect(tokens(next).github).toEqual({ token: "ghp_NEWTOKEN_123456", host: "github.com", user_id: null });
  });

  it("an empty token with nothing stored stores the provider without a token (not reported as set)", () => {
    const next = storeGitProviders(undefined, { provider_tokens: { enterprise_sso: { token: "", host: "sso.example.com", user_id: "u" } } }, cipher);
    expect(next.provider_tokens).toEqual({ enterprise_sso: { token: null, host: "sso.example.com", user_id: "u" } });
    expect(settingsView(next).provider_tokens_set).toEqual({});
    expect(settingsView(next)).toMatchObject(settingsView(undefined) as object);
  });

  it.each([
    ["an empty map", { provider_tokens: {} }],
    ["no provider_tokens (the schema's default is {})", {}],
  ])("%s removes every provider", (_name, request) => {
    const next = storeGitProviders(base(), request as AddGitProvidersRequest, cipher);
    expect(next.provider_tokens).toEqual({});
    expect(settingsView(next).provider_tokens_set).toEqual({});
  });

  it("mcp_config when given replaces the stored one; null or absent keeps it", () => {
    const stored = storeSettings(undefined, fullSettings(), cipher);
    const keptNull = storeGitProviders(stored, { mcp_config: null, provider_tokens: {} }, cipher);
    const keptAbsent = storeGitProviders(stored, { provider_tokens: {} }, cipher);
    expect(keptNull.mcp_config).toEqual(stored.mcp_config);
    expect(keptAbsent.mcp_config).toEqual(stored.mcp_config);
    const replaced = storeGitProviders(stored, { mcp_config: { stdio_servers: [{ name: "git", command: "uvx" }] } }, cipher);
    expect(replaced.mcp_config).toEqual({
      sse_servers: [],
      stdio_servers: [{ name: "git", command: "uvx", args: [], env: {} }],
      shttp_servers: [],
    });
  });

  it("refuses an unknown provider without echoing the key", () => {
    expect(() =>
      storeGitProviders(undefined, { provider_tokens: { "ghp_not-a-provider": { token: "t" } } }, cipher),
    ).toThrow(/each key of provider_tokens must be one of github, gitlab, bitbucket, enterprise_sso$/);
  });

  it("does not mutate the stored document", () => {
    const stored = deepFreeze(base());
    const snapshot = JSON.stringify(stored);
    storeGitProviders(stored, { provider_tokens: { github: { token: "" } }, mcp_config: {} }, cipher);
    expect(JSON.stringify(stored)).toBe(snapshot);
  });
});

describe("secrets_store in POST /api/settings", () => {
  const stored = () => storeSettings(undefined, fullSettings(), cipher);

  it.each([
    ["absent", {}],
    ["null", { secrets_store: null }],
    ["an empty object", { secrets_store: {} }],
  ])("%s keeps the stored provider tokens and custom secrets", (_name, body) => {
    const before = stored();
    const after = storeSettings(before, body as Settings, cipher);
    expect(after.provider_tokens).toEqual(before.provider_tokens);
    expect(after.custom_secrets).toEqual(before.custom_secrets);
  });

  it("provider_tokens follow the add-git-providers rule", () => {
    const after = storeSettings(stored(), { secrets_store: { provider_tokens: { github: { token: "", host: "github.com" } } } }, cipher);
    expect(decryptedSecrets(after, cipher).provider_tokens).toEqual({ github: { token: SECRETS.github, host: "github.com", user_id: "42" } });
    expect(decryptedSecrets(after, cipher).custom_secrets).toHaveProperty("OBJECT_SECRET");
  });

  it("custom_secrets replace the stored map; an empty secret keeps the stored one, or is dropped", () => {
    const after = storeSettings(
      stored(),
      {
        secrets_store: {
          custom_secrets: {
            OBJECT_SECRET: { secret: "", description: "new description" },
            STRING_SECRET_GONE_BY_EMPTY: "",
            NEW_SECRET: { secret: "NEW-SECRET-VALUE-000" },
          },
        },
      },
      cipher,
    );
    expect(decryptedSecrets(after, cipher).custom_secrets).toEqual({
      OBJECT_SECRET: { secret: SECRETS.customObject, description: "new description" },
      NEW_SECRET: { secret: "NEW-SECRET-VALUE-000", description: null },
    });
    expect(JSON.stringify(after)).not.toContain("NEW-SECRET-VALUE-000");
  });

  it("an empty bare-string secret keeps both the stored secret and its description", () => {
    const after = storeSettings(stored(), { secrets_store: { custom_secrets: { OBJECT_SECRET: "" } } }, cipher);
    expect(decryptedSecrets(after, cipher).custom_secrets).toEqual({
      OBJECT_SECRET: { secret: SECRETS.customObject, description: "for the deploy script" },
    });
  });

  it("names such as __proto__ and constructor are plain entries", () => {
    const body = JSON.parse(
      '{"secrets_store":{"custom_secrets":{"__proto__":"PROTO-SECRET-000","constructor":{"secret":"CTOR-SECRET-000"}}}}',
    ) as Settings;
    const after = persisted(storeSettings(undefined, body, cipher));
    expect(Object.getPrototypeOf(after.custom_secrets)).toBe(Object.prototype);
    expect(Object.keys(after.custom_secrets).sort()).toEqual(["__proto__", "constructor"]);
    const clear = decryptedSecrets(after, cipher).custom_secrets;
    expect(Object.hasOwn(clear, "__proto__") && clear["__proto__"]?.secret).toBe("PROTO-SECRET-000");
    expect(clear["constructor"]?.secret).toBe("CTOR-SECRET-000");
    // An empty secret for a name that exists only on Object.prototype is not "kept" from it.
    const again = storeSettings(undefined, { secrets_store: { custom_secrets: { toString: "" } } }, cipher);
    expect(again.custom_secrets).toEqual({});
  });
});

describe("MCP servers", () => {
  const stored = () => storeSettings(undefined, fullSettings(), cipher);
  const mcpOf = (document: StoredSettings) => decryptedSecrets(document, cipher).mcp_config;

  it("fills defaults", () => {
    const document = storeSettings(undefined, { mcp_config: { shttp_servers: [{ url: "https://m.example.com" }] } }, cipher);
    expect(document.mcp_config).toEqual({
      sse_servers: [],
      stdio_servers: [],
      shttp_servers: [{ url: "https://m.example.com", api_key: null, timeout: 60 }],
    });
  });

  it("absent or null mcp_config clears it (full replace)", () => {
    expect(storeSettings(stored(), { mcp_config: null }, cipher).mcp_config).toBeNull();
    expect(storeSettings(stored(), {}, cipher).mcp_config).toBeNull();
  });

  it("a server sent back from the view keeps its api_key (matched by url)", () => {
    const before = stored();
    const after = storeSettings(before, settingsView(before) as Settings, cipher);
    expect(mcpOf(after)).toEqual(mcpOf(before));
  });

  it.each([
    ["null", null, SECRETS.sse],
    ["absent", undefined, SECRETS.sse],
    ["the empty string", "", null],
    ["a new key", "SSE-NEW-KEY-0000", "SSE-NEW-KEY-0000"],
  ])("api_key %s on the same url", (_name, apiKey, expected) => {
    const server: Record<string, unknown> = { url: "https://sse.example.com/sse" };
    if (apiKey !== undefined) server.api_key = apiKey;
    const after = storeSettings(stored(), { mcp_config: { sse_servers: [server as { url: string }] } }, cipher);
    expect(mcpOf(after)?.sse_servers).toEqual([{ url: "https://sse.example.com/sse", api_key: expected }]);
  });

  it("a key is never carried over to another url, nor across server kinds", () => {
    const after = storeSettings(
      stored(),
      {
        mcp_config: {
          sse_servers: [{ url: "https://evil.example.com/sse" }, { url: "https://shttp.example.com/mcp" }],
          shttp_servers: [{ url: "https://sse.example.com/sse" }],
        },
      },
      cipher,
    );
    const mcp = mcpOf(after);
    expect(mcp?.sse_servers.map((server) => server.api_key)).toEqual([null, null]);
    expect(mcp?.shttp_servers.map((server) => server.api_key)).toEqual([null]);
  });

  it.each([
    ["null", null, SECRETS.stdioEnv],
    ["the empty string", "", SECRETS.stdioEnv],
    ["a new value", "ghp_NEW", "ghp_NEW"],
  ])("a stdio env value sent as %s on the same server (name and command)", (_name, value, expected) => {
    const after = storeSettings(stored(), { mcp_config: { stdio_servers: [{ name: "fetch", command: "uvx", env: { GITHUB_TOKEN: value as string } }] } }, cipher);
    expect(mcpOf(after)?.stdio_servers[0]?.env).toEqual({ GITHUB_TOKEN: expected });
  });

  it("a blank stdio env value is never carried to another server name or command, and is dropped with nothing to keep", () => {
    const after = storeSettings(
      stored(),
      {
        mcp_config: {
          stdio_servers: [
            { name: "fetch", command: "sh", env: { GITHUB_TOKEN: null as unknown as string } },
            { name: "other", command: "uvx", env: { GITHUB_TOKEN: "", NEW: null as unknown as string } },
          ],
        },
      },
      cipher,
    );
    expect(mcpOf(after)?.stdio_servers.map((server) => server.env)).toEqual([{}, {}]);
  });

  it("the view blanks every stdio env value and names the set ones", () => {
    const view = settingsView(stored());
    expect(view.mcp_config?.stdio_servers).toEqual([{ name: "fetch", command: "uvx", args: ["mcp-server-fetch"], env: { LOG: null, GITHUB_TOKEN: null }, env_set: ["LOG", "GITHUB_TOKEN"] }]);
  });

  it("a version-1 document (stdio env values in clear) is read with its values sealed", () => {
    const legacy = { ...defaultStoredSettings(), version: 1, mcp_config: { sse_servers: [], shttp_servers: [], stdio_servers: [{ name: "gh", command: "npx", args: [], env: { TOKEN: SECRETS.stdioEnv } }] } };
    const { settings, upgraded } = readStoredSettings(JSON.stringify(legacy), cipher);
    expect(upgraded).toBe(true);
    expect(JSON.stringify(settings)).not.toContain(SECRETS.stdioEnv);
    expect(decryptedSecrets(settings, cipher).mcp_config?.stdio_servers[0]?.env).toEqual({ TOKEN: SECRETS.stdioEnv });
    expect(readStoredSettings(JSON.stringify(settings), cipher).upgraded).toBe(false);
  });

  it("the view blanks every api_key", () => {
    const view = settingsView(stored());
    expect(view.mcp_config?.sse_servers?.every((server) => server.api_key === null)).toBe(true);
    expect(view.mcp_config?.shttp_servers?.every((server) => server.api_key === null)).toBe(true);
  });
});

describe("settings view round trip", () => {
  it("posting the view back changes nothing (every blanked secret is kept)", () => {
    const before = storeSettings(undefined, fullSettings(), cipher);
    const after = storeSettings(before, settingsView(before) as Settings, cipher);
    expect(decryptedSecrets(after, cipher)).toEqual(decryptedSecrets(before, cipher));
    expect(decryptedSecrets(before, cipher).sandbox_api_key).toBe(SECRETS.sandbox);
    expect(settingsView(after)).toEqual(settingsView(before));
  });
});
