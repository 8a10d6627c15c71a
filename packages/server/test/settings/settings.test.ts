import { randomBytes } from "node:crypto";
import type { Settings } from "@acs-toolkit/schema";
import { describe, expect, it } from "vitest";
import { SecretDecryptionError, createCipher, isSealed } from "../../src/secrets.js";
import { KEEP_WHEN_NULL, SECRET_FIELD_PATHS, SETTINGS_DEFAULTS, type StoredSettings, decryptedSecrets, defaultStoredSettings, parseStoredSettings, secretSlots, settingsView, storeGitProviders, storeSettings } from "../../src/sealed-settings.js";
import { cipher, SETTINGS_FIELDS, SECRETS, fullSettings, persisted, deepFreeze } from "./settings-fixtures.js";

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

describe("settings view round trip", () => {
  it("posting the view back changes nothing (every blanked secret is kept)", () => {
    const before = storeSettings(undefined, fullSettings(), cipher);
    const after = storeSettings(before, settingsView(before) as Settings, cipher);
    expect(decryptedSecrets(after, cipher)).toEqual(decryptedSecrets(before, cipher));
    expect(decryptedSecrets(before, cipher).sandbox_api_key).toBe(SECRETS.sandbox);
    expect(settingsView(after)).toEqual(settingsView(before));
  });
});
