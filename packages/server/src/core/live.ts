/**
 * The live channel's protocol, `/sockets/events/{conversation_id}` (spec/asyncapi.yaml), on any
 * transport: {@link LiveSession} is one connection's state (authentication, starting point,
 * `full_state`, catch-up and live events, inbound frames, error frames, close codes) and a
 * {@link LiveTransport} carries its frames (the reference server's `ws` sockets, live/channel.ts;
 * the mock's MSW WebSocket links in a browser).
 *
 * Exactly once, in order: a session subscribes to the bus, then reads stored events from the store
 * in append order (pages of `replayPageSize`, paced by the transport's buffer), and switches to the
 * bus once a page comes back short and nothing was published past what it has sent while that page
 * was read. Events are published after they are stored, in append order (ConversationCore
 * serializes each conversation's writes), so an event published during catch-up is in the store: if
 * one is past the last event sent, catch-up reads again instead of switching, and no event can fall
 * between the two. A sequence number guard drops anything already sent.
 */
import { LIVE_CLOSE_CODES, type ServerErrorEvent, type UserMessage, type ValidationError } from "@acs-toolkit/schema";
import { instantError, instantMicros } from "@acs-toolkit/schema/search";
import type { ConversationRecord, EventStore, Position, StoredEvent } from "../store/types.js";
import { recordedTimestamp } from "../store/time.js";
import type { EventBus } from "./bus.js";
import { canonicalConversationId, checkUserMessage, TooManyMessagesError, type ConversationCore } from "./conversations.js";
import { RequestValidationError } from "./errors.js";
import { nextTask } from "./tasks.js";

/** Close codes of the live channel: `LIVE_CLOSE_CODES`, generated from `x-close-codes` in spec/asyncapi.yaml. */
export const LIVE_CLOSE = LIVE_CLOSE_CODES;

/**
 * The `code` of a ServerErrorEvent answering an inbound frame: the agent server's exception class
 * names where they apply (JSONDecodeError, ValidationError), this toolkit's own cases otherwise.
 */
export type ServerErrorCode = "JSONDecodeError" | "ValidationError" | "Unauthorized" | "TooManyRequests" | "InsufficientStorage" | "InternalError";

/** Where a session reports what happens (pino's methods in the server; the console, or nothing, in a browser). */
export interface LiveLog {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** What carries a {@link LiveSession}'s frames: one connection of a WebSocket server or of a mock. */
export interface LiveTransport {
  /** Sends a text frame: `full_state`, a transient state update, an error frame. */
  send(text: string): void;
  /**
   * Sends a stored event as a text frame (its `json`): from a catch-up page (`live` false) or from
   * the bus (`live` true: the same StoredEvent objects reach every subscriber, which a transport may
   * frame once for all).
   */
  sendEvent(event: StoredEvent, live: boolean): void;
  /** Closes the connection (`reason` already at most 123 bytes of UTF-8). */
  close(code: number, reason: string): void;
  /** Bytes waiting to be sent (0 when the transport does not know): catch-up waits, a slow consumer is closed. */
  bufferedAmount(): number;
}

/** What a {@link LiveSession} works with, shared by every session of a channel. */
export interface LiveSessionOptions {
  store: EventStore;
  bus: EventBus;
  conversations: ConversationCore;
  /** Whether a presented session API key is accepted. */
  checkKey(presented: string | undefined): boolean;
  /** Serve events without a key (sending messages still needs one). */
  publicRead: boolean;
  log?: LiveLog;
  /** How long a connection without a key may take to send its auth frame. Default 5,000 ms. */
  authTimeoutMs?: number;
  /** Bound of a connection's unsent bytes while it follows live events; past it: close 4429. Default: none. */
  maxBufferedBytes?: number;
  /** Events read from the store per step while catching up. Default 500. */
  replayPageSize?: number;
  /**
   * Parses an inbound text frame. Default `JSON.parse`, a failure reported as `message: is not valid
   * JSON`. @throws RequestValidationError (loc under `["message"]`)
   */
  parse?(text: string): unknown;
  /**
   * Checks a message frame before it is delivered (the server: SendMessageRequest, by AJV). Default
   * {@link checkUserMessage}. @throws RequestValidationError (loc under `["body"]` or `["message"]`)
   */
  checkMessage?(frame: unknown): void;
  /** Admits one more streaming session of a conversation, or refuses it (closed 1013). Default: always. */
  admit?(conversationId: string): boolean;
  /** A session that `admit` counted has ended. */
  release?(conversationId: string): void;
  /**
   * An error frame for a message that could not be recorded, for failures the core does not know
   * (the server's full disk); undefined for the default (`InternalError`).
   */
  describeFailure?(error: unknown, conversationId: string): { code: ServerErrorCode; detail: ValidationError } | undefined;
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

/** Where a session stands: waiting for its auth frame, catching up from the store, or following the bus. */
export type LivePhase = "auth" | "opening" | "catch-up" | "live" | "closed";

/** Events read per step of a `resend_mode=since` replay (a search page). */
const SINCE_PAGE = 100;

/**
 * The bytes (of JSON text) a catch-up page aims at: after a page of large events the next asks for
 * fewer, so one step (a read, and one write of its frames) stays short whatever the events' size.
 */
export const CATCH_UP_PAGE_BYTES = 512 * 1024;

const NO_LOG: LiveLog = { debug() {}, info() {}, warn() {}, error() {} };

/** Close reasons are limited to 123 bytes of UTF-8 by the protocol (RFC 6455). */
export function truncateReason(reason: string): string {
  const bytes = new TextEncoder().encode(reason);
  return bytes.length <= 123 ? reason : new TextDecoder().decode(bytes.subarray(0, 120)).replace(/\uFFFD$/, "") + "…";
}

/**
 * One connection of the live channel, on a {@link LiveTransport}. The transport calls
 * {@link LiveSession.start} once with the key the connection presented (a header or the query), then
 * {@link LiveSession.receive} for each inbound frame and {@link LiveSession.closed} when the peer
 * has gone.
 */
export class LiveSession {
  private state: LivePhase = "auth";
  /** May send messages (a key was presented); public readers may only read. */
  private canWrite = false;
  private conversation?: ConversationRecord;
  /** Append order of the last event sent. */
  private lastSeq = 0;
  private id: string | null = null;
  private count = 0;
  private unsubscribe?: () => void;
  private unsubscribeTransient?: () => void;
  private unsubscribeEnd?: () => void;
  /** Set while the session counts against its conversation's bound (`admit`). */
  private counted = false;
  /** The `resend_mode=since` replay still to send before catching up in append order. */
  private since?: SinceReplay;
  private authTimer?: ReturnType<typeof setTimeout>;
  /** The newest seq published on the bus while catching up (see the module comment). */
  private publishedDuringCatchUp = 0;
  /**
   * Inbound frames and the opening, one at a time in arrival order: messages are recorded in the
   * order they were sent, and none is handled before the connection is open.
   */
  private work: Promise<void> = Promise.resolve();
  private readonly log: LiveLog;
  private readonly maxBufferedBytes: number;
  /** Events the next catch-up page asks for: replayPageSize, fewer after a page of large events. */
  private catchUpLimit = 0;
  private readonly replayPageSize: number;

  /**
   * @param rawConversationId the path's conversation id, percent-decoded
   * @param query the request's query (`resend_all`, `resend_mode`, `after_timestamp`, `after_id`)
   */
  constructor(
    private readonly transport: LiveTransport,
    private readonly rawConversationId: string,
    private readonly query: URLSearchParams,
    private readonly options: LiveSessionOptions,
  ) {
    this.log = options.log ?? NO_LOG;
    this.maxBufferedBytes = options.maxBufferedBytes ?? Infinity;
    this.replayPageSize = options.replayPageSize ?? 500;
  }

  /** Where the session stands. */
  get phase(): LivePhase {
    return this.state;
  }

  /** The conversation's id once it is open, else the one asked for. */
  get conversationId(): string {
    return this.conversation?.id ?? this.rawConversationId;
  }

  /** Events sent. */
  get sent(): number {
    return this.count;
  }

  /** The id of the last event sent (what `after_id` takes to resume), null before the first. */
  get lastId(): string | null {
    return this.id;
  }

  /**
   * Opens the session: with a key (`presented`), checked, it may send messages; without one it is
   * a public reader when the channel allows it, else it has `authTimeoutMs` to send an auth frame.
   */
  start(presented: string | undefined): void {
    if (presented !== undefined) {
      if (!this.options.checkKey(presented)) return this.close(LIVE_CLOSE.unauthorized, "Unauthorized");
      this.canWrite = true;
      return this.enqueue(() => this.open());
    }
    if (this.options.publicRead) return this.enqueue(() => this.open());
    this.authTimer = setTimeout(() => this.close(LIVE_CLOSE.unauthorized, "Unauthorized: no auth frame in time"), this.options.authTimeoutMs ?? 5_000);
  }

  /** An inbound frame: its text, or undefined for a binary frame (refused). */
  receive(text: string | undefined): void {
    this.enqueue(() => this.onFrame(text));
  }

  private enqueue(job: () => Promise<void>): void {
    // Each job in a task of its own: frames that queued up behind a slow step (an opening that
    // reads the state of a long conversation) would otherwise run back to back as microtasks once
    // it ends, and a flood of them would hold the event loop.
    this.work = this.work.then(() => nextTask()).then(job).catch((error: unknown) => {
      this.log.error({ err: error, conversationId: this.conversationId }, "live channel: unexpected failure");
      this.close(LIVE_CLOSE.tryAgainLater, "Internal error, try again later");
    });
  }

  /** The peer has gone (or the transport closed): stops following the conversation. Idempotent. */
  closed(): void {
    this.state = "closed";
    // Once: a later call (the transport's close event after `close`) must not unsubscribe again.
    const unsubscribe = [this.unsubscribe, this.unsubscribeTransient, this.unsubscribeEnd];
    this.unsubscribe = this.unsubscribeTransient = this.unsubscribeEnd = undefined;
    for (const stop of unsubscribe) stop?.();
    this.uncount();
    clearTimeout(this.authTimer);
  }

  /** Closes the connection with `code` and `reason` (truncated to 123 bytes). */
  close(code: number, reason: string): void {
    if (this.state === "closed") return;
    this.closed();
    this.transport.close(code, truncateReason(reason));
  }

  /** Whether the session closed (a method may have set the phase: TypeScript's narrowing does not see that). */
  private isClosed(): boolean {
    return this.state === "closed";
  }

  /** Authenticated (or a public reader): resolve the conversation and the starting point, then stream. */
  private async open(): Promise<void> {
    clearTimeout(this.authTimer);
    if (this.state !== "auth") return;
    this.state = "opening";
    const { store, bus } = this.options;
    const id = canonicalConversationId(this.rawConversationId);
    const conversation = id === undefined ? undefined : await store.getConversation(id);
    if (this.isClosed()) return;
    if (!conversation) return this.close(LIVE_CLOSE.notFound, `Conversation not found: ${this.rawConversationId}`);
    this.conversation = conversation;

    const badParameter = await this.startingPoint(conversation);
    if (this.isClosed()) return;
    if (badParameter !== undefined) return this.close(LIVE_CLOSE.badRequest, badParameter);
    if (this.options.admit && !this.options.admit(conversation.id)) return this.close(LIVE_CLOSE.tryAgainLater, "Too many connections for this conversation");
    this.counted = true;

    this.state = "catch-up";
    // Subscribed before anything is read: while catching up the listener only notes what was published.
    this.unsubscribe = bus.subscribe(conversation.id, (events) => this.onLive(events));
    // As the agent server: transient frames go out at once, even between replayed events.
    this.unsubscribeTransient = bus.subscribeTransient(conversation.id, (event) => {
      if (this.state === "catch-up" || this.state === "live") this.transport.send(JSON.stringify(event));
    });
    // A deleted conversation closes its connections as one that never existed would have been.
    this.unsubscribeEnd = bus.subscribeEnd(conversation.id, () => this.close(LIVE_CLOSE.notFound, `Conversation deleted: ${conversation.id}`));
    const fullState = await this.options.conversations.fullState(conversation);
    if (this.isClosed()) return;
    this.transport.send(JSON.stringify(fullState));
    this.log.info({ conversationId: conversation.id, from: this.lastSeq, canWrite: this.canWrite }, "live connection opened");
    void this.catchUp();
  }

  /**
   * Where the stream starts, from the query (spec/asyncapi.yaml): `after_id` (everything appended
   * after that event) wins; then `resend_mode` (`all`: everything; `since`: the events whose
   * timestamp is at or after `after_timestamp`, nothing without one), which wins over the older
   * `resend_all`; else only what comes next. Returns the close reason of a bad parameter.
   */
  private async startingPoint(conversation: ConversationRecord): Promise<string | undefined> {
    const query = this.query;
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
      this.id = afterId;
    } else if (resendMode === "all" || (resendMode === null && resendAll !== null && /^(true|1)$/i.test(resendAll))) {
      this.lastSeq = 0;
    } else if (resendMode === "since") {
      if (from !== undefined) this.since = { from, end: conversation.eventCount };
      else this.log.warn({ conversationId: conversation.id }, "live channel: resend_mode=since without after_timestamp replays nothing");
    }
    return undefined;
  }

  private uncount(): void {
    if (this.counted && this.conversation) this.options.release?.(this.conversation.id);
    this.counted = false;
  }

  /**
   * Sends the `since` replay, then stored events after `lastSeq` page by page, waiting while the
   * transport's buffer is full.
   */
  private async catchUp(): Promise<void> {
    const conversation = this.conversation!;
    try {
      if (this.state !== "catch-up") return;
      if (this.transport.bufferedAmount() > this.maxBufferedBytes / 4) {
        setTimeout(() => void this.catchUp(), 5);
        return;
      }
      if (this.since) {
        await this.replaySince(conversation, this.since);
        void nextTask().then(() => this.catchUp());
        return;
      }
      const limit = (this.catchUpLimit ||= this.replayPageSize);
      const page = await this.options.store.readAfter(conversation.id, this.lastSeq, limit);
      if (this.isClosed()) return;
      let bytes = 0;
      for (const event of page) {
        this.deliver(event);
        bytes += event.json.length;
      }
      this.catchUpLimit = Math.min(this.replayPageSize, Math.max(1, Math.floor((limit * CATCH_UP_PAGE_BYTES) / Math.max(1, bytes))));
      // A short page, and nothing published past it while it was read: the store has nothing more
      // to give, and whatever it stores next reaches the listener, which is live from now on (in
      // the tick in which the page resolved). Otherwise read again.
      if (page.length < limit && this.publishedDuringCatchUp <= this.lastSeq) this.state = "live";
      // One page per task: a long catch-up never holds the event loop.
      else void nextTask().then(() => this.catchUp());
    } catch (error) {
      this.log.error({ err: error, conversationId: conversation.id }, "live channel: reading stored events failed");
      this.close(LIVE_CLOSE.tryAgainLater, "Internal error, try again later");
    }
  }

  /**
   * One page of the `since` replay: stored events at or after its instant, in search order, that
   * were stored when the connection opened (later ones come in append order after it, like live
   * events). Then catch-up goes on from the end of that history.
   */
  private async replaySince(conversation: ConversationRecord, since: SinceReplay): Promise<void> {
    const page = await this.options.store.search(conversation.id, { order: "asc", limit: SINCE_PAGE, timestampGte: since.from, after: since.after });
    for (const event of page.items) if (event.seq <= since.end) this.deliver(event);
    const last = page.items[page.items.length - 1];
    if (last) since.after = { ts: last.ts, seq: last.seq };
    if (!page.hasMore) {
      this.since = undefined;
      this.lastSeq = since.end;
    }
  }

  private onLive(events: readonly StoredEvent[]): void {
    if (this.state !== "live") {
      // Catching up: the store will give these (they are stored before they are published).
      this.publishedDuringCatchUp = Math.max(this.publishedDuringCatchUp, events[events.length - 1]?.seq ?? 0);
      return;
    }
    // A loop, not events.find: this runs for every subscriber of every append.
    let next: StoredEvent | undefined;
    for (const event of events) {
      if (event.seq > this.lastSeq) {
        next = event;
        break;
      }
    }
    if (next && next.seq > this.lastSeq + 1) {
      // A gap: events between were stored but published elsewhere first (another instance's, its
      // notification not yet read). The store has them: catch up from it, then follow again.
      this.log.debug({ conversationId: this.conversationId, after: this.lastSeq, next: next.seq }, "live channel: a gap in published events, reading it from the store");
      this.state = "catch-up";
      this.publishedDuringCatchUp = Math.max(this.publishedDuringCatchUp, events[events.length - 1]!.seq);
      void this.catchUp();
      return;
    }
    for (const event of events) {
      if (event.seq <= this.lastSeq) continue;
      this.lastSeq = event.seq;
      this.id = event.id;
      this.count++;
      this.transport.sendEvent(event, true);
    }
    if (this.transport.bufferedAmount() > this.maxBufferedBytes) {
      this.log.warn({ conversationId: this.conversationId, buffered: this.transport.bufferedAmount() }, "live connection too slow, closed");
      this.close(LIVE_CLOSE.slowConsumer, `slow consumer: reconnect with after_id=${this.id ?? ""}`);
    }
  }

  /** A stored event from a catch-up page (this session's own). */
  private deliver(event: StoredEvent): void {
    this.lastSeq = event.seq;
    this.id = event.id;
    this.count++;
    this.transport.sendEvent(event, false);
  }

  /**
   * Answers an inbound frame it could not accept as the OpenHands agent server does (release
   * 1.16.0): a ServerErrorEvent to this connection only, never stored; `code` names what went wrong,
   * `detail` what and where (`message.role: …`). Error frames answer what the client sends, so a
   * client that sends and never reads would grow them without bound: past maxBufferedBytes of
   * unsent data it is closed with 4429, as a slow consumer of live events is.
   */
  private sendError(code: ServerErrorCode, detail: ValidationError[]): void {
    const event: ServerErrorEvent = {
      id: crypto.randomUUID(),
      timestamp: recordedTimestamp(),
      source: "environment",
      code,
      detail: detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "),
      kind: "ServerErrorEvent",
    };
    this.transport.send(JSON.stringify(event));
    if (this.transport.bufferedAmount() > this.maxBufferedBytes) {
      this.log.warn({ conversationId: this.conversationId, buffered: this.transport.bufferedAmount() }, "live connection does not read its error frames, closed");
      this.close(LIVE_CLOSE.slowConsumer, `slow consumer: reconnect with after_id=${this.id ?? ""}`);
    }
  }

  private parse(text: string): unknown {
    if (this.options.parse) return this.options.parse(text);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new RequestValidationError([{ loc: ["message"], msg: "is not valid JSON", type: "json_invalid" }]);
    }
  }

  private async onFrame(text: string | undefined): Promise<void> {
    if (this.state === "closed") return;
    let frame: unknown;
    let parseError: ValidationError | undefined;
    if (text === undefined) parseError = { loc: ["message"], msg: "binary frames are not accepted: send JSON text", type: "json_invalid" };
    else {
      try {
        frame = this.parse(text);
      } catch (error) {
        if (!(error instanceof RequestValidationError)) throw error;
        parseError = error.detail[0]; // where the text is broken, never a piece of it (it may hold a key)
      }
    }
    const isAuth = typeof frame === "object" && frame !== null && (frame as { type?: unknown }).type === "auth";

    if (this.state === "auth") {
      const key = isAuth ? (frame as { session_api_key?: unknown }).session_api_key : undefined;
      if (typeof key !== "string" || !this.options.checkKey(key)) return this.close(LIVE_CLOSE.unauthorized, "Unauthorized");
      this.canWrite = true;
      return this.open();
    }
    if (this.state !== "catch-up" && this.state !== "live") return; // closed while opening
    if (parseError !== undefined) return this.sendError("JSONDecodeError", [parseError]);
    if (isAuth) {
      // A public reader may authenticate later to send messages; a wrong key ends the connection.
      const key = (frame as { session_api_key?: unknown }).session_api_key;
      if (typeof key !== "string" || !this.options.checkKey(key)) return this.close(LIVE_CLOSE.unauthorized, "Unauthorized");
      this.canWrite = true;
      return;
    }
    if (!this.canWrite) {
      return this.sendError("Unauthorized", [{ loc: ["message"], msg: "send an auth frame with a session API key before sending messages", type: "unauthorized" }]);
    }
    const conversationId = this.conversation!.id;
    try {
      if (this.options.checkMessage) this.options.checkMessage(frame);
      else checkUserMessage(frame, ["message"]);
      // A message on the socket always runs the agent (the agent server's rule; over HTTP only with run: true).
      // Not awaited: under the agent a message sent during a step is answered when the step ends,
      // and the frames after it are not held that long. Messages still go in in arrival order (the
      // service queues each conversation's writes as they are called).
      this.options.conversations.deliverMessage(conversationId, frame as UserMessage, { run: true }).catch((error: unknown) => this.messageFailed(error, conversationId));
    } catch (error) {
      this.messageFailed(error, conversationId);
    }
  }

  /** Answers a message that could not be recorded (on this connection only). */
  private messageFailed(error: unknown, conversationId: string): void {
    if (error instanceof RequestValidationError) {
      return this.sendError("ValidationError", error.detail.map((d) => ({ ...d, loc: ["message", ...d.loc.slice(1)] })));
    }
    if (error instanceof TooManyMessagesError) {
      return this.sendError("TooManyRequests", [{ loc: ["message"], msg: `${error.limit} messages to this conversation are waiting to be recorded; send this one again later`, type: "too_many_requests" }]);
    }
    const described = this.options.describeFailure?.(error, conversationId);
    if (described) return this.sendError(described.code, [described.detail]);
    this.log.error({ err: error, conversationId }, "live channel: recording a message failed");
    this.sendError("InternalError", [{ loc: ["message"], msg: "the message could not be recorded", type: "internal_error" }]);
  }
}
