/**
 * Live events over the WebSocket channel `/sockets/events/{conversation_id}` (spec/asyncapi.yaml):
 * every event once, in order, across reconnects.
 *
 * The server delivers in append order and resumes exactly after a given event (`after_id`), so the
 * client only has to remember the last event it delivered and reconnect from there; a window of
 * recent ids drops anything seen twice all the same. Platform-neutral: the entries pass in how to
 * open a socket (the browser's `WebSocket`, or `ws` in Node, which can send the key as a header).
 */
import type { ConversationFullState, ServerErrorEvent } from "@acs-toolkit/schema";
import { LIVE_CLOSE_CODES } from "@acs-toolkit/schema";
import type { OperationBody, SearchedEvent } from "./types.js";

/** An event as the live channel delivers it: the same type as a search result's item. */
type Event = SearchedEvent;

/** A user message to the agent (the spec's UserMessage): `{ role: "user", content: [...] }`. */
export type UserMessage = OperationBody<"sendMessage">;

/** Where a subscription stands. */
export type LiveStatus = "connecting" | "open" | "reconnecting" | "closed";

/** Close codes of the live channel, generated from `x-close-codes` in spec/asyncapi.yaml (re-exported from `@acs-toolkit/schema`). */
export { LIVE_CLOSE_CODES };

/** Codes after which reconnecting cannot help: the subscription ends with a `LiveError`. */
const FATAL = new Set<number>([LIVE_CLOSE_CODES.unauthorized, LIVE_CLOSE_CODES.notFound, LIVE_CLOSE_CODES.badRequest, 1002, 1003, 1007, 1008, 1009]);

/** The subscription ended for a reason reconnecting cannot fix (bad key, unknown conversation, …). */
export class LiveError extends Error {
  override name = "LiveError";
  constructor(
    /** The WebSocket close code (4001 unauthorized, 4004 not found, 4400 bad request, …). */
    readonly code: number,
    /** The server's close reason. */
    readonly reason: string,
  ) {
    super(`live channel closed with ${code}${reason ? `: ${reason}` : ""}`);
  }
}

export interface StatusDetail {
  /** Close code of the connection that ended (on "reconnecting" and "closed"). */
  code?: number;
  reason?: string;
  /** Reconnect attempt about to be made, from 1 (on "reconnecting"). */
  attempt?: number;
  /** Milliseconds until that attempt. */
  delayMs?: number;
  /** Set on "closed" when the subscription ended with an error. */
  error?: LiveError;
}

export interface BackoffOptions {
  /** First delay before reconnecting, ms. Default 250. */
  initialMs?: number;
  /** Upper bound of a delay, ms. Default 15,000. */
  maxMs?: number;
  /** Growth per attempt. Default 2. */
  factor?: number;
}

export interface SubscribeOptions {
  /** Called once for every event, in order, never twice for the same id. */
  onEvent(event: Event): void;
  /** Connection state changes. */
  onStatus?(status: LiveStatus, detail: StatusDetail): void;
  /** The `full_state` snapshot the server sends at the start of every connection. */
  onFullState?(state: ConversationFullState): void;
  /**
   * The server refused a frame this client sent (the connection stays open): a ServerErrorEvent,
   * sent to this connection only and never stored; `code` says what went wrong, `detail` where.
   */
  onServerError?(frame: ServerErrorEvent): void;
  /**
   * Where to start: `"start"` (every stored event, the default), `"now"` (only events recorded
   * from now on), or `{ afterId }` (every event after that one).
   */
  from?: "start" | "now" | { afterId: string };
  /**
   * After a transient close, reconnect from the last delivered event (`after_id`) so nothing is
   * missed. Default true; false reconnects for live events only.
   */
  resume?: boolean;
  /** Stops the subscription (closes the socket, no reconnect). */
  signal?: AbortSignal;
  backoff?: BackoffOptions;
  /** How many recent event ids are remembered to drop duplicates. Default 10,000. */
  dedupeWindow?: number;
}

export interface Subscription {
  readonly status: LiveStatus;
  /** Id of the last event delivered to `onEvent`. */
  readonly lastEventId: string | undefined;
  /**
   * Sends a user message on this subscription's socket (waits for it to be open). The recorded
   * MessageEvent comes back through `onEvent`.
   */
  sendMessage(message: UserMessage | string): Promise<void>;
  /** Ends the subscription. */
  close(): void;
  /** Settles when the subscription ends: resolves on `close()` or abort, rejects with a `LiveError`. */
  readonly done: Promise<void>;
}

/** The part of a WebSocket the subscription uses (the browser's and `ws` both have it). */
export interface LiveSocket {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

/**
 * Opens a socket. `key` is the session API key: a platform that can set headers sends it as
 * `X-Session-API-Key` and returns `sentKey: true`; otherwise the subscription sends an auth frame.
 */
export type OpenSocket = (url: string, key: string | undefined) => { socket: LiveSocket; sentKey: boolean };

interface LiveDeps {
  baseUrl: string;
  apiKey: () => Promise<string | undefined>;
  openSocket: OpenSocket;
  /** Sends a message over HTTP (`POST …/events`) when no subscription of the conversation is open. */
  postMessage(conversationId: string, message: UserMessage): Promise<void>;
  random?: () => number;
}

const OPEN = 1;
const FULL_STATE = "full_state";

function asMessage(message: UserMessage | string): UserMessage {
  return typeof message === "string" ? { role: "user", content: [{ type: "text", text: message }] } : message;
}

/** The `subscribe`, `events` and `sendMessage` methods of a client. */
export function createLive(deps: LiveDeps) {
  const random = deps.random ?? Math.random;
  /** Open subscriptions by conversation, so `sendMessage` can use their socket. */
  const active = new Map<string, Set<SubscriptionImpl>>();

  class SubscriptionImpl implements Subscription {
    status: LiveStatus = "connecting";
    lastEventId: string | undefined;
    readonly done: Promise<void>;
    private resolveDone!: () => void;
    private rejectDone!: (error: LiveError) => void;
    private socket: LiveSocket | undefined;
    private attempt = 0;
    private timer: ReturnType<typeof setTimeout> | undefined;
    private ended = false;
    /** Position to resume from when nothing was delivered yet ("now" learns it from full_state). */
    private startAfter: string | undefined;
    private seen = new Set<string>();
    private readonly order: string[] = [];
    private waiting: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];

    constructor(
      readonly conversationId: string,
      private readonly options: SubscribeOptions,
    ) {
      this.done = new Promise<void>((resolve, reject) => {
        this.resolveDone = resolve;
        this.rejectDone = reject;
      });
      this.done.catch(() => {}); // unobserved rejections are the caller's choice
      const from = options.from ?? "start";
      if (typeof from === "object") this.startAfter = from.afterId;
      options.signal?.addEventListener("abort", () => this.close(), { once: true });
      let set = active.get(conversationId);
      if (!set) active.set(conversationId, (set = new Set()));
      set.add(this);
      if (options.signal?.aborted) this.close();
      else void this.connect();
    }

    private setStatus(status: LiveStatus, detail: StatusDetail = {}): void {
      this.status = status;
      this.options.onStatus?.(status, detail);
    }

    private url(): string {
      const base = deps.baseUrl.replace(/\/+$/, "").replace(/^http/i, "ws");
      const query = new URLSearchParams();
      const first = this.attempt === 0;
      if (first || (this.options.resume ?? true)) {
        const after = this.lastEventId ?? this.startAfter;
        if (after !== undefined) query.set("after_id", after);
        else if ((this.options.from ?? "start") === "start") query.set("resend_all", "true");
      }
      const q = query.toString();
      return `${base}/sockets/events/${encodeURIComponent(this.conversationId)}${q ? `?${q}` : ""}`;
    }

    private async connect(): Promise<void> {
      let key: string | undefined;
      try {
        key = await deps.apiKey();
      } catch {
        key = undefined;
      }
      if (this.ended) return;
      const { socket, sentKey } = deps.openSocket(this.url(), key);
      this.socket = socket;
      let opened = false;
      socket.onopen = () => {
        if (!sentKey && key !== undefined) socket.send(JSON.stringify({ type: "auth", session_api_key: key }));
      };
      socket.onmessage = ({ data }) => {
        if (this.ended || this.socket !== socket) return;
        let frame: Record<string, unknown>;
        try {
          frame = JSON.parse(typeof data === "string" ? data : String(data)) as Record<string, unknown>;
        } catch {
          return; // not ours to interpret
        }
        if (frame.kind === "ConversationStateUpdateEvent" && frame.key === FULL_STATE && !opened) {
          opened = true;
          this.attempt = 0;
          const state = frame.value as ConversationFullState;
          // Starting "now": resume later from where the stream began, not from nothing.
          if (this.lastEventId === undefined && this.startAfter === undefined && (this.options.from ?? "start") === "now") {
            this.startAfter = state.last_event_id ?? undefined;
          }
          this.setStatus("open", {});
          this.options.onFullState?.(state);
          for (const w of this.waiting.splice(0)) w.resolve();
          return;
        }
        if (frame.kind === "ServerErrorEvent") return this.options.onServerError?.(frame as unknown as ServerErrorEvent);
        if (typeof frame.kind !== "string" || typeof frame.id !== "string") return;
        if (this.seen.has(frame.id)) return;
        this.remember(frame.id);
        this.lastEventId = frame.id;
        this.options.onEvent(frame as unknown as Event);
      };
      socket.onerror = () => {}; // onclose follows with the code
      socket.onclose = ({ code, reason }) => {
        if (this.socket !== socket) return;
        this.socket = undefined;
        if (this.ended) return;
        if (FATAL.has(code)) return this.finish(new LiveError(code, reason));
        this.attempt++;
        const { initialMs = 250, maxMs = 15_000, factor = 2 } = this.options.backoff ?? {};
        // Full jitter: spreads the reconnects of many clients after a server restart.
        const delayMs = Math.round(random() * Math.min(maxMs, initialMs * factor ** (this.attempt - 1)));
        this.setStatus("reconnecting", { code, reason, attempt: this.attempt, delayMs });
        this.timer = setTimeout(() => void this.connect(), delayMs);
      };
    }

    private remember(id: string): void {
      this.seen.add(id);
      this.order.push(id);
      const window = this.options.dedupeWindow ?? 10_000;
      if (this.order.length > window * 2) for (const old of this.order.splice(0, this.order.length - window)) this.seen.delete(old);
    }

    private finish(error?: LiveError): void {
      if (this.ended) return;
      this.ended = true;
      clearTimeout(this.timer);
      active.get(this.conversationId)?.delete(this);
      if (active.get(this.conversationId)?.size === 0) active.delete(this.conversationId);
      const socket = this.socket;
      this.socket = undefined;
      if (socket && socket.readyState <= OPEN) socket.close(1000, "client closed");
      this.setStatus("closed", error ? { code: error.code, reason: error.reason, error } : {});
      for (const w of this.waiting.splice(0)) w.reject(error ?? new Error("subscription closed"));
      if (error) this.rejectDone(error);
      else this.resolveDone();
    }

    close(): void {
      this.finish();
    }

    isOpen(): boolean {
      return this.status === "open" && this.socket?.readyState === OPEN;
    }

    async sendMessage(message: UserMessage | string): Promise<void> {
      if (this.ended) throw new Error("sendMessage: the subscription is closed");
      if (!this.isOpen()) await new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
      this.socket!.send(JSON.stringify(asMessage(message)));
    }
  }

  function subscribe(conversationId: string, options: SubscribeOptions): Subscription {
    if (typeof options?.onEvent !== "function") throw new TypeError("subscribe: onEvent is required");
    return new SubscriptionImpl(conversationId, options);
  }

  /**
   * The conversation's events as an async iterator: stored ones first (unless `from` says
   * otherwise), then live ones, until `break`, `signal` or a fatal close (thrown as `LiveError`).
   */
  async function* events(conversationId: string, options: Omit<SubscribeOptions, "onEvent"> = {}): AsyncGenerator<Event, void, undefined> {
    const queue: Event[] = [];
    let wake: (() => void) | undefined;
    let failure: LiveError | undefined;
    let finished = false;
    const subscription = subscribe(conversationId, {
      ...options,
      onEvent(event) {
        queue.push(event);
        wake?.();
      },
    });
    subscription.done.then(
      () => ((finished = true), wake?.()),
      (error: LiveError) => ((failure = error), (finished = true), wake?.()),
    );
    try {
      for (;;) {
        while (queue.length) yield queue.shift()!;
        if (failure) throw failure;
        if (finished) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      subscription.close();
    }
  }

  /**
   * Sends a user message: over an open subscription's socket when there is one for this
   * conversation, otherwise with `POST /api/conversations/{id}/events`.
   */
  async function sendMessage(conversationId: string, message: UserMessage | string): Promise<void> {
    const open = [...(active.get(conversationId) ?? [])].find((s) => s.isOpen());
    if (open) return open.sendMessage(message);
    await deps.postMessage(conversationId, asMessage(message));
  }

  return { subscribe, events, sendMessage };
}
