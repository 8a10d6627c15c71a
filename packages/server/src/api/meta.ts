/** /health and the two documents; the API reference pages are the host's (api/docs.ts). */
import type { ApiDeps } from "./deps.js";
import { jsonReply, textReply } from "./reply.js";
import type { Operation } from "./types.js";
import { referencePage } from "./docs.js";

export function metaOperations({ health, openapi, asyncapi }: ApiDeps): Record<"getHealth" | "getOpenApiDocument" | "getAsyncApiDocument" | "getApiReference", Operation> {
  // Served without `jsonSchemaDialect`: Swagger UI supports only the default (the OpenAPI base
  // dialect, JSON Schema 2020-12 plus OpenAPI's vocabulary) and shows a warning for any other; the
  // schemas mean the same under it. Prism, which reads the bundled document, needs the explicit one.
  const { jsonSchemaDialect: _dialect, ...served } = openapi;
  const openapiText = JSON.stringify({ ...served, servers: [{ url: "/", description: "This server" }] });
  const asyncapiText = JSON.stringify(asyncapi);
  return {
    async getHealth() {
      const body = await health();
      return jsonReply(body, body.status === "ok" ? 200 : 503);
    },
    getOpenApiDocument: async () => textReply(openapiText, "application/json"),
    getAsyncApiDocument: async () => textReply(asyncapiText, "application/json"),
    getApiReference: async () => textReply(referencePage, "text/html"),
  };
}
