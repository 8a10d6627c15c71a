/** The URLs the mock's MSW handlers answer (the Node ones and the browser ones alike). */
const PATHS = "(?:api(?:/|$)|health$|openapi\\.json$|asyncapi\\.json$|docs(?:/|$)|__mock$)";
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The URL pattern of the handlers: the mock's paths under `baseUrl` (any origin for `*`). */
export function mockUrlPattern(baseUrl = "*"): RegExp {
  const prefix = baseUrl === "*" ? "https?://[^/]+" : escape(baseUrl.replace(/\/+$/, ""));
  return new RegExp(`^${prefix}/${PATHS}`);
}

/** The path prefix of `baseUrl` (`/v1` of `http://host/v1`), empty for `*` or none. */
export function basePath(baseUrl = "*"): string {
  return baseUrl === "*" ? "" : new URL(baseUrl).pathname.replace(/\/+$/, "");
}
