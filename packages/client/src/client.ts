/**
 * The client: one typed method per operation of the spec, on openapi-fetch and the generated
 * `paths`. Platform-neutral; the entries (`index.ts` for browsers and bundlers, `node.ts` for Node)
 * add what only their platform has through `Platform`.
 */
import type { ConversationCreateRequest, ConversationCreateResponse, ConversationInfo, paths, StartConversationRequest } from "@acs-toolkit/schema";
import type { ValidateOptions } from "./validator-types.js";
import type { Client } from "openapi-fetch";
import { appendEventBatch } from "./append-batch.js";
import { checkEvents } from "./check-events.js";
import { AbortError, InvalidResponseError } from "./errors.js";
import type { ReadPath, UploadFiles, UploadInput } from "./files.js";
import { asMessage, createLive, type LiveSocket, type OpenSocket, type SubscribeOptions, type Subscription, type UserMessage } from "./live.js";
import { agentMethods, conversationMethods, eventReadMethods, fileMethods, serverMethods, settingsMethods, webUiMethods } from "./methods.js";
import { conversationParams, createCall, createRaw, readKey, requestInit } from "./request.js";
import type {
  CallOptions,
  CountEventsQuery,
  EventFilters,
  OperationBody,
  OperationQuery,
  OperationResult,
  SearchEventsQuery,
  SearchedEvent,
} from "./types.js";

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
  createConversation(request?: ConversationCreateRequest, options?: CallOptions): Promise<ConversationCreateResponse>;
  /**
   * Start a conversation with the agent server's request (`workspace` and one of `agent`,
   * `agent_settings`, `agent_profile_id`; extension): its ConversationInfo, of the conversation
   * `conversation_id` names when it exists already.
   */
  createConversation(request: StartConversationRequest, options?: CallOptions): Promise<ConversationInfo>;
  /** Several conversations by id, 1 to 100, in order; `null` for an id no conversation has (extension). */
  batchGetConversations(ids: readonly string[], options?: CallOptions): Promise<OperationResult<"batchGetConversations">>;
  /** A conversation's status, times and event count (extension). */
  getConversation(conversationId: string, options?: CallOptions): Promise<OperationResult<"getConversation">>;
  /**
   * One page of conversations (extension, the agent server's search): `sort_order` (default
   * CREATED_AT_DESC), a `status` filter on `execution_status`, `limit` 1 to 100; pass the page's
   * `next_page_id` as `page_id` for the next one. An `ApiError` 422 names a `page_id` no
   * conversation has (deleted since): start again without it.
   */
  searchConversations(query?: OperationQuery<"searchConversations">, options?: CallOptions): Promise<OperationResult<"searchConversations">>;
  /** How many conversations there are, or how many have the `execution_status` `status` (extension). */
  countConversations(query?: OperationQuery<"countConversations">, options?: CallOptions): Promise<OperationResult<"countConversations">>;
  /** Delete a conversation for good: its events, files and live connections go too (extension); `ApiError` 404 for an unknown one. */
  deleteConversation(conversationId: string, options?: CallOptions): Promise<OperationResult<"deleteConversation">>;
  /** Set a conversation's title and tags (the tags given replace all of them; absent or null: kept) (extension). */
  updateConversation(conversationId: string, request: OperationBody<"updateConversation">, options?: CallOptions): Promise<OperationResult<"updateConversation">>;
  /** Store the user's settings. */
  storeSettings(settings: OperationBody<"storeSettings">, options?: CallOptions): Promise<OperationResult<"storeSettings">>;
  /**
   * The stored settings, secrets blanked (extension): the flat fields and the agent server's
   * `agent_settings`, `conversation_settings` and `misc_settings` of the same document; the
   * defaults when nothing is stored.
   */
  getSettings(options?: CallOptions): Promise<OperationResult<"getSettings">>;
  /** Store git-provider tokens. */
  addGitProviders(request: OperationBody<"addGitProviders">, options?: CallOptions): Promise<OperationResult<"addGitProviders">>;
  /**
   * Merge diffs into the stored settings, as the agent server's `PATCH /api/settings` (extension):
   * `{ agent_settings_diff: { llm: { model, api_key } } }` sets the LLM the agent runs with. Answers
   * the settings after the change; an `ApiError` 400 when the request has nothing to change.
   */
  updateSettings(request: OperationBody<"updateSettings">, options?: CallOptions): Promise<OperationResult<"updateSettings">>;
  /** The form of the agent settings the server supports, as the SDK's `SettingsSchema` (extension). */
  getAgentSettingsSchema(options?: CallOptions): Promise<OperationResult<"getAgentSettingsSchema">>;
  /** The form of the conversation settings, as the SDK's `SettingsSchema` (extension). */
  getConversationSettingsSchema(options?: CallOptions): Promise<OperationResult<"getConversationSettingsSchema">>;
  /** The LLM profiles and the active one: the stored LLM as `default`, or none (extension). */
  listLlmProfiles(options?: CallOptions): Promise<OperationResult<"listLlmProfiles">>;
  /** The agent profiles: none on the reference server (extension). */
  listAgentProfiles(options?: CallOptions): Promise<OperationResult<"listAgentProfiles">>;
  /** The custom secrets' names and descriptions, never their values (extension). */
  listSecrets(options?: CallOptions): Promise<OperationResult<"listSecrets">>;
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
  /** One event of a conversation by id, as stored (extension); an `ApiError` 404 when it has none. */
  getEvent(conversationId: string, eventId: string, options?: CallOptions): Promise<OperationResult<"getEvent">>;
  /** Several events of a conversation by id, 1 to 100, in order; `null` for an id it has no event with (extension). */
  batchGetEvents(conversationId: string, eventIds: readonly string[], options?: CallOptions): Promise<OperationResult<"batchGetEvents">>;
  /** The saved workspace folders of the web UI's picker: none on this server (extension). */
  listWorkspaces(options?: CallOptions): Promise<OperationResult<"listWorkspaces">>;
  /** The folder that holds the conversations' workspaces, `home` (extension). */
  getHomeDirectory(options?: CallOptions): Promise<OperationResult<"getHomeDirectory">>;
  /** The stored LLM provider connections: none on this server (extension). */
  listProviderConnections(options?: CallOptions): Promise<OperationResult<"listProviderConnections">>;
  /** The installed Canvas extensions of the web UI: none on this server (extension). */
  listInstalledCanvasExtensions(options?: CallOptions): Promise<OperationResult<"listInstalledCanvasExtensions">>;
  /** The installed agent plugins: none on this server (extension). */
  listInstalledPlugins(options?: CallOptions): Promise<OperationResult<"listInstalledPlugins">>;
  /** The skills an agent would load from the sources asked for (extension). */
  loadSkills(request?: OperationBody<"loadSkills">, options?: CallOptions): Promise<OperationResult<"loadSkills">>;
  /** Starts a session for the workspace's static files (extension): the agent server sets a cookie; this server answers 204 and sets none. */
  createWorkspaceSession(options?: CallOptions): Promise<void>;
  /**
   * Runs a command in the sandbox of the conversation whose workspace holds `request.cwd` and
   * resolves with its BashOutput once it has ended (extension): `exit_code` is the command's, or -1
   * when it timed out or could not run (`stderr` then says why: a `cwd` outside every workspace, no
   * sandbox, a server that runs no commands). An `ApiError` 422 for a bad request.
   *
   * @example
   * const { home } = await client.getHomeDirectory();
   * const { exit_code, stdout } = await client.executeBashCommand({ command: "git status --short", cwd: `${home}/${conversationId}`, timeout: 10 });
   */
  executeBashCommand(request: OperationBody<"executeBashCommand">, options?: CallOptions): Promise<OperationResult<"executeBashCommand">>;
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

/** What a platform entry adds to the neutral core. */
interface Platform {
  /** Reads a file by path for `uploadFiles` (Node). */
  readPath?: ReadPath;
  /** Opens a live-channel socket (Node: `ws`, with the key as a header). Default: the global WebSocket. */
  openSocket?: OpenSocket;
}

/** Sockets of `options.WebSocket` or else the global one, looked up at each open; the key goes in an auth frame. */
const globalSocket =
  (options: ClientOptions): OpenSocket =>
  (url) => {
    const Socket = options.WebSocket ?? (globalThis as { WebSocket?: new (url: string) => LiveSocket }).WebSocket;
    if (!Socket) throw new TypeError("subscribe: there is no WebSocket here; pass options.WebSocket");
    return { socket: new Socket(url), sentKey: false };
  };

/** The neutral core behind both entries' `createClient`. */
export function createClientFor<Upload>(options: ClientOptions, platform: Platform): AcsClient<Upload> {
  const raw = createRaw(options);
  const call = createCall(options.baseUrl);
  const { validate } = options;
  const validateOptions: ValidateOptions | undefined = validate === true ? {} : validate || undefined;
  /** `POST …/events`: `sendMessage` with call options, or without an open subscription of the conversation. */
  const postMessage = async (conversationId: string, message: UserMessage, options?: CallOptions): Promise<void> => {
    await call("sendMessage", options, () =>
      raw.POST("/api/conversations/{conversation_id}/events", { params: conversationParams(conversationId), body: message, ...requestInit(options) }),
    );
  };
  const live = createLive({
    baseUrl: options.baseUrl,
    apiKey: readKey(options.apiKey),
    openSocket: platform.openSocket ?? globalSocket(options),
    postMessage,
  });

  // Search, paging and count stay here: iterateEvents pages through this client's searchEvents.
  const client: AcsClient<Upload> = {
    raw,

    async searchEvents(conversationId, query, options) {
      const page = await call("searchEvents", options, () =>
        raw.GET("/api/conversations/{conversation_id}/events/search", {
          params: { ...conversationParams(conversationId), ...(query ? { query } : {}) },
          ...requestInit(options),
        }),
      );
      await checkEvents("searchEvents", page.items, validateOptions);
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
      return call("countEvents", options, () =>
        raw.GET("/api/conversations/{conversation_id}/events/count", {
          params: { ...conversationParams(conversationId), ...(filters ? { query: filters } : {}) },
          ...requestInit(options),
        }),
      );
    },

    ...conversationMethods(raw, call),
    ...settingsMethods(raw, call),
    ...fileMethods<Upload>(raw, call, platform.readPath),

    // subscribe, events and sendMessage; the sendMessage below takes the place of live's.
    ...live,

    async sendMessage(conversationId, message, options) {
      if (options?.signal || options?.headers) return postMessage(conversationId, asMessage(message), options);
      await live.sendMessage(conversationId, message);
    },

    appendEventBatch: (conversationId, events, options) => appendEventBatch(raw, call, conversationId, events, options),

    ...agentMethods(raw, call),
    ...serverMethods(raw, call),
    ...eventReadMethods(raw, call),
    ...webUiMethods(raw, call),
  };
  return client;
}
