/**
 * The live channel over WebSocket: `/sockets/events/{conversation_id}` (spec/asyncapi.yaml) on the
 * server's HTTP server, through `ws`. The protocol (authentication, starting point, `full_state`,
 * exactly-once catch-up then live events, inbound frames and error frames, close codes) is the
 * core's {@link LiveSession} (core/live.ts); this module carries it: upgrades and their refusals,
 * one `ws` connection per session, pings, a bound of connections per conversation, live events
 * framed once for every subscriber and written in turn batches (frame.ts), the AJV check of
 * message frames and the full-disk answer. Upgrades to `/sockets/bash-events` go to the bash-events
 * socket (bash-channel.ts) when the server gives its API, with the same pings and shutdown.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import type { EventBus } from "../core/bus.js";
import { CATCH_UP_PAGE_BYTES, LIVE_CLOSE, LiveSession, type LiveSessionOptions, type LiveTransport } from "../core/live.js";
import type { ConversationService } from "../conversation-service.js";
import type { RequestValidators } from "../validation/request-validators.js";
import { sharedRequestValidators } from "../validation/precompiled-validators.js";
import { createKeyCheck } from "../keys.js";
import { rejectSocket } from "../http/client-errors.js";
import { parseJsonText } from "../json/body.js";
import type { Logger } from "../log.js";
import type { EventStore, StoredEvent } from "../store/types.js";
import { storageFullCause, type WriteHealth } from "../write-health.js";
import { FanOutWriter, textFrame, type FanOutTarget } from "./frame.js";
import { BashConnection, type BashEventsHost } from "./bash-channel.js";
import { rawText } from "./ws-text.js";

export { CATCH_UP_PAGE_BYTES, LIVE_CLOSE };

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
  /**
   * Opens the bash-events socket (`/sockets/bash-events`) beside the live channel: the API whose
   * executeBashCommand it answers like. Absent: that path is a 404.
   */
  bashEvents?: BashEventsHost;
}

export interface LiveEvents {
  /** Connections open now. */
  readonly connections: number;
  /** Closes every connection with 1001 and stops accepting. Idempotent. */
  close(): Promise<void>;
}

const PATH = /^\/sockets\/events\/([^/?#]+)\/?$/;
const BASH_PATH = /^\/sockets\/bash-events\/?$/;

/** Attaches the live channel to an HTTP server (its `upgrade` requests on the channel's path). */
export function attachLiveEvents(http: Server, options: LiveEventsOptions): LiveEvents {
  const validators = options.validators ?? sharedRequestValidators(openapiDocument);
  const checkKey = createKeyCheck(options.keys);
  const subscribers = new SubscriberCounts(options.maxConnectionsPerConversation ?? DEFAULT_MAX_CONNECTIONS_PER_CONVERSATION);
  const session: LiveSessionOptions = {
    store: options.store,
    bus: options.bus,
    conversations: options.conversations,
    checkKey,
    publicRead: options.publicRead,
    log: options.log,
    authTimeoutMs: options.authTimeoutMs ?? 5_000,
    maxBufferedBytes: options.maxBufferedBytes ?? 4 * 1024 * 1024,
    replayPageSize: options.replayPageSize ?? 500,
    parse: (text) => parseJsonText(text, ["message"]),
    checkMessage: (frame) => validators.body("sendMessage", frame),
    admit: (conversationId) => {
      if (subscribers.add(conversationId)) return true;
      options.log.warn({ conversationId, limit: subscribers.limit }, "live channel: too many connections for this conversation, refused");
      return false;
    },
    release: (conversationId) => subscribers.remove(conversationId),
    describeFailure: (error, conversationId) => {
      const full = storageFullCause(error);
      if (full === undefined) return undefined;
      options.writeHealth?.failed(full);
      options.log.warn({ cause: full, conversationId }, "live channel: recording a message failed: the disk is full");
      return { code: "InsufficientStorage", detail: { loc: ["message"], msg: `the message could not be recorded: the server's disk is full (${full}); send it again once space is freed`, type: "insufficient_storage" } };
    },
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
  const live: LiveWrites = { frame, writer: new FanOutWriter() };
  const open = new Set<LiveConnection | BashConnection>();
  let closed = false;

  // Never throws (an exception here would end the process): every refusal is answered in JSON
  // and the socket closed.
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    try {
      const target = upgradeTarget(request.url ?? "");
      if (!target) return rejectSocket(socket, 400, "Bad Request: the request target is not a path");
      const bash = options.bashEvents && BASH_PATH.test(target.pathname) ? options.bashEvents : undefined;
      const match = PATH.exec(target.pathname);
      if (!match && !bash) return rejectSocket(socket, 404, "Not Found");
      let conversationId = "";
      try {
        if (match) conversationId = decodeURIComponent(match[1]!);
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
        if (bash) {
          const connection = new BashConnection(ws, request, target.searchParams, bash, options.log, options.authTimeoutMs ?? 5_000);
          open.add(connection);
          ws.once("close", () => open.delete(connection));
          return connection.start();
        }
        const connection = new LiveConnection(ws, socket, request, target, conversationId, options, session, live);
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
        for (const connection of open) connection.shutdown(LIVE_CLOSE.goingAway, "server shutting down");
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
  writer: FanOutWriter;
}

/**
 * A `ws` connection carrying a {@link LiveSession} (core/live.ts, the protocol): catch-up pages and
 * error frames through `ws.send`, live events framed once for every subscriber and written to the
 * socket directly (LiveWrites), pings, and the session's close codes.
 */
class LiveConnection implements LiveTransport, FanOutTarget {
  private alive = true;
  private readonly closeListeners: Array<() => void> = [];
  private readonly session: LiveSession;

  constructor(
    private readonly ws: WebSocket,
    /** The connection's socket, which live frames are written to directly (see LiveWrites). */
    readonly socket: Duplex,
    private readonly request: IncomingMessage,
    private readonly url: UpgradeTarget,
    rawConversationId: string,
    private readonly options: LiveEventsOptions,
    sessionOptions: LiveSessionOptions,
    private readonly live: LiveWrites,
  ) {
    this.session = new LiveSession(this, rawConversationId, url.searchParams, sessionOptions);
  }

  start(): void {
    const { ws, session } = this;
    ws.on("pong", () => (this.alive = true));
    ws.on("message", (data, isBinary) => session.receive(isBinary ? undefined : rawText(data)));
    ws.on("error", (error) => this.options.log.debug({ err: error.message }, "live connection error"));
    ws.once("close", (code) => {
      session.closed();
      this.options.log.info({ conversationId: session.conversationId, code, sent: session.sent }, "live connection closed");
      for (const listener of this.closeListeners.splice(0)) listener();
    });

    const header = this.request.headers["x-session-api-key"];
    const fromQuery = this.url.searchParams.get("session_api_key");
    if (fromQuery !== null) {
      this.options.log.warn({ path: this.url.pathname }, "live channel: session_api_key in the query string is deprecated (URLs leak into logs); send the X-Session-API-Key header or an auth frame");
    }
    session.start(typeof header === "string" ? header : (fromQuery ?? undefined));
  }

  heartbeat(): void {
    if (this.session.phase === "closed") return;
    if (!this.alive) return this.terminate();
    this.alive = false;
    this.ws.ping();
  }

  /** Closes the session and the socket (LiveTransport's close is the socket's alone). */
  shutdown(code: number, reason: string): void {
    this.session.close(code, reason);
  }

  terminate(): void {
    this.session.closed();
    this.ws.terminate();
  }

  onClosed(listener: () => void): void {
    if (this.ws.readyState === this.ws.CLOSED) listener();
    else this.closeListeners.push(listener);
  }

  /** FanOutTarget: held frames are written while the connection is open (not after its close frame). */
  writable(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  send(text: string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.live.writer.release(this); // after the frames held for this socket
    this.ws.send(text, { binary: false });
  }

  sendEvent(event: StoredEvent, live: boolean): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    // A live event is framed once for all; a catch-up page's events are this connection's own.
    // Either way the turn's frames leave in one write (a `ws.send` each was a system call each:
    // a page of 500 held the event loop for tens of milliseconds).
    if (live) this.live.writer.write(this, this.live.frame(event), true);
    else this.live.writer.write(this, textFrame(event.json), false);
  }

  close(code: number, reason: string): void {
    this.live.writer.release(this); // the close frame after the frames held for this socket
    this.ws.close(code, reason);
  }

  /** Bytes not yet sent: the socket's and ws's buffers, and the frames held for the next flush. */
  bufferedAmount(): number {
    return this.ws.bufferedAmount + this.live.writer.pending(this);
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
