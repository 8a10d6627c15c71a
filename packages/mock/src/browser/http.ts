/**
 * The HTTP side of the browser mock: MSW handlers that answer every request through the reference
 * server's API (`@acs-toolkit/server/api`), the code the server answers with: the same operations,
 * validators (the server's, compiled at its build), 422 `loc`s, paging and cursors (unsigned: a mock
 * has no secret to keep), settings merge and view (secrets kept plain; the view never returns
 * them). What the browser cannot hold answers 501: event batches and files.
 */
import { http, HttpResponse, type HttpHandler } from "msw";
import type { Health } from "@acs-toolkit/schema";
import { asyncapiDocument, openapiDocument } from "@acs-toolkit/schema/documents";
import { createApi, markQueryOverflow, mediaTypeIs, MAX_QUERY_PARAMETERS, RequestChecks, JSON_MEDIA_TYPES, type ApiBody, type ApiReply } from "@acs-toolkit/server/api";
import { validators as precompiled } from "@acs-toolkit/server/request-validators";
import { cursorCodec, HttpError, PLAIN_SECRETS, RequestValidationError, UNSIGNED_CURSORS, type ConversationRuntime, type StoredSettings } from "@acs-toolkit/server/core";
import packageJson from "../../package.json" with { type: "json" };
import { describeWorld } from "../describe-world.js";
import { basePath, mockUrlPattern } from "../url-pattern.js";
import type { BrowserWorld } from "./world.js";

/** The largest JSON body read (the server's default). */
const JSON_LIMIT_BYTES = 64 * 1024 * 1024;

/** A query's parameters as the server reads them: one given more than once is an array; past the bound, marked. */
function queryOf(search: string): Record<string, unknown> {
  const query: Record<string, string | string[]> = {};
  const params = new URLSearchParams(search);
  let index = 0;
  for (const [name, value] of params) {
    if (index++ === MAX_QUERY_PARAMETERS) markQueryOverflow(query, name);
    const had = query[name];
    query[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return query;
}

const invalidBody = (msg: string) => new RequestValidationError([{ loc: ["body"], msg, type: "value_error" }]);

/** A fetch Request's body as the operations read it (the server's rules: UTF-8 only, gzip and deflate, bounded). */
function fetchBody(request: Request): ApiBody {
  const contentType = request.headers.get("content-type") ?? undefined;
  const encoding = (request.headers.get("content-encoding") ?? "identity").toLowerCase();
  const length = Number(request.headers.get("content-length") ?? NaN);
  const is = (types: readonly string[]) => mediaTypeIs(contentType, types);
  const bytes = async (): Promise<Uint8Array> => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) throw invalidBody(`charset ${charset} is not supported: JSON is sent as UTF-8`);
    let stream = request.body;
    if (encoding !== "identity") {
      if (encoding !== "gzip" && encoding !== "deflate") throw invalidBody(`Content-Encoding ${encoding} is not supported: send identity, gzip or deflate`);
      stream = stream?.pipeThrough(new DecompressionStream(encoding)) ?? null;
    }
    let data: Uint8Array;
    try {
      data = new Uint8Array(await new Response(stream).arrayBuffer());
    } catch {
      throw invalidBody(`The body is not valid ${encoding} data (Content-Encoding: ${encoding})`);
    }
    if (data.byteLength > JSON_LIMIT_BYTES) throw new HttpError(413, `The request body is larger than the server accepts (more than ${JSON_LIMIT_BYTES} bytes)`);
    return data;
  };
  return {
    length: Number.isNaN(length) ? undefined : length,
    compressed: encoding !== "identity",
    is,
    jsonBytes: async () => (is(JSON_MEDIA_TYPES) ? bytes() : undefined),
    async *chunks(types) {
      if (is(types)) yield await bytes();
    },
    discard: () => {},
  };
}

/** An API reply as a fetch Response. */
function toResponse(reply: ApiReply, method: string): Response {
  const headers = new Headers(reply.headers);
  if (method === "HEAD" || reply.status === 204) return new HttpResponse(null, { status: reply.status, headers });
  const stream = reply.stream;
  const body = stream
    ? new ReadableStream<Uint8Array>({
        async start(controller) {
          for await (const chunk of stream.chunks()) controller.enqueue(chunk);
          controller.close();
        },
        cancel: () => stream.cancel(),
      })
    : new Blob(reply.body as unknown as BlobPart[]);
  return new HttpResponse(body, { status: reply.status, headers });
}

/**
 * The HTTP handlers of the browser mock, under `base` (an origin with an optional path prefix, or
 * `*` for any origin).
 */
export function browserHttpHandlers(world: BrowserWorld, base: string): HttpHandler[] {
  const { store } = world;
  const api = createApi({
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
    health: async (): Promise<Health> => {
      const ok = await store.ping().catch(() => false);
      return { status: ok ? "ok" : "unavailable", store: store.kind, version: `${packageJson.version}-mock`, writes: "ok", file_io: "ok", ...(!ok && { detail: "the store does not answer" }) };
    },
    openapi: openapiDocument,
    asyncapi: asyncapiDocument,
    keyAccepted: (key) => key !== undefined && world.keys.includes(key),
    publicRead: world.publicRead,
  });
  const prefix = basePath(base);
  const at = (path: string) => `${base === "*" ? "*" : base.replace(/\/+$/, "")}${path}`;

  return [
    // The scenarios and how the mock runs, as the Node mock's GET /__mock.
    http.get(at("/__mock"), () => HttpResponse.json(describeWorld(world))),
    http.all(mockUrlPattern(base), async ({ request }) => {
      const url = new URL(request.url);
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        headers[name] = value;
      });
      const reply = await api.handle(request.method, url.pathname.slice(prefix.length), { query: queryOf(url.search), headers, body: fetchBody(request) });
      return toResponse(reply, request.method);
    }),
  ];
}
