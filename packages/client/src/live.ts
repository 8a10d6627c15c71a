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

/** A message given as text, as a user message with one text part. */
export function asMessage(message: UserMessage | string): UserMessage {
  return typeof message === "string" ? { role: "user", content: [{ type: "text", text: message }] } : message;
}

/** What the subscriptions of one client share. */
interface Live extends LiveDeps {
  random: () => number;
  /** Open subscriptions, so `sendMessage` can use their socket. */
  active: Set<LiveSubscription>;
}

/** A subscription as the client keeps it: `sendMessage` looks for an open one of the conversation. */
interface LiveSubscription extends Subscription {
  readonly conversationId: string;
  status: LiveStatus;
  lastEventId: string | undefined;
  isOpen(): boolean;
}

/**
 * The delay before reconnect `attempt` (from 1), ms. Full jitter: spreads the reconnects of many
 * clients after a server restart.
 */
function reconnectDelay({ initialMs = 250, maxMs = 15_000, factor = 2 }: BackoffOptions, attempt: number, random: () => number): number {
  return Math.round(random() * Math.min(maxMs, initialMs * factor ** (attempt - 1)));
}

/** The channel's URL for one connection: after `after` when given, else every stored event when `replay`. */
function channelUrl(baseUrl: string, conversationId: string, after: string | undefined, replay: boolean): string {
  const query = new URLSearchParams();
  if (after !== undefined) query.set("after_id", after);
  else if (replay) query.set("resend_all", "true");
  const q = query.toString();
  return `${baseUrl.replace(/\/+$/, "").replace(/^http/i, "ws")}/sockets/events/${encodeURIComponent(conversationId)}${q ? `?${q}` : ""}`;
}

/**
 * Opens one connection: sends the key in an auth frame when the platform could not send it as a
 * header, and hands on each frame that is JSON (others are not ours to interpret) and the close.
 */
function connectOnce(
  live: Live,
  url: string,
  key: string | undefined,
  onFrame: (frame: Record<string, unknown>) => void,
  onClose: (code: number, reason: string) => void,
): LiveSocket {
  const { socket, sentKey } = live.openSocket(url, key);
  socket.onopen = () => {
    if (!sentKey && key !== undefined) socket.send(JSON.stringify({ type: "auth", session_api_key: key }));
  };
  socket.onmessage = ({ data }) => {
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(typeof data === "string" ? data : String(data)) as Record<string, unknown>;
    } catch {
      return;
    }
    onFrame(frame);
  };
  socket.onerror = () => {}; // onclose follows with the code
  socket.onclose = ({ code, reason }) => onClose(code, reason);
  return socket;
}

/**
 * Hands on the frames other than a connection's full_state: server errors, and events never
 * delivered before (the last `dedupeWindow` ids are remembered); anything else is dropped.
 */
function deliverer(sub: LiveSubscription, options: SubscribeOptions): (frame: Record<string, unknown>) => void {
  const seen = new Set<string>();
  const order: string[] = [];
  return (frame) => {
    if (frame.kind === "ServerErrorEvent") return options.onServerError?.(frame as unknown as ServerErrorEvent);
    if (typeof frame.kind !== "string" || typeof frame.id !== "string" || seen.has(frame.id)) return;
    seen.add(frame.id);
    order.push(frame.id);
    const window = options.dedupeWindow ?? 10_000;
    if (order.length > window * 2) for (const old of order.splice(0, order.length - window)) seen.delete(old);
    sub.lastEventId = frame.id;
    options.onEvent(frame as unknown as Event);
  };
}

type Waiter = { resolve: () => void; reject: (e: unknown) => void };

/** One subscription: its socket, reconnects and the ids it has delivered. */
function openSubscription(live: Live, conversationId: string, options: SubscribeOptions): LiveSubscription {
  let settle!: (error?: LiveError) => void;
  let socket: LiveSocket | undefined;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let ended = false;
  /** Position to resume from when nothing was delivered yet ("now" learns it from full_state). */
  let startAfter = typeof options.from === "object" ? options.from.afterId : undefined;
  const waiting: Waiter[] = [];
  const sub: LiveSubscription = {
    conversationId,
    status: "connecting",
    lastEventId: undefined,
    done: new Promise<void>((resolve, reject) => (settle = (error) => (error ? reject(error) : resolve()))),
    close: () => finish(),
    isOpen: () => sub.status === "open" && socket?.readyState === OPEN,
    async sendMessage(message) {
      if (ended) throw new Error("sendMessage: the subscription is closed");
      if (!sub.isOpen()) await new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
      socket!.send(JSON.stringify(asMessage(message)));
    },
  };
  const deliver = deliverer(sub, options);

  const setStatus = (status: LiveStatus, detail: StatusDetail = {}): void => {
    sub.status = status;
    options.onStatus?.(status, detail);
  };

  const connect = async (): Promise<void> => {
    const key = await live.apiKey().catch(() => undefined);
    if (ended) return;
    const resume = attempt === 0 || (options.resume ?? true);
    const url = channelUrl(live.baseUrl, conversationId, resume ? (sub.lastEventId ?? startAfter) : undefined, resume && (options.from ?? "start") === "start");
    let opened = false;
    const onFrame = (frame: Record<string, unknown>) => {
      if (ended || socket !== current) return; // a socket this subscription dropped (closed or replaced)
      if (frame.kind !== "ConversationStateUpdateEvent" || frame.key !== FULL_STATE || opened) return deliver(frame);
      opened = true;
      attempt = 0;
      const state = frame.value as ConversationFullState;
      // Starting "now": resume later from where the stream began, not from nothing.
      if (sub.lastEventId === undefined && startAfter === undefined && (options.from ?? "start") === "now") startAfter = state.last_event_id ?? undefined;
      setStatus("open");
      options.onFullState?.(state);
      for (const w of waiting.splice(0)) w.resolve();
    };
    const onClose = (code: number, reason: string) => {
      if (socket !== current) return;
      socket = undefined;
      if (ended) return;
      if (FATAL.has(code)) return finish(new LiveError(code, reason));
      attempt++;
      const delayMs = reconnectDelay(options.backoff ?? {}, attempt, live.random);
      setStatus("reconnecting", { code, reason, attempt, delayMs });
      timer = setTimeout(() => void connect(), delayMs);
    };
    const current = (socket = connectOnce(live, url, key, onFrame, onClose));
  };

  const finish = (error?: LiveError): void => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    live.active.delete(sub);
    const closing = socket;
    socket = undefined;
    if (closing && closing.readyState <= OPEN) closing.close(1000, "client closed");
    setStatus("closed", error ? { code: error.code, reason: error.reason, error } : {});
    for (const w of waiting.splice(0)) w.reject(error ?? new Error("subscription closed"));
    settle(error);
  };

  sub.done.catch(() => {}); // unobserved rejections are the caller's choice
  options.signal?.addEventListener("abort", () => sub.close(), { once: true });
  live.active.add(sub);
  if (options.signal?.aborted) sub.close();
  else void connect();
  return sub;
}

/** The `subscribe`, `events` and `sendMessage` methods of a client. */
export function createLive(deps: LiveDeps) {
  const live: Live = { ...deps, random: deps.random ?? Math.random, active: new Set() };
  const { active } = live;

  function subscribe(conversationId: string, options: SubscribeOptions): Subscription {
    if (typeof options?.onEvent !== "function") throw new TypeError("subscribe: onEvent is required");
    return openSubscription(live, conversationId, options);
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
    const open = [...active].find((s) => s.conversationId === conversationId && s.isOpen());
    if (open) return open.sendMessage(message);
    await deps.postMessage(conversationId, asMessage(message));
  }

  return { subscribe, events, sendMessage };
}
