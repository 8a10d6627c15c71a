/**
 * The API behind fetch `Request`s and `Response`s (MSW's handlers, in a browser or in Node): a
 * request's query, headers and body read as the server reads them, the reply given back as a
 * Response. Nothing here imports a Node built-in.
 */
import { markQueryOverflow, mediaTypeIs, MAX_QUERY_PARAMETERS, JSON_MEDIA_TYPES, type Api, type ApiBody, type ApiReply } from "@acs-toolkit/server/api";
import { HttpError, RequestValidationError } from "@acs-toolkit/server/core";

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
export function toResponse(reply: ApiReply, method: string): Response {
  const headers = new Headers(reply.headers);
  if (method === "HEAD" || reply.status === 204) return new Response(null, { status: reply.status, headers });
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
  return new Response(body, { status: reply.status, headers });
}

/** Request headers by lower-case name. */
export function headersOf(request: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

/** Answers a fetch request through `api`; `prefix` is the path the API sits under. */
export async function answerFetch(api: Api, request: Request, prefix = ""): Promise<Response> {
  const url = new URL(request.url);
  const reply = await api.handle(request.method, url.pathname.slice(prefix.length), { query: queryOf(url.search), headers: headersOf(request), body: fetchBody(request) });
  return toResponse(reply, request.method);
}
