/**
 * How the client makes one request: the openapi-fetch client with the key installed, and `call`,
 * which runs a request and turns its outcome into the operation's result or a `ClientError`.
 */
import type { paths } from "@acs-toolkit/schema";
import * as openapiFetch from "openapi-fetch";
import type { Client } from "openapi-fetch";
import type { ClientOptions } from "./client.js";
import { AbortError, ApiError, InvalidResponseError, NetworkError } from "./errors.js";
import type { CallOptions, OperationId, OperationResult } from "./types.js";

/** The header that carries the session API key. */
export const API_KEY_HEADER = "X-Session-API-Key";

/**
 * openapi-fetch's `createClient`. Its CommonJS build exports it as `exports.default`, which Node's
 * interop (emulated in our CJS build) puts at `default.default`; its ESM build at `default`.
 */
const createFetchClient: typeof openapiFetch.default =
  (openapiFetch.default as unknown as { default?: typeof openapiFetch.default }).default ?? openapiFetch.default;

/** An error thrown by the `apiKey` function, carried through openapi-fetch unchanged. */
class KeyProviderFailure {
  constructor(readonly error: unknown) {}
}

type FetchResult = { data?: unknown; error?: unknown; response: Response };

/** The current key, whichever form `apiKey` has. */
export const readKey = (apiKey: ClientOptions["apiKey"]) => async (): Promise<string | undefined> =>
  typeof apiKey === "function" ? await apiKey() : apiKey;

/** The openapi-fetch client; with a key, a middleware sets it on every request that has none. */
export function createRaw(options: ClientOptions): Client<paths> {
  if (typeof options?.baseUrl !== "string" || options.baseUrl === "") {
    throw new TypeError("createClient: baseUrl is required, for example http://127.0.0.1:3000");
  }
  const { apiKey } = options;
  const raw = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers: options.headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (apiKey !== undefined) {
    const key = readKey(apiKey);
    raw.use({
      async onRequest({ request }) {
        let value: string | undefined;
        try {
          value = await key();
        } catch (error) {
          throw new KeyProviderFailure(error);
        }
        if (value !== undefined && !request.headers.has(API_KEY_HEADER)) request.headers.set(API_KEY_HEADER, value);
        return request;
      },
    });
  }
  return raw;
}

/** See `createCall`. */
export type Call = ReturnType<typeof createCall>;

/**
 * A client's `call(operation, options, run)`: runs one request (`run`), which `options.signal`
 * aborts; turns a thrown fetch into NetworkError / AbortError and a non-2xx answer into ApiError.
 * The result is typed from `operations` rather than from openapi-fetch's `data`, whose `Readable<>`
 * mapping widens tuples (`lines_shown: [number, number]` becomes `number[]`).
 */
export function createCall(baseUrl: string) {
  return async function call<Id extends OperationId, T = OperationResult<Id>>(
    operation: Id,
    options: CallOptions | undefined,
    run: () => Promise<FetchResult>,
  ): Promise<T> {
    const signal = options?.signal;
    if (signal?.aborted) throw new AbortError(operation, signal.reason);
    let result: FetchResult;
    try {
      result = await run();
    } catch (cause) {
      if (cause instanceof KeyProviderFailure) throw cause.error;
      if (signal?.aborted) throw new AbortError(operation, signal.reason);
      if (cause instanceof Error && cause.name === "AbortError") throw new AbortError(operation, cause);
      if (cause instanceof SyntaxError) throw new InvalidResponseError(operation, `the answer is not JSON: ${cause.message}`, { cause });
      throw new NetworkError(operation, cause, baseUrl);
    }
    const { response } = result;
    if (!response.ok) throw new ApiError(operation, response, result.error);
    if (result.data === undefined) throw new InvalidResponseError(operation, `the ${response.status} answer has no body`);
    return result.data as T;
  };
}

/** A call's signal and headers, as request options of openapi-fetch. */
export const requestInit = (options: CallOptions | undefined) => ({
  ...(options?.signal ? { signal: options.signal } : {}),
  ...(options?.headers ? { headers: options.headers } : {}),
});

/** The `params` of an operation on one conversation. */
export const conversationParams = (conversationId: string) => ({ path: { conversation_id: conversationId } });
