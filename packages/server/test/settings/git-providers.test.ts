/** Git-provider tokens (POST /api/add-git-providers), the secrets_store of a settings body, and MCP servers' keys in the stored settings document. */
import type { AddGitProvidersRequest, Settings } from "@acs-toolkit/schema";
import { describe, expect, it } from "vitest";
import { type StoredSettings, decryptedSecrets, defaultStoredSettings, readStoredSettings, settingsView, storeGitProviders, storeSettings } from "../../src/sealed-settings.js";
import { cipher, SECRETS, fullSettings, persisted, deepFreeze } from "./settings-fixtures.js";

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
