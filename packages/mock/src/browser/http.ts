/**
 * The HTTP side of the browser mock: MSW handlers that answer every request through the reference
 * server's API (`@acs-toolkit/server/api`), the code the server answers with: the same operations,
 * validators (the server's, compiled at its build), 422 `loc`s, paging and cursors (unsigned: a mock
 * has no secret to keep), settings merge and view (secrets kept plain; the view never returns
 * them), event batches (parsed in the page) and files (kept in memory, the server's upload rules).
 */
import { http, HttpResponse, type HttpHandler } from "msw";
import type { Health } from "@acs-toolkit/schema";
import { asyncapiDocument, openapiDocument } from "@acs-toolkit/schema/documents";
import { createApi, memoryFiles, RequestChecks, type Api } from "@acs-toolkit/server/api";
import { validators as precompiled } from "@acs-toolkit/server/request-validators";
import { cursorCodec, PLAIN_SECRETS, UNSIGNED_CURSORS, type ConversationRuntime, type StoredSettings } from "@acs-toolkit/server/core";
import packageJson from "../../package.json" with { type: "json" };
import { describeWorld } from "../describe-world.js";
import { MOCK_TITLE } from "../defaults.js";
import { answerFetch } from "../fetch-host.js";
import { basePath, mockUrlPattern } from "../url-pattern.js";
import type { BrowserWorld } from "./world.js";

/**
 * The HTTP handlers of the browser mock, under `base` (an origin with an optional path prefix, or
 * `*` for any origin).
 */
export function browserHttpHandlers(world: BrowserWorld, base: string, api: Api = browserApi(world)): HttpHandler[] {
  const prefix = basePath(base);
  const at = (path: string) => `${base === "*" ? "*" : base.replace(/\/+$/, "")}${path}`;

  return [
    // The scenarios and how the mock runs, as the Node mock's GET /__mock.
    http.get(at("/__mock"), () => HttpResponse.json(describeWorld(world))),
    http.all(mockUrlPattern(base), ({ request }) => answerFetch(api, request, prefix)),
  ];
}

/** The reference server's API over the browser world (no runner: the mock runs no commands). */
export function browserApi(world: BrowserWorld): Api {
  const { store } = world;
  return createApi({
    store,
    conversations: world.conversations,
    controls: (world.agent as ConversationRuntime).controls,
    validators: new RequestChecks(openapiDocument, (schema) => {
      const validate = precompiled[schema.$id as string];
      if (!validate) throw new Error(`no precompiled request validator ${String(schema.$id)}: rebuild @acs-toolkit/server`);
      return validate;
    }),
    cursors: cursorCodec(UNSIGNED_CURSORS),
    settings: { sealer: PLAIN_SECRETS, read: (text) => ({ settings: JSON.parse(text) as StoredSettings, upgraded: false }) },
    files: memoryFiles(),
    health: async (): Promise<Health> => {
      const ok = await store.ping().catch(() => false);
      return { status: ok ? "ok" : "unavailable", store: store.kind, version: `${packageJson.version}-mock`, writes: "ok", file_io: "ok", ...(!ok && { detail: "the store does not answer" }) };
    },
    openapi: openapiDocument,
    asyncapi: asyncapiDocument,
    keyAccepted: (key) => key !== undefined && world.keys.includes(key),
    publicRead: world.publicRead,
    server: { version: `${packageJson.version}-mock`, title: MOCK_TITLE },
  });
}
