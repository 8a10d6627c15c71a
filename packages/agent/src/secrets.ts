/**
 * Secrets from the settings: given to commands as environment variables, and never to the LLM, a
 * recorded event or a log line. Every text the runtime records from a tool or an error passes
 * through {@link SecretMasker.mask}, which replaces each secret value with `<secret-hidden>`, as
 * OpenHands' SecretRegistry does.
 */
import type { AgentSettings } from "./host.js";

export const SECRET_PLACEHOLDER = "<secret-hidden>";

/** Environment variable name of each provider's token, as OpenHands exports them. */
const PROVIDER_ENV: Readonly<Record<string, string>> = {
  github: "GITHUB_TOKEN",
  gitlab: "GITLAB_TOKEN",
  bitbucket: "BITBUCKET_TOKEN",
  enterprise_sso: "ENTERPRISE_SSO_TOKEN",
};

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Values this short would mask ordinary text (a one-character secret would hide every such character). */
const MIN_MASKED_LENGTH = 3;

export interface SecretEnvironment {
  /** Variables for commands: each custom secret under its own name, provider tokens as `GITHUB_TOKEN`…. */
  env: Record<string, string>;
  /** Names skipped because they are not valid environment variable names (names only, never values). */
  skipped: string[];
  /** Every secret value the settings hold, for masking (the LLM and MCP keys included). */
  values: string[];
}

/** The secrets of `settings` as environment variables and as values to mask. */
export function secretEnvironment(settings: AgentSettings): SecretEnvironment {
  const env: Record<string, string> = {};
  const skipped: string[] = [];
  const values: string[] = [];
  for (const [provider, token] of Object.entries(settings.secrets_store?.provider_tokens ?? {})) {
    const value = token?.token;
    if (!value) continue;
    values.push(value);
    const name = PROVIDER_ENV[provider];
    if (name) env[name] = value;
  }
  for (const [name, secret] of Object.entries(settings.secrets_store?.custom_secrets ?? {})) {
    const value = typeof secret === "string" ? secret : secret?.secret;
    if (!value) continue;
    values.push(value);
    if (ENV_NAME.test(name)) env[name] = value;
    else skipped.push(name);
  }
  if (settings.llm_api_key) values.push(settings.llm_api_key);
  const mcp = settings.mcp_config;
  for (const server of [...(mcp?.sse_servers ?? []), ...(mcp?.shttp_servers ?? [])]) if (server.api_key) values.push(server.api_key);
  for (const server of mcp?.stdio_servers ?? []) values.push(...Object.values(server.env ?? {}).filter((value): value is string => typeof value === "string" && value.length >= 8));
  return { env, skipped, values };
}

/** Replaces secret values in text. */
export class SecretMasker {
  private readonly values: string[];

  constructor(values: readonly string[]) {
    // Longest first, so that a secret containing another is hidden whole.
    this.values = [...new Set(values.filter((value) => value.length >= MIN_MASKED_LENGTH))].sort((a, b) => b.length - a.length);
  }

  mask(text: string): string;
  mask(text: string | null): string | null;
  mask(text: string | null): string | null {
    if (!text || this.values.length === 0) return text;
    let masked = text;
    for (const value of this.values) if (masked.includes(value)) masked = masked.split(value).join(SECRET_PLACEHOLDER);
    return masked;
  }

  /** A JSON value with every string masked. */
  maskDeep<T>(value: T): T {
    if (this.values.length === 0) return value;
    if (typeof value === "string") return this.mask(value) as T;
    if (Array.isArray(value)) return value.map((item) => this.maskDeep(item)) as T;
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.maskDeep(item)])) as T;
    }
    return value;
  }
}
