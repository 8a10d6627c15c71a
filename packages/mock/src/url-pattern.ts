/** The URLs the mock's MSW handlers answer (the Node ones and the browser ones alike). */
import { openapiDocument } from "@acs-toolkit/schema/documents";

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The first segment of every path of the spec (`api`, `health`, `server_info`, …), the reference pages and `__mock`. */
const SEGMENTS = [...new Set([...Object.keys(openapiDocument.paths as object).map((path) => path.split("/")[1]!), "docs", "__mock"])];
const PATHS = `(?:${SEGMENTS.map((segment) => `${escape(segment)}(?:/|$)`).join("|")})`;

/** The URL pattern of the handlers: the mock's paths under `baseUrl` (any origin for `*`). */
export function mockUrlPattern(baseUrl = "*"): RegExp {
  const prefix = baseUrl === "*" ? "https?://[^/]+" : escape(baseUrl.replace(/\/+$/, ""));
  return new RegExp(`^${prefix}/${PATHS}`);
}

/** The path prefix of `baseUrl` (`/v1` of `http://host/v1`), empty for `*` or none. */
export function basePath(baseUrl = "*"): string {
  return baseUrl === "*" ? "" : new URL(baseUrl).pathname.replace(/\/+$/, "");
}
