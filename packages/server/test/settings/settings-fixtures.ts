/** What the settings document's tests share: a cipher, every field and secret of a full Settings body. */
import { randomBytes } from "node:crypto";
import type { Settings } from "@acs-toolkit/schema";
import { createCipher } from "../../src/secrets.js";
import { type StoredSettings, parseStoredSettings } from "../../src/sealed-settings.js";

export const cipher = createCipher(randomBytes(32));

/** Every field of the interface's Settings table, in its order. */
export const SETTINGS_FIELDS = [
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

export const SECRETS = {
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

/** Settings with every field set, every secret slot filled (SECRETS). */
export function fullSettings(): Settings {
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
export const persisted = (document: StoredSettings): StoredSettings => parseStoredSettings(JSON.stringify(document));

/** `value`, frozen at every level: a test that it is not mutated. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}
