/**
 * What a check works with: the HTTP client bound to the check's deadline, the spec's validators,
 * the data the run creates once and shares (made through the interface itself), the capability
 * probes, and WebSocket connections that are closed when the check ends.
 */
import { randomBytes } from "node:crypto";
import { expectConforms, fail, type Need } from "./check.js";
import { asJsonLines, mainTrajectory, shuffledTrajectory, userMessage, type AnyEvent } from "./data.js";
import { describeReply, HttpClient, type Reply, type RequestOptions } from "./http.js";
import { HandshakeRefused, LiveSocket } from "./socket.js";
import { SpecResponses } from "./spec.js";


/** A conversation the run created, with the events it was created with (in append order). */
export interface SeededConversation {
  id: string;
  events: AnyEvent[];
}

/**
 * A probe of a conversation that may record events of its own while it runs (an agent's actions and
 * replies, state updates), and two listings that bound it: the probe must see every event of
 * `before`, and may see events recorded meanwhile, which `after` holds.
 */
export interface Between<T> {
  /** Every event, ascending, as search lists it before the probe. */
  before: AnyEvent[];
  result: T;
  /** The same, after the probe. */
  after: AnyEvent[];
}

/** The secrets the run stored (unique to the run, so that any answer of the run can be scanned for them). */
export interface StoredSecrets {
  values: Record<string, string>;
}

/** Statuses with which an implementation says it has no such route or method. */
const NOT_IMPLEMENTED = new Set([404, 405, 501]);

/** How long a WebSocket check waits for one expected frame or close. */
export const FRAME_TIMEOUT_MS = 3_000;

/** State shared by every check of one run. */
export class SuiteState {
  readonly spec = new SpecResponses();
  readonly http: HttpClient;
  private readonly memo = new Map<string, Promise<unknown>>();
  /** A tag unique to this run, put into the data it creates. */
  readonly runTag = randomBytes(4).toString("hex");

  constructor(
    readonly baseUrl: URL,
    readonly apiKey: string | undefined,
    readonly timeoutMs: number,
  ) {
    this.http = new HttpClient(baseUrl, apiKey, timeoutMs);
  }

  /** Runs `make` once per run; every caller gets the same promise. */
  once<T>(name: string, make: () => Promise<T>): Promise<T> {
    let found = this.memo.get(name) as Promise<T> | undefined;
    if (!found) this.memo.set(name, (found = make()));
    return found;
  }
}

export class CheckContext {
  private readonly sockets: LiveSocket[] = [];

  constructor(
    private readonly suite: SuiteState,
    /** Aborted when the check runs out of time. */
    readonly signal?: AbortSignal,
  ) {}

  get spec(): SpecResponses {
    return this.suite.spec;
  }

  get apiKey(): string | undefined {
    return this.suite.apiKey;
  }

  get runTag(): string {
    return this.suite.runTag;
  }

  /** Every reply of the run so far. */
  get received(): readonly Reply[] {
    return this.suite.http.received;
  }

  request(method: string, route: string, options?: RequestOptions): Promise<Reply> {
    return this.suite.http.request(method, route, options, this.signal);
  }

  /** Fixtures are made outside any one check's deadline (a check that times out must not poison them). */
  private fixture<T>(name: string, make: (ctx: CheckContext) => Promise<T>): Promise<T> {
    return this.suite.once(name, () => make(new CheckContext(this.suite)));
  }

  /** Creates a conversation (expects a conforming 200) and returns its id. */
  async createConversation(body: Record<string, unknown>): Promise<string> {
    const reply = await this.request("POST", "/api/conversations", { json: body });
    expectConforms(this, "createConversation", reply, 200);
    return reply.json.conversation_id as string;
  }

  /** Creates a conversation holding these events (JSON Lines `replay_json`). */
  async seed(events: AnyEvent[]): Promise<SeededConversation> {
    return { id: await this.createConversation({ replay_json: asJsonLines(events) }), events };
  }

  /**
   * The run's main conversation: 110 events of every kind (see `mainTrajectory`). The suite never
   * appends to it; the implementation may (an agent), so checks judge it between two listings.
   */
  main(): Promise<SeededConversation> {
    return this.fixture("main", (ctx) => ctx.seed(mainTrajectory()));
  }

  /** A conversation whose timestamps are out of append order (see `shuffledTrajectory`). */
  shuffled(): Promise<SeededConversation> {
    return this.fixture("shuffled", (ctx) => ctx.seed(shuffledTrajectory()));
  }

  /** Every event of a conversation, ascending (all pages of 100), as it stands now. */
  listing(conversationId: string): Promise<AnyEvent[]> {
    return this.searchAll(conversationId, { limit: 100 });
  }

  /**
   * Runs `probe` between two listings of the conversation. An implementation with an agent records
   * events of its own whenever it likes: a check compares what it saw with what the conversation
   * held before (all of which it must see) and after (where anything else it saw must be), never
   * with one moment's count, and never waits for the conversation to be quiet.
   */
  async between<T>(conversationId: string, probe: () => Promise<T>): Promise<Between<T>> {
    const before = await this.listing(conversationId);
    const result = await probe();
    return { before, result, after: await this.listing(conversationId) };
  }

  /** One page of search, checked against the spec. */
  async searchPage(conversationId: string, query: RequestOptions["query"] = {}): Promise<{ items: AnyEvent[]; next_page_id?: string | null }> {
    const reply = await this.request("GET", `/api/conversations/${conversationId}/events/search`, { query });
    expectConforms(this, "searchEvents", reply, 200);
    return reply.json;
  }

  /**
   * Every page of a search, following `next_page_id`; checks each page (conforming, full unless it
   * is the last, no cursor after an empty page) and gives up after `maxPages`.
   */
  async searchAll(conversationId: string, query: Record<string, string | number | undefined> = {}, maxPages = 500): Promise<AnyEvent[]> {
    const events: AnyEvent[] = [];
    let pageId: string | null | undefined;
    for (let pages = 0; ; pages++) {
      if (pages === maxPages) fail(`search ${JSON.stringify(query)}: still a next_page_id after ${maxPages} pages`);
      const page = await this.searchPage(conversationId, { ...query, page_id: pageId ?? undefined });
      if (pages > 0 && page.items.length === 0) fail(`search ${JSON.stringify(query)}: page ${pages + 1} is empty although the previous page gave a next_page_id`);
      events.push(...page.items);
      pageId = page.next_page_id;
      if (!pageId) return events;
      if (typeof query.limit === "number" && page.items.length !== query.limit) {
        fail(`search ${JSON.stringify(query)}: a page of ${page.items.length} events (limit ${query.limit}) has a next_page_id; only the last page may be short`);
      }
    }
  }

  /** Appends a user message through `POST …/events` (the append capability); returns the recorded event. */
  async append(conversationId: string, words: string): Promise<AnyEvent> {
    const reply = await this.request("POST", `/api/conversations/${conversationId}/events`, { json: userMessage(words) });
    expectConforms(this, "sendMessage", reply, 200);
    return reply.json;
  }

  /** The secrets the run stores in settings and git-provider tokens (once per run). */
  secrets(): Promise<StoredSecrets> {
    return this.fixture("secrets", async (ctx) => {
      const tag = ctx.runTag;
      const values = {
        llm_api_key: `acs-conformance-llm-SECRET-${tag}`,
        search_api_key: `acs-conformance-search-SECRET-${tag}`,
        sandbox_api_key: `acs-conformance-sandbox-SECRET-${tag}`,
        custom_secret: `acs-conformance-custom-SECRET-${tag}`,
        mcp_api_key: `acs-conformance-mcp-SECRET-${tag}`,
        github_token: `acs-conformance-github-SECRET-${tag}`,
      };
      const settings = await ctx.request("POST", "/api/settings", {
        json: {
          ...TEST_SETTINGS,
          llm_api_key: values.llm_api_key,
          search_api_key: values.search_api_key,
          sandbox_api_key: values.sandbox_api_key,
          secrets_store: { custom_secrets: { ACS_CONFORMANCE: { secret: values.custom_secret, description: "stored by acs-conformance" } } },
          mcp_config: { sse_servers: [{ url: "https://mcp.invalid/sse", api_key: values.mcp_api_key }], stdio_servers: [], shttp_servers: [] },
        },
      });
      expectConforms(ctx, "storeSettings", settings, 200);
      const tokens = await ctx.request("POST", "/api/add-git-providers", {
        json: { provider_tokens: { github: { token: values.github_token, host: "github.invalid" } } },
      });
      expectConforms(ctx, "addGitProviders", tokens, 200);
      return { values };
    });
  }

  /**
   * Whether the implementation has a capability; the reason when it has not. Probed once per run,
   * on conversations of the run's own.
   */
  capability(need: Need): Promise<string | undefined> {
    if (need === "key") return Promise.resolve(this.apiKey ? undefined : "no --api-key given: a wrong key cannot be told from the right one");
    return this.fixture(`capability ${need}`, (ctx) => ctx.probe(need));
  }

  /**
   * Whether the implementation serves event search without a key (the interface declares no
   * security scheme there; the reference server asks for one unless started with `--public-read`).
   */
  publicRead(): Promise<boolean> {
    return this.fixture("public read", async (ctx) => {
      const id = await ctx.createConversation({});
      const reply = await ctx.request("GET", `/api/conversations/${id}/events/search`, { key: null, query: { limit: 1 } });
      if (reply.status === 200 || reply.status === 401) return reply.status === 200;
      return fail(`search without a key: expected 200 (public) or 401: ${describeReply(reply)}`);
    });
  }

  private async probe(need: Need): Promise<string | undefined> {
    const missing = (reply: Reply, what: string) => (NOT_IMPLEMENTED.has(reply.status) ? `${what} is not implemented (${describeReply(reply)})` : undefined);
    if (need === "append") {
      const id = await this.createConversation({});
      return missing(await this.request("POST", `/api/conversations/${id}/events`, { json: userMessage("probe") }), "POST /api/conversations/{id}/events");
    }
    if (need === "websocket") {
      const id = await this.createConversation({});
      try {
        (await this.socket(id)).close();
        return undefined;
      } catch (error) {
        if (error instanceof HandshakeRefused) return `the WebSocket channel is not served: ${error.message}`;
        return `the WebSocket channel is not reachable: ${(error as Error).message}`;
      }
    }
    const operationId = need.slice("extension:".length);
    switch (operationId) {
      case "getConversation":
        return missing(await this.request("GET", `/api/conversations/${(await this.main()).id}`), "getConversation (extension)");
      case "countEvents":
        return missing(await this.request("GET", `/api/conversations/${(await this.main()).id}/events/count`), "countEvents (extension)");
      case "getHealth":
        return missing(await this.request("GET", "/health"), "getHealth (extension)");
      case "getSettings":
        return missing(await this.request("GET", "/api/settings"), "getSettings (extension)");
      case "downloadFile": {
        const conversation = await this.createConversation({});
        const upload = await this.upload(conversation, [["probe.txt", Buffer.from("probe")]]);
        const url = upload.json?.file_urls?.[0];
        if (typeof url !== "string") return `no file URL to download: ${describeReply(upload)}`;
        return missing(await this.request("GET", url), "downloadFile (extension)");
      }
      case "startConversationRequest": {
        // Not an operation of its own: the agent server's body of createConversation.
        const reply = await this.request("POST", "/api/conversations", { json: { workspace: { working_dir: "/workspace/project" }, agent_settings: { agent_kind: "openhands" } } });
        return reply.status === 201 || reply.status === 200 ? undefined : `POST /api/conversations does not take the agent server's StartConversationRequest: ${describeReply(reply)}`;
      }
      default: {
        // Any other extension: ask it on a conversation of its own, with a `{}` body when it takes one.
        const operation = this.spec.operations.find((o) => o.operationId === operationId);
        if (!operation) return `${operationId} is not an operation of the spec`;
        const route = operation.path.replace("{conversation_id}", operation.path.includes("{conversation_id}") ? await this.createConversation({}) : "");
        return missing(await this.request(operation.method, route, { json: operation.method === "GET" ? undefined : {} }), `${operationId} (extension)`);
      }
    }
  }

  /** Uploads files as the form field `files` (fetch's FormData). */
  upload(conversationId: string, files: Array<[name: string, bytes: Buffer]>, options: RequestOptions = {}): Promise<Reply> {
    const form = new FormData();
    for (const [name, bytes] of files) form.append("files", new Blob([new Uint8Array(bytes)]), name);
    return this.request("POST", `/api/conversations/${conversationId}/upload-files`, { ...options, body: form });
  }

  /**
   * Opens the live-events channel of a conversation. The key goes in the `X-Session-API-Key` header
   * unless `key` says otherwise (`null`: no header). Closed when the check ends.
   */
  async socket(conversationId: string, options: { query?: Record<string, string>; key?: string | null } = {}): Promise<LiveSocket> {
    const url = this.suite.http.url(`/sockets/events/${conversationId}`);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
    const key = options.key === undefined ? this.apiKey : options.key;
    const socket = await LiveSocket.open(url, key === null || key === undefined ? {} : { "X-Session-API-Key": key }, this.suite.timeoutMs);
    this.sockets.push(socket);
    return socket;
  }

  /** Closes what the check opened. */
  dispose(): void {
    for (const socket of this.sockets) socket.close();
  }
}

/** Settings values that are plainly a test's (the suite overwrites the account's settings). */
export const TEST_SETTINGS = {
  language: "en",
  agent: "CodeActAgent",
  llm_model: "acs-conformance/test-model",
  max_iterations: 42,
  confirmation_mode: false,
  enable_sound_notifications: false,
  git_user_name: "acs-conformance",
  git_user_email: "acs-conformance@example.invalid",
} as const;

