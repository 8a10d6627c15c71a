/** /health, /server_info and the two documents; the API reference pages are the host's (api/docs.ts). */
import { OPENHANDS_RELEASE, type ServerInfo } from "@acs-toolkit/schema";
import type { ApiDeps } from "./deps.js";
import { jsonReply, textReply } from "./reply.js";
import type { Operation } from "./types.js";
import { referencePage } from "./docs.js";

/** When the API started and last answered a request that is not a probe (/server_info, /health), in ms. */
export interface Activity {
  readonly startedAt: number;
  lastCall: number;
}

const seconds = (ms: number) => Math.max(0, ms) / 1000;

export function metaOperations({ health, openapi, asyncapi, server, clock = Date.now }: ApiDeps, activity: Activity): Record<"getHealth" | "getServerInfo" | "getOpenApiDocument" | "getAsyncApiDocument" | "getApiReference", Operation> {
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
    async getServerInfo() {
      const now = clock();
      return jsonReply({
        uptime: seconds(now - activity.startedAt),
        idle_time: seconds(now - activity.lastCall),
        title: server?.title ?? "Agent Conversation Service reference server",
        // The agent-server release whose API this one speaks and whose events its agent runtime records.
        version: OPENHANDS_RELEASE,
        ...(server?.version !== undefined && { server_version: server.version }),
        usable_tools: [...(server?.tools ?? [])],
        docs: "/docs",
      } satisfies ServerInfo);
    },
    getOpenApiDocument: async () => textReply(openapiText, "application/json"),
    getAsyncApiDocument: async () => textReply(asyncapiText, "application/json"),
    getApiReference: async () => textReply(referencePage, "text/html"),
  };
}
