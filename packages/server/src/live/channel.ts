/**
 * The live channel: `/sockets/events/{conversation_id}` over WebSocket (spec/asyncapi.yaml).
 *
 * Exactly once, in order: a connection subscribes to the bus, then reads stored events from the
 * store in append order (pages of `replayPageSize`, paced by the socket's buffer), and switches to
 * the bus once a page comes back short and nothing was published past what it has sent while that
 * page was read. Events are published after they are stored, in append order (ConversationService
 * serializes each conversation's writes), so an event published during catch-up is in the store: if
 * one is past the last event sent, catch-up reads again instead of switching, and no event can fall
 * between the two. A sequence number guard drops anything already sent.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { setImmediate as nextTask } from "node:timers/promises";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import type { ServerErrorEvent, UserMessage, ValidationError } from "@acs-toolkit/schema";
import { LIVE_CLOSE_CODES } from "@acs-toolkit/schema";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { instantError, instantMicros } from "@acs-toolkit/validator";
import type { EventBus } from "../bus.js";
import { TooManyMessagesError, canonicalConversationId, type ConversationService } from "../conversations.js";
import { RequestValidationError, sharedRequestValidators, type RequestValidators } from "../http/validation.js";
import { createKeyCheck } from "../keys.js";
import { rejectSocket } from "../http/client-errors.js";
import { parseJsonText } from "../http/json-body.js";
import type { Logger } from "../log.js";
import { recordedTimestamp } from "../store/time.js";
import type { ConversationRecord, EventStore, Position, StoredEvent } from "../store/types.js";
import { storageFullCause, type WriteHealth } from "../write-health.js";
import { TurnBatcher, textFrame } from "./frame.js";

/** Close codes of the live channel: `LIVE_CLOSE_CODES`, generated from `x-close-codes` in spec/asyncapi.yaml. */
export const LIVE_CLOSE = LIVE_CLOSE_CODES;

/** Connections one conversation may have at once, by default (see LiveEventsOptions.maxConnectionsPerConversation). */
export const DEFAULT_MAX_CONNECTIONS_PER_CONVERSATION = 10_000;

export interface LiveEventsOptions {
  store: EventStore;
  bus: EventBus;
  conversations: ConversationService;
  /** Accepted session API keys. */
  keys: readonly string[];
  /** Serve events without a key (sending messages still needs one). */
  publicRead: boolean;
  log: Logger;
  /** Request validators of the bundled spec (built when not given). */
  validators?: RequestValidators;
  /** How long a connection without a key may take to send its auth frame. Default 5,000 ms. */
  authTimeoutMs?: number;
  /** Ping interval; a peer that did not answer the previous ping is cut. Default 30,000 ms. */
  heartbeatMs?: number;
  /** Bound of a connection's unsent bytes while it follows live events; past it: close 4429. Default 4 MiB. */
  maxBufferedBytes?: number;
  /** Events read from the store per step while catching up. Default 500. */
  replayPageSize?: number;
  /** Largest inbound frame. Default 16 MiB. */
  maxPayloadBytes?: number;
  /** Told when recording a message fails for lack of space (the server's /health reports it). */
  writeHealth?: Pick<WriteHealth, "failed">;
  /**
   * Connections one conversation may have at once; one more is closed with 1013 "Too many
   * connections for this conversation", as the OpenHands agent server does past its 50. Default
   * 10,000: this server encodes each event once for every subscriber and bounds each one's buffer
   * (4429), so a conversation followed by a thousand dashboards is a use, not an abuse; the bound
   * only stops a runaway client from opening connections until memory runs out.
   */
  maxConnectionsPerConversation?: number;
}

export interface LiveEvents {
  /** Connections open now. */
  readonly connections: number;
  /** Closes every connection with 1001 and stops accepting. Idempotent. */
  close(): Promise<void>;
}

const PATH = /^\/sockets\/events\/([^/?#]+)\/?$/;

/** Events read per step of a `resend_mode=since` replay (a search page). */
const SINCE_PAGE = 100;

/**
 * The bytes a catch-up page aims at: after a page of large events the next asks for fewer, so one
 * step (a read, and one write of its frames) stays short whatever the events' size.
 */
export const CATCH_UP_PAGE_BYTES = 512 * 1024;

/**
 * The `code` of a ServerErrorEvent answering an inbound frame: the agent server's exception class
 * names where they apply (JSONDecodeError, ValidationError), this server's own cases otherwise.
 */
type ServerErrorCode = "JSONDecodeError" | "ValidationError" | "Unauthorized" | "TooManyRequests" | "InsufficientStorage" | "InternalError";

/** Attaches the live channel to an HTTP server (its `upgrade` requests on the channel's path). */
export function attachLiveEvents(http: Server, options: LiveEventsOptions): LiveEvents {
  const validators = options.validators ?? sharedRequestValidators(openapiDocument);
  const checkKey = createKeyCheck(options.keys);
  const settings: ConnectionSettings = {
    authTimeoutMs: options.authTimeoutMs ?? 5_000,
    maxBufferedBytes: options.maxBufferedBytes ?? 4 * 1024 * 1024,
    replayPageSize: options.replayPageSize ?? 500,
    subscribers: new SubscriberCounts(options.maxConnectionsPerConversation ?? DEFAULT_MAX_CONNECTIONS_PER_CONVERSATION),
  };
  // One inbound message per tick: a flood of frames in one TCP read (each parsed and validated)
  // would otherwise be handled in one task, holding the event loop.
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayloadBytes ?? 16 * 1024 * 1024, allowSynchronousEvents: false });
  // Each live event is framed once, not once per subscriber (the bus hands every listener the
  // same StoredEvent objects), and written in one turn's batch per socket (frame.ts).
  const framed = new WeakMap<StoredEvent, Buffer>();
  const frame = (event: StoredEvent) => {
    let bytes = framed.get(event);
    if (!bytes) framed.set(event, (bytes = textFrame(event.json)));
    return bytes;
  };
  const batcher = new TurnBatcher();
  const live: LiveWrites = { frame, write: (socket, bytes) => batcher.write(socket, bytes) };
  const open = new Set<LiveConnection>();
  let closed = false;

  // Never throws (an exception here would end the process): every refusal is answered in JSON
  // and the socket closed.
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    try {
      const target = upgradeTarget(request.url ?? "");
      if (!target) return rejectSocket(socket, 400, "Bad Request: the request target is not a path");
      const match = PATH.exec(target.pathname);
      if (!match) return rejectSocket(socket, 404, "Not Found");
      let conversationId: string;
      try {
        conversationId = decodeURIComponent(match[1]!);
      } catch {
        return rejectSocket(socket, 400, "Bad Request: the conversation id is not valid percent-encoded UTF-8");
      }
      if (closed) return rejectSocket(socket, 503, "Service Unavailable: the server is shutting down");
      if (request.method !== "GET") return rejectSocket(socket, 405, "Method Not Allowed: a WebSocket upgrade is a GET", { Allow: "GET" });
      const version = request.headers["sec-websocket-version"];
      if (version !== "13" && version !== "8") {
        return rejectSocket(socket, 400, "Bad Request: Sec-WebSocket-Version must be 13", { "Sec-WebSocket-Version": "13, 8" });
      }
      wss.handleUpgrade(request, socket, head, (ws) => {
        const connection = new LiveConnection(ws, socket, request, target, conversationId, options, validators, checkKey, settings, live);
        open.add(connection);
        ws.once("close", () => open.delete(connection));
        connection.start();
      });
    } catch (error) {
      options.log.error({ err: error }, "live channel: upgrade failed");
      socket.destroy();
    }
  };
  // The handshake checks ws makes itself (key, subprotocols, extensions): JSON too, not its text/html.
  wss.on("wsClientError", (error: Error, socket: Duplex) => rejectSocket(socket, 400, `Bad Request: ${error.message}`));
  http.on("upgrade", onUpgrade);

  const heartbeat = setInterval(() => {
    for (const connection of open) connection.heartbeat();
  }, options.heartbeatMs ?? 30_000);
  heartbeat.unref();

  return {
    get connections() {
      return open.size;
    },
    close: () => {
      if (!closed) {
        closed = true;
        clearInterval(heartbeat);
        http.off("upgrade", onUpgrade);
        for (const connection of open) connection.close(LIVE_CLOSE.goingAway, "server shutting down");
      }
      return new Promise<void>((resolve) => {
        const done = () => (open.size === 0 ? resolve() : undefined);
        // A peer that does not answer the close handshake is cut after a second.
        const force = setTimeout(() => {
          for (const connection of open) connection.terminate();
          resolve();
        }, 1_000);
        force.unref();
        for (const connection of open) connection.onClosed(done);
        wss.close(() => done());
        done();
      });
    },
  };
}

interface ConnectionSettings {
  authTimeoutMs: number;
  maxBufferedBytes: number;
  replayPageSize: number;
  /** Shared by every connection of the channel. */
  subscribers: SubscriberCounts;
}

/** Streaming connections per conversation, bounded. */
class SubscriberCounts {
  private readonly counts = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Counts one more connection of a conversation, unless it has `limit` already. */
  add(conversationId: string): boolean {
    const count = this.counts.get(conversationId) ?? 0;
    if (count >= this.limit) return false;
    this.counts.set(conversationId, count + 1);
    return true;
  }

  remove(conversationId: string): void {
    const count = (this.counts.get(conversationId) ?? 1) - 1;
    if (count > 0) this.counts.set(conversationId, count);
    else this.counts.delete(conversationId);
  }
}

/** How live events reach a subscriber's socket: framed once for all (frame.ts), written in turn batches. */
interface LiveWrites {
  frame(event: StoredEvent): Buffer;
  write(socket: Duplex, bytes: Buffer): void;
}

/**
 * A stored-history replay asked with `resend_mode=since`: the events stored when the connection
 * opened (append order up to `end`) whose timestamp is at or after `from` (µs, inclusive), read in
 * search order.
 */
interface SinceReplay {
  from: number;
  end: number;
  after?: Position;
}

/** Where a connection stands: waiting for its auth frame, catching up from the store, or following the bus. */
type Phase = "auth" | "opening" | "catch-up" | "live" | "closed";

class LiveConnection {
  private phase: Phase = "auth";
  /** May send messages (a key was presented); public readers may only read. */
  private canWrite = false;
  private conversation!: ConversationRecord;
  /** Append order of the last event sent. */
  private lastSeq = 0;
  private lastId: string | null = null;
  private sent = 0;
  private alive = true;
  private unsubscribe?: () => void;
  private unsubscribeTransient?: () => void;
  /** Set while the connection counts against its conversation's bound. */
  private counted = false;
  /** The `resend_mode=since` replay still to send before catching up in append order. */
  private since?: SinceReplay;
  private authTimer?: NodeJS.Timeout;
  private readonly closeListeners: Array<() => void> = [];
  /** The newest seq published on the bus while catching up (see the module comment). */
  private publishedDuringCatchUp = 0;
  /** Events the next catch-up page asks for: replayPageSize, fewer after a page of large events. */
  private catchUpLimit = 0;
  /**
   * Inbound frames and the opening, one at a time in arrival order: messages are recorded in the
   * order they were sent, and none is handled before the connection is open.
   */
  private work: Promise<void> = Promise.resolve();

  constructor(
    private readonly ws: WebSocket,
    /** The connection's socket, which live frames are written to directly (see LiveWrites). */
    private readonly socket: Duplex,
    private readonly request: IncomingMessage,
    private readonly url: UpgradeTarget,
    private readonly rawConversationId: string,
    private readonly options: LiveEventsOptions,
    private readonly validators: RequestValidators,
    private readonly checkKey: (presented: string | undefined) => boolean,
    private readonly settings: ConnectionSettings,
    private readonly live: LiveWrites,
  ) {}

  start(): void {
    const { ws } = this;
    ws.on("pong", () => (this.alive = true));
    ws.on("message", (data, isBinary) => this.enqueue(() => this.onFrame(data, isBinary)));
    ws.on("error", (error) => this.options.log.debug({ err: error.message }, "live connection error"));
    ws.once("close", (code) => {
      this.phase = "closed";
      this.unsubscribe?.();
      this.unsubscribeTransient?.();
      this.uncount();
      clearTimeout(this.authTimer);
      this.options.log.info({ conversationId: this.conversation?.id ?? this.rawConversationId, code, sent: this.sent }, "live connection closed");
      for (const listener of this.closeListeners.splice(0)) listener();
    });

    const header = this.request.headers["x-session-api-key"];
    const fromQuery = this.url.searchParams.get("session_api_key");
    if (fromQuery !== null) {
      this.options.log.warn({ path: this.url.pathname }, "live channel: session_api_key in the query string is deprecated (URLs leak into logs); send the X-Session-API-Key header or an auth frame");
    }
    const presented = typeof header === "string" ? header : (fromQuery ?? undefined);
    if (presented !== undefined) {
      if (!this.checkKey(presented)) return this.close(LIVE_CLOSE.unauthorized, "Unauthorized");
      this.canWrite = true;
      return this.enqueue(() => this.open());
    }
    if (this.options.publicRead) return this.enqueue(() => this.open());
    this.authTimer = setTimeout(() => this.close(LIVE_CLOSE.unauthorized, "Unauthorized: no auth frame in time"), this.settings.authTimeoutMs);
  }

  private enqueue(job: () => Promise<void>): void {
    // Each job in a task of its own: frames that queued up behind a slow step (an opening that
    // reads the state of a long conversation) would otherwise run back to back as microtasks once
    // it ends, and a flood of them would hold the event loop (as the ws option above prevents for
    // frames that arrive together).
    this.work = this.work.then(() => nextTask()).then(job).catch((error: unknown) => {
      this.options.log.error({ err: error, conversationId: this.conversation?.id ?? this.rawConversationId }, "live channel: unexpected failure");
      this.close(LIVE_CLOSE.tryAgainLater, "Internal error, try again later");
    });
  }

  heartbeat(): void {
    if (this.phase === "closed") return;
    if (!this.alive) return this.terminate();
    this.alive = false;
    this.ws.ping();
  }

  close(code: number, reason: string): void {
    if (this.phase === "closed") return;
    this.phase = "closed";
    this.unsubscribe?.();
    this.unsubscribeTransient?.();
    this.uncount();
    clearTimeout(this.authTimer);
    this.ws.close(code, reason);
  }

  terminate(): void {
    this.phase = "closed";
    this.ws.terminate();
  }

  onClosed(listener: () => void): void {
    if (this.ws.readyState === this.ws.CLOSED) listener();
    else this.closeListeners.push(listener);
  }

  /** Authenticated (or a public reader): resolve the conversation and the starting point, then stream. */
  private async open(): Promise<void> {
    clearTimeout(this.authTimer);
    if (this.phase !== "auth") return;
    this.phase = "opening";
    const { store, bus } = this.options;
    const id = canonicalConversationId(this.rawConversationId);
    const conversation = id === undefined ? undefined : await store.getConversation(id);
    if (this.isClosed()) return;
    if (!conversation) return this.close(LIVE_CLOSE.notFound, truncateReason(`Conversation not found: ${this.rawConversationId}`));
    this.conversation = conversation;

    const badParameter = await this.startingPoint(conversation);
    if (this.isClosed()) return;
    if (badParameter !== undefined) return this.close(LIVE_CLOSE.badRequest, truncateReason(badParameter));
    if (!this.settings.subscribers.add(conversation.id)) {
      this.options.log.warn({ conversationId: conversation.id, limit: this.settings.subscribers.limit }, "live channel: too many connections for this conversation, refused");
      return this.close(LIVE_CLOSE.tryAgainLater, "Too many connections for this conversation");
    }
    this.counted = true;

    this.phase = "catch-up";
    // Subscribed before anything is read: while catching up the listener only notes what was published.
    this.unsubscribe = bus.subscribe(conversation.id, (events) => this.onLive(events));
    // As the agent server: transient frames go out at once, even between replayed events.
    this.unsubscribeTransient = bus.subscribeTransient(conversation.id, (event) => {
      if (this.phase === "catch-up" || this.phase === "live") this.send(JSON.stringify(event));
    });
    const fullState = await this.options.conversations.fullState(conversation);
    if (this.isClosed()) return;
    this.send(JSON.stringify(fullState));
    this.options.log.info({ conversationId: conversation.id, from: this.lastSeq, canWrite: this.canWrite }, "live connection opened");
    void this.catchUp();
  }

  /** Whether the connection closed (a method may have set phase: TypeScript's narrowing does not see that). */
  private isClosed(): boolean {
    return this.phase === "closed";
  }

  /**
   * Where the stream starts, from the query (spec/asyncapi.yaml): `after_id` (everything appended
   * after that event) wins; then `resend_mode` (`all`: everything; `since`: the events whose
   * timestamp is at or after `after_timestamp`, nothing without one), which wins over the older
   * `resend_all`; else only what comes next. Returns the close reason of a bad parameter.
   */
  private async startingPoint(conversation: ConversationRecord): Promise<string | undefined> {
    const query = this.url.searchParams;
    const resendAll = query.get("resend_all");
    if (resendAll !== null && !/^(true|false|1|0)$/i.test(resendAll)) return "resend_all must be true or false";
    const resendMode = query.get("resend_mode");
    if (resendMode !== null && resendMode !== "all" && resendMode !== "since") return "resend_mode must be all or since";
    const afterTimestamp = query.get("after_timestamp");
    const from = afterTimestamp === null ? undefined : instantMicros(afterTimestamp);
    if (afterTimestamp !== null && from === undefined) return `after_timestamp must be ${instantError(afterTimestamp)}`;
    const afterId = query.get("after_id");
    this.lastSeq = conversation.eventCount; // seqs run from 1 without gaps: only what comes next
    if (afterId !== null) {
      const position = await this.options.store.positionOf(conversation.id, afterId);
      if (!position) return `after_id ${afterId} is not an event of this conversation`;
      this.lastSeq = position.seq;
      this.lastId = afterId;
    } else if (resendMode === "all" || (resendMode === null && resendAll !== null && /^(true|1)$/i.test(resendAll))) {
      this.lastSeq = 0;
    } else if (resendMode === "since") {
      if (from !== undefined) this.since = { from, end: conversation.eventCount };
      else this.options.log.warn({ conversationId: conversation.id }, "live channel: resend_mode=since without after_timestamp replays nothing");
    }
    return undefined;
  }

  private uncount(): void {
    if (this.counted) this.settings.subscribers.remove(this.conversation.id);
    this.counted = false;
  }

  /**
   * Sends the `since` replay, then stored events after `lastSeq` page by page, waiting while the
   * socket's buffer is full.
   */
  private async catchUp(): Promise<void> {
    try {
      if (this.phase !== "catch-up") return;
      if (this.ws.bufferedAmount > this.settings.maxBufferedBytes / 4) {
        setTimeout(() => void this.catchUp(), 5);
        return;
      }
      if (this.since) {
        await this.replaySince(this.since);
        setImmediate(() => void this.catchUp());
        return;
      }
      const limit = (this.catchUpLimit ||= this.settings.replayPageSize);
      const page = await this.options.store.readAfter(this.conversation.id, this.lastSeq, limit);
      if (this.isClosed()) return;
      const bytes = this.deliverPage(page);
      this.catchUpLimit = Math.min(this.settings.replayPageSize, Math.max(1, Math.floor((limit * CATCH_UP_PAGE_BYTES) / Math.max(1, bytes))));
      // A short page, and nothing published past it while it was read: the store has nothing more
      // to give, and whatever it stores next reaches the listener, which is live from now on (in
      // the tick in which the page resolved). Otherwise read again.
      if (page.length < limit && this.publishedDuringCatchUp <= this.lastSeq) this.phase = "live";
      // One page per task: a long catch-up never holds the event loop.
      else setImmediate(() => void this.catchUp());
    } catch (error) {
      this.options.log.error({ err: error, conversationId: this.conversation.id }, "live channel: reading stored events failed");
      this.close(LIVE_CLOSE.tryAgainLater, "Internal error, try again later");
    }
  }

  /**
   * One page of the `since` replay: stored events at or after its instant, in search order, that
   * were stored when the connection opened (later ones come in append order after it, like live
   * events). Then catch-up goes on from the end of that history.
   */
  private async replaySince(since: SinceReplay): Promise<void> {
    const page = await this.options.store.search(this.conversation.id, { order: "asc", limit: SINCE_PAGE, timestampGte: since.from, after: since.after });
    this.deliverPage(page.items.filter((event) => event.seq <= since.end));
    const last = page.items[page.items.length - 1];
    if (last) since.after = { ts: last.ts, seq: last.seq };
    if (!page.hasMore) {
      this.since = undefined;
      this.lastSeq = since.end;
    }
  }

  private onLive(events: readonly StoredEvent[]): void {
    if (this.phase !== "live") {
      // Catching up: the store will give these (they are stored before they are published).
      this.publishedDuringCatchUp = Math.max(this.publishedDuringCatchUp, events[events.length - 1]!.seq);
      return;
    }
    const next = events.find((event) => event.seq > this.lastSeq);
    if (next && next.seq > this.lastSeq + 1) {
      // A gap: events between were stored but published elsewhere first (another instance's, its
      // notification not yet read). The store has them: catch up from it, then follow again.
      this.options.log.debug({ conversationId: this.conversation.id, after: this.lastSeq, next: next.seq }, "live channel: a gap in published events, reading it from the store");
      this.phase = "catch-up";
      this.publishedDuringCatchUp = Math.max(this.publishedDuringCatchUp, events[events.length - 1]!.seq);
      void this.catchUp();
      return;
    }
    for (const event of events) {
      if (event.seq <= this.lastSeq) continue;
      this.lastSeq = event.seq;
      this.lastId = event.id;
      this.sent++;
      if (this.ws.readyState === this.ws.OPEN) this.live.write(this.socket, this.live.frame(event));
    }
    if (this.ws.bufferedAmount > this.settings.maxBufferedBytes) {
      this.options.log.warn({ conversationId: this.conversation.id, buffered: this.ws.bufferedAmount }, "live connection too slow, closed");
      this.close(LIVE_CLOSE.slowConsumer, truncateReason(`slow consumer: reconnect with after_id=${this.lastId ?? ""}`));
    }
  }

  /**
   * A page of stored events (catch-up pages are this connection's own): framed here and written
   * in the turn's one write to the socket (a `ws.send` each was a system call each: 500 of them
   * held the event loop for tens of milliseconds). Returns the bytes written.
   */
  private deliverPage(page: readonly StoredEvent[]): number {
    let bytes = 0;
    for (const event of page) {
      this.lastSeq = event.seq;
      this.lastId = event.id;
      this.sent++;
      if (this.ws.readyState !== this.ws.OPEN) continue;
      const frame = textFrame(event.json);
      bytes += frame.length;
      this.live.write(this.socket, frame);
    }
    return bytes;
  }

  /** A text frame (a Buffer is sent as text too: it holds the UTF-8 of the JSON). */
  private send(payload: string | Buffer): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(payload, { binary: false });
  }

  /**
   * Answers an inbound frame it could not accept as the OpenHands agent server does (release
   * 1.16.0): a ServerErrorEvent to this socket only, never stored; `code` names what went wrong,
   * `detail` what and where (`message.role: …`). Error frames answer what the client sends, so a
   * client that sends and never reads would grow them without bound: past maxBufferedBytes of
   * unsent data it is closed with 4429, as a slow consumer of live events is.
   */
  private sendError(code: ServerErrorCode, detail: ValidationError[]): void {
    const event: ServerErrorEvent = {
      id: randomUUID(),
      timestamp: recordedTimestamp(),
      source: "environment",
      code,
      detail: detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "),
      kind: "ServerErrorEvent",
    };
    this.send(JSON.stringify(event));
    if (this.ws.bufferedAmount > this.settings.maxBufferedBytes) {
      this.options.log.warn({ conversationId: this.conversation?.id ?? this.rawConversationId, buffered: this.ws.bufferedAmount }, "live connection does not read its error frames, closed");
      this.close(LIVE_CLOSE.slowConsumer, truncateReason(`slow consumer: reconnect with after_id=${this.lastId ?? ""}`));
    }
  }

  private async onFrame(data: RawData, isBinary: boolean): Promise<void> {
    if (this.phase === "closed") return;
    const text = isBinary ? undefined : rawText(data);
    let frame: unknown;
    let parseError: ValidationError | undefined;
    if (text === undefined) parseError = { loc: ["message"], msg: "binary frames are not accepted: send JSON text", type: "json_invalid" };
    else {
      try {
        frame = parseJsonText(text, ["message"]);
      } catch (error) {
        if (!(error instanceof RequestValidationError)) throw error;
        parseError = error.detail[0]; // where the text is broken, never a piece of it (it may hold a key)
      }
    }
    const isAuth = typeof frame === "object" && frame !== null && (frame as { type?: unknown }).type === "auth";

    if (this.phase === "auth") {
      const key = isAuth ? (frame as { session_api_key?: unknown }).session_api_key : undefined;
      if (typeof key !== "string" || !this.checkKey(key)) return this.close(LIVE_CLOSE.unauthorized, "Unauthorized");
      this.canWrite = true;
      return this.open();
    }
    if (this.phase !== "catch-up" && this.phase !== "live") return; // closed while opening
    if (parseError !== undefined) return this.sendError("JSONDecodeError", [parseError]);
    if (isAuth) {
      // A public reader may authenticate later to send messages; a wrong key ends the connection.
      const key = (frame as { session_api_key?: unknown }).session_api_key;
      if (typeof key !== "string" || !this.checkKey(key)) return this.close(LIVE_CLOSE.unauthorized, "Unauthorized");
      this.canWrite = true;
      return;
    }
    if (!this.canWrite) {
      return this.sendError("Unauthorized", [{ loc: ["message"], msg: "send an auth frame with a session API key before sending messages", type: "unauthorized" }]);
    }
    try {
      this.validators.body("sendMessage", frame);
      // A message on the socket always runs the agent (the agent server's rule; over HTTP only with run: true).
      // Not awaited: under the agent a message sent during a step is answered when the step ends,
      // and the frames after it are not held that long. Messages still go in in arrival order (the
      // service queues each conversation's writes as they are called).
      this.options.conversations.deliverMessage(this.conversation.id, frame as UserMessage, { run: true }).catch((error: unknown) => this.messageFailed(error));
    } catch (error) {
      this.messageFailed(error);
    }
  }

  /** Answers a message the server could not record (on this socket only). */
  private messageFailed(error: unknown): void {
    if (error instanceof RequestValidationError) {
      return this.sendError("ValidationError", error.detail.map((d) => ({ ...d, loc: ["message", ...d.loc.slice(1)] })));
    }
    if (error instanceof TooManyMessagesError) {
      return this.sendError("TooManyRequests", [{ loc: ["message"], msg: `${error.limit} messages to this conversation are waiting to be recorded; send this one again later`, type: "too_many_requests" }]);
    }
    const full = storageFullCause(error);
    if (full !== undefined) {
      this.options.writeHealth?.failed(full);
      this.options.log.warn({ cause: full, conversationId: this.conversation.id }, "live channel: recording a message failed: the disk is full");
      return this.sendError("InsufficientStorage", [{ loc: ["message"], msg: `the message could not be recorded: the server's disk is full (${full}); send it again once space is freed`, type: "insufficient_storage" }]);
    }
    this.options.log.error({ err: error, conversationId: this.conversation.id }, "live channel: recording a message failed");
    this.sendError("InternalError", [{ loc: ["message"], msg: "the message could not be recorded", type: "internal_error" }]);
  }
}

/** The path and query of an upgrade's request target. */
interface UpgradeTarget {
  pathname: string;
  searchParams: URLSearchParams;
}

/**
 * The path and query of a request target in origin form (`/path?query`) or absolute form
 * (`http://host/path`); undefined for anything else (`*`, a URL that does not parse). Never throws.
 */
function upgradeTarget(raw: string): UpgradeTarget | undefined {
  if (raw.startsWith("/")) {
    const query = raw.indexOf("?");
    return { pathname: query === -1 ? raw : raw.slice(0, query), searchParams: new URLSearchParams(query === -1 ? "" : raw.slice(query + 1)) };
  }
  if (!URL.canParse(raw) || !/^https?:/i.test(raw)) return undefined;
  const url = new URL(raw);
  return { pathname: url.pathname, searchParams: url.searchParams };
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data as ArrayBuffer).toString("utf8");
}

/** Close reasons are limited to 123 bytes by the protocol. */
function truncateReason(reason: string): string {
  const bytes = Buffer.from(reason);
  return bytes.length <= 123 ? reason : bytes.subarray(0, 120).toString("utf8").replace(/\uFFFD$/, "") + "…";
}
