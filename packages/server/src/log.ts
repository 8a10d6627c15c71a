/** Structured JSON logs (pino). Keys and secrets are redacted wherever a logger could meet them. */
import { pino, type Logger } from "pino";

export type { Logger };

const REDACTED_PATHS = [
  "req.headers['x-session-api-key']",
  "req.headers.authorization",
  "req.headers.cookie",
  "headers['x-session-api-key']",
  "*.llm_api_key",
  "*.search_api_key",
  "*.sandbox_api_key",
  "*.token",
  "*.session_api_key",
  "*.api_key",
  "*.stdio_servers[*].env",
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino({ level, base: { service: "acs-server" }, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, destination as never);
}
