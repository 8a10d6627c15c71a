/**
 * The client: one typed method per operation of the spec, on openapi-fetch and the generated
 * `paths`. Platform-neutral; the entries (`index.ts` for browsers and bundlers, `node.ts` for Node)
 * add what only their platform has through `Platform`.
 */
import type { paths } from "@acs-toolkit/schema";
import type { ValidateOptions } from "./validator-types.js";
import * as openapiFetch from "openapi-fetch";
import type { Client, Middleware } from "openapi-fetch";
import { AbortError, ApiError, InvalidEventError, InvalidResponseError, NetworkError } from "./errors.js";
import { listInputs, toFile, type ReadPath, type UploadFiles, type UploadInput } from "./files.js";
import { createLive, type LiveSocket, type OpenSocket, type SubscribeOptions, type Subscription, type UserMessage } from "./live.js";
import type {
  CallOptions,
  CountEventsQuery,
  EventFilters,
  OperationBody,
  OperationId,
  OperationResult,
  SearchEventsQuery,
  SearchedEvent,
} from "./types.js";

/** The header that carries the session API key. */
export const API_KEY_HEADER = "X-Session-API-Key";

export interface ClientOptions {
  /** Where the service is, for example `http://127.0.0.1:3000` (a trailing slash is ignored). */
  baseUrl: string;
  /**
   * The session API key, sent as `X-Session-API-Key` on every request; or a function that returns
   * it per request (for rotation). Leave it out only for a server that reads without a key
   * (`--public-read` serves search and count without one).
   */
  apiKey?: string | (() => string | undefined | Promise<string | undefined>);
  /** A `fetch` to use instead of `globalThis.fetch` (it is given a `Request`). */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Check every received event with `@acs-toolkit/validator` (loaded on first use, so it costs
   * nothing unless enabled); the first invalid one rejects the call with an `InvalidEventError`.
   * Pass validator options to relax it, for example `{ unknownKinds: "warn" }`.
   */
  validate?: boolean | ValidateOptions;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /**
   * The WebSocket constructor for live events, where there is no global one. In Node the client
   * uses the `ws` package (and sends the key as a header); browsers use theirs (and send the key in
   * a first auth frame).
   */
  WebSocket?: new (url: string) => LiveSocket;
}

/**
 * A client of the Agent Conversation Service. Every method takes `CallOptions` last (an
 * `AbortSignal`, extra headers) and rejects with a `ClientError`: `ApiError` for a non-2xx answer,
 * `NetworkError`, `AbortError`, or `InvalidResponseError`.
 *
 * `Upload` is what `uploadFiles` accepts: `File`, `Blob` and named bytes everywhere, and in Node
 * file paths too.
 */
export interface AcsClient<Upload = UploadInput> {
  /** One page of a conversation's events (`GET …/events/search`); follow `next_page_id`, or use `iterateEvents`. */
  searchEvents(conversationId: string, query?: SearchEventsQuery, options?: CallOptions): Promise<OperationResult<"searchEvents">>;
  /**
   * Every event that matches `filters`, across pages, fetched lazily one page at a time (`limit`
   * is the page size). Stop with `break` or by aborting `options.signal`.
   */
  iterateEvents(conversationId: string, filters?: EventFilters, options?: CallOptions): AsyncGenerator<SearchedEvent, void, undefined>;
  /** How many events a search with the same filters would list (extension). */
  countEvents(conversationId: string, filters?: CountEventsQuery, options?: CallOptions): Promise<OperationResult<"countEvents">>;
  /** Create (start) a conversation; `replay_json` loads a recorded trajectory. */
  createConversation(request?: OperationBody<"createConversation">, options?: CallOptions): Promise<OperationResult<"createConversation">>;
  /** Several conversations by id, 1 to 100, in order; `null` for an id no conversation has (extension). */
  batchGetConversations(ids: readonly string[], options?: CallOptions): Promise<OperationResult<"batchGetConversations">>;
  /** A conversation's status, times and event count (extension). */
  getConversation(conversationId: string, options?: CallOptions): Promise<OperationResult<"getConversation">>;
  /** Store the user's settings. */
  storeSettings(settings: OperationBody<"storeSettings">, options?: CallOptions): Promise<OperationResult<"storeSettings">>;
  /** The stored settings, secrets blanked (extension); an `ApiError` 404 when none are stored. */
  getSettings(options?: CallOptions): Promise<OperationResult<"getSettings">>;
  /** Store git-provider tokens. */
  addGitProviders(request: OperationBody<"addGitProviders">, options?: CallOptions): Promise<OperationResult<"addGitProviders">>;
  /** Upload files into a conversation: each becomes one part of the multipart field `files`. */
  uploadFiles(conversationId: string, files: UploadFiles<Upload>, options?: CallOptions): Promise<OperationResult<"uploadFiles">>;
  /** An uploaded file's bytes (extension); `fileName` is the last segment of a `file_urls` entry. */
  downloadFile(conversationId: string, fileName: string, options?: CallOptions): Promise<Blob>;
  /**
   * Live events of a conversation over the WebSocket channel: stored events first (see
   * `options.from`), then live ones, each once and in order; reconnects with jittered exponential
   * backoff and resumes after the last delivered event.
   *
   * @example
   * const sub = client.subscribe(id, { onEvent: render, onStatus: (s) => setBadge(s), signal });
   * await sub.sendMessage("Also update the changelog.");
   */
  subscribe(conversationId: string, options: SubscribeOptions): Subscription;
  /**
   * The same as `subscribe`, as an async iterator.
   *
   * @example
   * for await (const event of client.events(id)) render(event);
   */
  events(conversationId: string, options?: Omit<SubscribeOptions, "onEvent">): AsyncGenerator<SearchedEvent, void, undefined>;
  /**
   * Sends a user message: over the socket of an open subscription of this conversation, otherwise
   * with `POST /api/conversations/{id}/events` (extension). Its MessageEvent reaches subscribers.
   */
  sendMessage(conversationId: string, message: UserMessage | string, options?: CallOptions): Promise<void>;
  /**
   * Appends recorded events of any kind to a conversation (`POST …/events/batch`, extension), in
   * order, each kept as recorded (its id, timestamp, every field). `events` is read lazily and sent
   * as JSONL, `batchSize` events a request (default and most: 10,000, the reference server's
   * limit), each request's body streamed as it is produced where `fetch` can stream a request body
   * (Node; otherwise one batch is gathered at a time). Each request is one batch: stored whole or
   * not at all. A string is taken as an event's JSON text, sent as is.
   *
   * Resolves with the events appended and the conversation's count after. A failed batch rejects
   * (an `ApiError`: 422 with `loc` `["body", <line of that batch>, ...]`, 413, 404); the batches
   * before it stay stored: `onBatch` reports each one as it is.
   *
   * @example
   * const { appended } = await client.appendEventBatch(id, readRecording(), { onBatch: (b) => progress(b.event_count) });
   */
  appendEventBatch(conversationId: string, events: Iterable<AppendableEvent> | AsyncIterable<AppendableEvent>, options?: AppendEventBatchOptions): Promise<AppendEventBatchResult>;
  /**
   * Starts the agent on a conversation (extension, the agent server's `run`): answers at once; an
   * `ApiError` 409 while a run is active, 400 when no agent runs the conversation.
   */
  runConversation(conversationId: string, options?: CallOptions): Promise<OperationResult<"runConversation">>;
  /** Pauses the agent between steps (extension, the agent server's `pause`); answers once paused. */
  pauseConversation(conversationId: string, options?: CallOptions): Promise<OperationResult<"pauseConversation">>;
  /** Cancels the agent's LLM call now and pauses (extension, the agent server's `interrupt`). */
  interruptConversation(conversationId: string, options?: CallOptions): Promise<OperationResult<"interruptConversation">>;
  /** Approves (`accept: true`) or rejects the actions waiting for confirmation (extension). */
  respondToConfirmation(conversationId: string, response: OperationBody<"respondToConfirmation">, options?: CallOptions): Promise<OperationResult<"respondToConfirmation">>;
  /** Changes when the agent asks to confirm its actions, `{ policy: { kind: "AlwaysConfirm" } }` (extension). */
  setConfirmationPolicy(conversationId: string, request: OperationBody<"setConfirmationPolicy">, options?: CallOptions): Promise<OperationResult<"setConfirmationPolicy">>;
  /** Sets what rates the agent's actions, `{ security_analyzer: { kind: "LLMSecurityAnalyzer" } }` or `null` for none (extension). */
  setSecurityAnalyzer(conversationId: string, request: OperationBody<"setSecurityAnalyzer">, options?: CallOptions): Promise<OperationResult<"setSecurityAnalyzer">>;
  /** Liveness and store readiness (extension); a 503 is an `ApiError` whose body is the `Health`. */
  getHealth(options?: CallOptions): Promise<OperationResult<"getHealth">>;
  /** The server's name, the agent-server release whose API it speaks, its uptime and tools (extension). */
  getServerInfo(options?: CallOptions): Promise<OperationResult<"getServerInfo">>;
  /** The bundled OpenAPI document the server serves (extension). */
  getOpenApiDocument(options?: CallOptions): Promise<OperationResult<"getOpenApiDocument">>;
  /** The bundled AsyncAPI document of the live channel the server serves (extension). */
  getAsyncApiDocument(options?: CallOptions): Promise<OperationResult<"getAsyncApiDocument">>;
  /** The HTML of the server's API reference page (extension). */
  getApiReference(options?: CallOptions): Promise<OperationResult<"getApiReference">>;
  /**
   * The underlying openapi-fetch client, typed by `paths`, with the key and headers installed: for
   * anything the methods do not cover. Its calls return `{ data, error, response }` and do not throw
   * on HTTP errors.
   */
  readonly raw: Client<paths>;
}

/** An event for `appendEventBatch`: the event, or its JSON text (one line). */
export type AppendableEvent = OperationBody<"appendEventBatch"> | string;

export interface AppendEventBatchOptions extends CallOptions {
  /** Events per request, 1–10,000 (the reference server's limit). Default 10,000. */
  batchSize?: number;
  /** Called after each batch is stored, with the server's answer to it. */
  onBatch?: (batch: OperationResult<"appendEventBatch">) => void;
}

/** What `appendEventBatch` appended: `appended` over every batch, `event_count` after the last. */
export interface AppendEventBatchResult {
  appended: number;
  event_count: number;
  /** Requests sent. */
  batches: number;
}

/** The reference server's largest batch. */
const MAX_BATCH = 10_000;
/** Lines per chunk of a streamed batch body. */
const LINES_PER_CHUNK = 256;

/** Whether `fetch` can send a ReadableStream body here (Node, Chromium over HTTP/2): the standard test. */
function canStreamRequests(): boolean {
  try {
    let duplex = false;
    const init = { method: "POST", body: new ReadableStream(), get duplex() { duplex = true; return "half"; } };
    const typed = new Request("http://x/", init as RequestInit).headers.has("Content-Type");
    return duplex && !typed;
  } catch {
    return false;
  }
}

/** An event as one JSONL line (with its newline). */
function jsonLine(event: AppendableEvent): string {
  const text = typeof event === "string" ? event : JSON.stringify(event);
  if (text.includes("\n")) throw new TypeError("appendEventBatch: an event's JSON text must be one line");
  return text + "\n";
}

/** What a platform entry adds to the neutral core. */
interface Platform {
  /** Reads a file by path for `uploadFiles` (Node). */
  readPath?: ReadPath;
  /** Opens a live-channel socket (Node: `ws`, with the key as a header). Default: the global WebSocket. */
  openSocket?: OpenSocket;
}

/**
 * openapi-fetch's `createClient`. Its CommonJS build exports it as `exports.default`, which Node's
 * interop (emulated in our CJS build) puts at `default.default`; its ESM build at `default`.
 */
const createFetchClient: typeof openapiFetch.default =
  (openapiFetch.default as unknown as { default?: typeof openapiFetch.default }).default ?? openapiFetch.default;

type ValidatorModule = typeof import("@acs-toolkit/validator");
let validatorModule: Promise<ValidatorModule> | undefined;
/**
 * The validator, an optional peer dependency, is loaded on first use only, so a client without
 * `validate` never pulls it in (nor needs it installed). The `.catch` also lets bundlers (esbuild,
 * Vite) build an application that does not install it.
 */
const loadValidator = (): Promise<ValidatorModule> =>
  (validatorModule ??= import("@acs-toolkit/validator").catch((cause: unknown) => {
    validatorModule = undefined; // an install later in the same process is picked up
    throw new Error(
      `validate: cannot load @acs-toolkit/validator, the optional peer dependency that checks events: install it beside @acs-toolkit/client (npm install @acs-toolkit/validator), or leave validate off (${cause instanceof Error ? cause.message : String(cause)})`,
      { cause },
    );
  }));

/** An error thrown by the `apiKey` function, carried through openapi-fetch unchanged. */
class KeyProviderFailure {
  constructor(readonly error: unknown) {}
}

type FetchResult = { data?: unknown; error?: unknown; response: Response };

/** The neutral core behind both entries' `createClient`. */
export function createClientFor<Upload>(options: ClientOptions, platform: Platform): AcsClient<Upload> {
  if (typeof options?.baseUrl !== "string" || options.baseUrl === "") {
    throw new TypeError("createClient: baseUrl is required, for example http://127.0.0.1:3000");
  }
  const { apiKey, validate } = options;
  const raw = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers: options.headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (apiKey !== undefined) {
    const keyMiddleware: Middleware = {
      async onRequest({ request }) {
        let key: string | undefined;
        try {
          key = typeof apiKey === "function" ? await apiKey() : apiKey;
        } catch (error) {
          throw new KeyProviderFailure(error);
        }
        if (key !== undefined && !request.headers.has(API_KEY_HEADER)) request.headers.set(API_KEY_HEADER, key);
        return request;
      },
    };
    raw.use(keyMiddleware);
  }
  const validateOptions: ValidateOptions | undefined = validate === true ? {} : validate || undefined;

  /**
   * Runs one call; turns a thrown fetch into NetworkError / AbortError and a non-2xx answer into
   * ApiError. The result is typed from `operations` rather than from openapi-fetch's `data`, whose
   * `Readable<>` mapping widens tuples (`lines_shown: [number, number]` becomes `number[]`).
   */
  async function call<Id extends OperationId, T = OperationResult<Id>>(
    operation: Id,
    signal: AbortSignal | undefined,
    run: () => Promise<FetchResult>,
  ): Promise<T> {
    if (signal?.aborted) throw new AbortError(operation, signal.reason);
    let result: FetchResult;
    try {
      result = await run();
    } catch (cause) {
      if (cause instanceof KeyProviderFailure) throw cause.error;
      if (signal?.aborted) throw new AbortError(operation, signal.reason);
      if (cause instanceof Error && cause.name === "AbortError") throw new AbortError(operation, cause);
      if (cause instanceof SyntaxError) throw new InvalidResponseError(operation, `the answer is not JSON: ${cause.message}`, { cause });
      throw new NetworkError(operation, cause, options.baseUrl);
    }
    const { response } = result;
    if (!response.ok) throw new ApiError(operation, response, result.error);
    if (result.data === undefined) throw new InvalidResponseError(operation, `the ${response.status} answer has no body`);
    return result.data as T;
  }

  const init = (options: CallOptions | undefined) => ({
    ...(options?.signal ? { signal: options.signal } : {}),
    ...(options?.headers ? { headers: options.headers } : {}),
  });

  async function checkEvents(operation: OperationId, items: unknown): Promise<void> {
    if (!Array.isArray(items)) throw new InvalidResponseError(operation, "the page has no items array");
    if (!validateOptions) return;
    const { validateEvent } = await loadValidator();
    items.forEach((event, index) => {
      const result = validateEvent(event, validateOptions);
      if (!result.ok) throw new InvalidEventError(operation, index, event, result.errors);
    });
  }

  const conversation = (conversationId: string) => ({ conversation_id: conversationId });

  const openSocket: OpenSocket =
    platform.openSocket ??
    ((url) => {
      const Socket = options.WebSocket ?? (globalThis as { WebSocket?: new (url: string) => LiveSocket }).WebSocket;
      if (!Socket) throw new TypeError("subscribe: there is no WebSocket here; pass options.WebSocket");
      return { socket: new Socket(url), sentKey: false };
    });
  const live = createLive({
    baseUrl: options.baseUrl,
    apiKey: async () => (typeof apiKey === "function" ? await apiKey() : apiKey),
    openSocket,
    postMessage: async (conversationId, message) => {
      await call("sendMessage", undefined, () =>
        raw.POST("/api/conversations/{conversation_id}/events", { params: { path: conversation(conversationId) }, body: message }),
      );
    },
  });

  const client: AcsClient<Upload> = {
    raw,

    async searchEvents(conversationId, query, options) {
      const page = await call("searchEvents", options?.signal, () =>
        raw.GET("/api/conversations/{conversation_id}/events/search", {
          params: { path: conversation(conversationId), ...(query ? { query } : {}) },
          ...init(options),
        }),
      );
      await checkEvents("searchEvents", page.items);
      return page;
    },

    async *iterateEvents(conversationId, filters = {}, options) {
      const signal = options?.signal;
      let pageId: string | undefined;
      for (;;) {
        const query: SearchEventsQuery = pageId === undefined ? { ...filters } : { ...filters, page_id: pageId };
        const page = await client.searchEvents(conversationId, query, options);
        for (const event of page.items) {
          if (signal?.aborted) throw new AbortError("searchEvents", signal.reason);
          yield event;
        }
        const next = page.next_page_id;
        if (next === null || next === undefined || next === "") return;
        if (next === pageId) throw new InvalidResponseError("searchEvents", "the server answered the same next_page_id again");
        pageId = next;
      }
    },

    countEvents(conversationId, filters, options) {
      return call("countEvents", options?.signal, () =>
        raw.GET("/api/conversations/{conversation_id}/events/count", {
          params: { path: conversation(conversationId), ...(filters ? { query: filters } : {}) },
          ...init(options),
        }),
      );
    },

    createConversation(request = {}, options) {
      return call("createConversation", options?.signal, () => raw.POST("/api/conversations", { body: request, ...init(options) }));
    },

    batchGetConversations(ids, options) {
      return call("batchGetConversations", options?.signal, () => raw.GET("/api/conversations", { params: { query: { ids: [...ids] } }, ...init(options) }));
    },

    getConversation(conversationId, options) {
      return call("getConversation", options?.signal, () =>
        raw.GET("/api/conversations/{conversation_id}", { params: { path: conversation(conversationId) }, ...init(options) }),
      );
    },

    storeSettings(settings, options) {
      return call("storeSettings", options?.signal, () => raw.POST("/api/settings", { body: settings, ...init(options) }));
    },

    getSettings(options) {
      return call("getSettings", options?.signal, () => raw.GET("/api/settings", init(options)));
    },

    addGitProviders(request, options) {
      return call("addGitProviders", options?.signal, () => raw.POST("/api/add-git-providers", { body: request, ...init(options) }));
    },

    async uploadFiles(conversationId, files, options) {
      const signal = options?.signal;
      if (signal?.aborted) throw new AbortError("uploadFiles", signal.reason);
      const parts = await Promise.all(listInputs(files).map((input) => toFile(input, platform.readPath)));
      // The spec's multipart body types each part of `files` as a string (OpenAPI's binary is a
      // string schema); at run time each part is a File. This is the one place that says so.
      const body: OperationBody<"uploadFiles"> = { files: parts as unknown as string[] };
      return call("uploadFiles", signal, () =>
        raw.POST("/api/conversations/{conversation_id}/upload-files", {
          params: { path: conversation(conversationId) },
          body,
          bodySerializer: multipart,
          ...init(options),
        }),
      );
    },

    downloadFile(conversationId, fileName, options) {
      return call<"downloadFile", Blob>("downloadFile", options?.signal, () =>
        raw.GET("/api/conversations/{conversation_id}/files/{file_name}", {
          params: { path: { conversation_id: conversationId, file_name: fileName } },
          parseAs: "blob",
          ...init(options),
        }),
      );
    },

    subscribe: live.subscribe,
    events: live.events,

    async sendMessage(conversationId, message, options) {
      if (options?.signal || options?.headers) {
        const body = typeof message === "string" ? ({ role: "user", content: [{ type: "text", text: message }] } as UserMessage) : message;
        await call("sendMessage", options.signal, () =>
          raw.POST("/api/conversations/{conversation_id}/events", { params: { path: conversation(conversationId) }, body, ...init(options) }),
        );
        return;
      }
      await live.sendMessage(conversationId, message);
    },

    async appendEventBatch(conversationId, events, options = {}) {
      const size = options.batchSize ?? MAX_BATCH;
      if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH) throw new RangeError(`appendEventBatch: batchSize must be an integer in 1..${MAX_BATCH}, got ${size}`);
      const source: Iterator<AppendableEvent> | AsyncIterator<AppendableEvent> = Symbol.asyncIterator in events ? events[Symbol.asyncIterator]() : events[Symbol.iterator]();
      const encoder = new TextEncoder();
      const stream = canStreamRequests();
      const total: AppendEventBatchResult = { appended: 0, event_count: 0, batches: 0 };
      // The event read and not yet sent (undefined: none read). Read ahead of each batch, so that
      // no request is sent empty.
      let next: IteratorResult<AppendableEvent> | undefined = await source.next();
      try {
        while (!next.done) {
          let taken = 0;
          /** Up to LINES_PER_CHUNK more lines of this batch, or undefined at its end. */
          const chunk = async (): Promise<Uint8Array | undefined> => {
            let text = "";
            for (let lines = 0; lines < LINES_PER_CHUNK && taken < size; lines++, taken++) {
              next ??= await source.next();
              if (next.done) break;
              text += jsonLine(next.value);
              next = undefined;
            }
            return text === "" ? undefined : encoder.encode(text);
          };
          let body: BodyInit;
          if (stream) {
            body = new ReadableStream<Uint8Array>({
              async pull(controller) {
                try {
                  const bytes = await chunk();
                  if (bytes) controller.enqueue(bytes);
                  else controller.close();
                } catch (error) {
                  controller.error(error);
                }
              },
            });
          } else {
            const parts: Uint8Array[] = [];
            for (let bytes = await chunk(); bytes; bytes = await chunk()) parts.push(bytes);
            body = new Blob(parts as BlobPart[]);
          }
          const answer = await call("appendEventBatch", options.signal, () =>
            raw.POST("/api/conversations/{conversation_id}/events/batch", {
              params: { path: conversation(conversationId) },
              body: {} as never, // replaced by the JSONL body
              bodySerializer: () => body,
              ...init(options),
              headers: { ...options.headers, "Content-Type": "application/x-ndjson" },
              ...(stream ? { duplex: "half" } : {}),
            } as never),
          );
          total.appended += answer.appended;
          total.event_count = answer.event_count;
          total.batches++;
          options.onBatch?.(answer);
          next ??= await source.next();
        }
      } catch (error) {
        await source.return?.();
        throw error;
      }
      return total;
    },

    runConversation(conversationId, options) {
      return call("runConversation", options?.signal, () =>
        raw.POST("/api/conversations/{conversation_id}/run", { params: { path: conversation(conversationId) }, ...init(options) }),
      );
    },

    pauseConversation(conversationId, options) {
      return call("pauseConversation", options?.signal, () =>
        raw.POST("/api/conversations/{conversation_id}/pause", { params: { path: conversation(conversationId) }, ...init(options) }),
      );
    },

    interruptConversation(conversationId, options) {
      return call("interruptConversation", options?.signal, () =>
        raw.POST("/api/conversations/{conversation_id}/interrupt", { params: { path: conversation(conversationId) }, ...init(options) }),
      );
    },

    respondToConfirmation(conversationId, response, options) {
      return call("respondToConfirmation", options?.signal, () =>
        raw.POST("/api/conversations/{conversation_id}/events/respond_to_confirmation", { params: { path: conversation(conversationId) }, body: response, ...init(options) }),
      );
    },

    setConfirmationPolicy(conversationId, request, options) {
      return call("setConfirmationPolicy", options?.signal, () =>
        raw.POST("/api/conversations/{conversation_id}/confirmation_policy", { params: { path: conversation(conversationId) }, body: request, ...init(options) }),
      );
    },

    setSecurityAnalyzer(conversationId, request, options) {
      return call("setSecurityAnalyzer", options?.signal, () =>
        raw.POST("/api/conversations/{conversation_id}/security_analyzer", { params: { path: conversation(conversationId) }, body: request, ...init(options) }),
      );
    },

    getHealth(options) {
      return call("getHealth", options?.signal, () => raw.GET("/health", init(options)));
    },

    getServerInfo(options) {
      return call("getServerInfo", options?.signal, () => raw.GET("/server_info", init(options)));
    },

    getOpenApiDocument(options) {
      return call("getOpenApiDocument", options?.signal, () => raw.GET("/openapi.json", init(options)));
    },

    getAsyncApiDocument(options) {
      return call("getAsyncApiDocument", options?.signal, () => raw.GET("/asyncapi.json", init(options)));
    },

    getApiReference(options) {
      return call("getApiReference", options?.signal, () => raw.GET("/docs", { parseAs: "text", ...init(options) }));
    },
  };
  return client;
}

/** A multipart/form-data body: every array element is one part of its field (fetch sets the boundary). */
function multipart(body: Record<string, unknown>): FormData {
  const form = new FormData();
  for (const [field, value] of Object.entries(body)) {
    for (const part of Array.isArray(value) ? value : [value]) form.append(field, part instanceof Blob ? part : String(part));
  }
  return form;
}

