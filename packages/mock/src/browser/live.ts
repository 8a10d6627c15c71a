/**
 * The live channel of the browser mock, `/sockets/events/{conversation_id}`, through MSW's WebSocket
 * API (`ws.link`): the reference server's protocol (server/src/live/channel.ts) on the browser
 * world. A `full_state` first; then the stored events from the starting point (`resend_all`,
 * `resend_mode=all`, `after_id`) and the live ones, each once, in append order; a key in the query
 * or an auth frame `{"type":"auth","session_api_key":…}` lets a client send messages, which the
 * scripted agent answers; a frame it cannot accept gets a ServerErrorEvent on this socket only;
 * the close codes are the spec's (LIVE_CLOSE_CODES).
 */
import { ws, type WebSocketHandler, type WebSocketHandlerConnection } from "msw";
import { LIVE_CLOSE_CODES, type ServerErrorEvent } from "@acs-toolkit/schema";
import { recordedTimestamp, type ConversationRecord, type StoredEvent } from "@acs-toolkit/server/store";
import { instantError, instantMicros } from "@acs-toolkit/validator";
import { canonicalId } from "./http.js";
import { BrowserValidationError, type BrowserWorld } from "./world.js";

/** How long a client without a key may take to send its auth frame (the server's default). */
const AUTH_TIMEOUT_MS = 5_000;
/** Stored events sent per step of a catch-up. */
const REPLAY_PAGE = 500;

type Client = WebSocketHandlerConnection["client"];
/** The `code`s of the ServerErrorEvents the server sends (live/channel.ts). */
type ServerErrorCode = "JSONDecodeError" | "ValidationError" | "Unauthorized" | "InternalError";

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The URL pattern of the live channel under `base` (`http(s)://host[/prefix]`, or `*` for any host). */
export function liveUrlPattern(base: string): RegExp {
  const origin = base === "*" ? "wss?://[^/]+" : escape(base.replace(/\/+$/, "").replace(/^http/, "ws"));
  return new RegExp(`^${origin}/sockets/events/([^/?#]+)(?:[?#]|$)`);
}

/** Close reasons are at most 123 bytes (RFC 6455). */
const truncateReason = (reason: string) => (new TextEncoder().encode(reason).length <= 123 ? reason : `${reason.slice(0, 118)}…`);

class BrowserLiveConnection {
  private phase: "auth" | "opening" | "catch-up" | "live" | "closed" = "auth";
  private canWrite = false;
  private conversation!: ConversationRecord;
  private lastSeq = 0;
  private unsubscribe?: () => void;
  private publishedDuringCatchUp = 0;
  private authTimer?: ReturnType<typeof setTimeout>;
  /** Inbound frames and the opening, one at a time in arrival order (messages go in as sent). */
  private work: Promise<void> = Promise.resolve();

  constructor(
    private readonly world: BrowserWorld,
    private readonly client: Client,
    private readonly rawConversationId: string,
  ) {}

  start(): void {
    this.client.addEventListener("message", (event) => this.enqueue(() => this.onFrame(event.data)));
    this.client.addEventListener("close", () => this.closed());
    const presented = this.client.url.searchParams.get("session_api_key");
    if (presented !== null) {
      if (!this.world.keys.includes(presented)) return this.close(LIVE_CLOSE_CODES.unauthorized, "Unauthorized");
      this.canWrite = true;
      return this.enqueue(() => this.open());
    }
    if (this.world.publicRead) return this.enqueue(() => this.open());
    this.authTimer = setTimeout(() => this.close(LIVE_CLOSE_CODES.unauthorized, "Unauthorized: no auth frame in time"), AUTH_TIMEOUT_MS);
  }

  private enqueue(job: () => Promise<void>): void {
    this.work = this.work.then(job).catch((error: unknown) => {
      console.error("acs-mock: live channel: unexpected failure", error);
      this.close(LIVE_CLOSE_CODES.tryAgainLater, "Internal error, try again later");
    });
  }

  private closed(): void {
    this.phase = "closed";
    this.unsubscribe?.();
    clearTimeout(this.authTimer);
  }

  private close(code: number, reason: string): void {
    if (this.phase === "closed") return;
    this.closed();
    this.client.close(code, truncateReason(reason));
  }

  private isClosed(): boolean {
    return this.phase === "closed";
  }

  private async open(): Promise<void> {
    clearTimeout(this.authTimer);
    if (this.phase !== "auth") return;
    this.phase = "opening";
    const { store, bus, conversations } = this.world;
    const id = canonicalId(this.rawConversationId);
    const conversation = id === undefined ? undefined : await store.getConversation(id);
    if (this.isClosed()) return;
    if (!conversation) return this.close(LIVE_CLOSE_CODES.notFound, `Conversation not found: ${this.rawConversationId}`);
    this.conversation = conversation;
    const badParameter = await this.startingPoint(conversation);
    if (this.isClosed()) return;
    if (badParameter !== undefined) return this.close(LIVE_CLOSE_CODES.badRequest, badParameter);

    this.phase = "catch-up";
    // Subscribed before anything is read: while catching up the listener only notes what was published.
    this.unsubscribe = bus.subscribe(conversation.id, (events) => this.onLive(events));
    const last = conversation.eventCount > 0 ? (await store.readAfter(conversation.id, conversation.eventCount - 1, 1))[0] : undefined;
    const value = {
      conversation_id: conversation.id,
      conversation_status: conversation.status,
      created_at: conversation.createdAt,
      updated_at: conversation.updatedAt,
      event_count: conversation.eventCount,
      last_event_id: last?.id ?? null,
      ...(await conversations.stateOf(conversation)),
    };
    if (this.isClosed()) return;
    this.client.send(JSON.stringify({ id: crypto.randomUUID(), timestamp: recordedTimestamp(), source: "environment", key: "full_state", value, kind: "ConversationStateUpdateEvent" }));
    await this.catchUp();
  }

  /** Where the stream starts (spec/asyncapi.yaml), as the server reads it; the close reason of a bad parameter. */
  private async startingPoint(conversation: ConversationRecord): Promise<string | undefined> {
    const query = this.client.url.searchParams;
    const resendAll = query.get("resend_all");
    if (resendAll !== null && !/^(true|false|1|0)$/i.test(resendAll)) return "resend_all must be true or false";
    const resendMode = query.get("resend_mode");
    if (resendMode !== null && resendMode !== "all" && resendMode !== "since") return "resend_mode must be all or since";
    const afterTimestamp = query.get("after_timestamp");
    if (afterTimestamp !== null && instantMicros(afterTimestamp) === undefined) return `after_timestamp must be ${instantError(afterTimestamp)}`;
    if (resendMode === "since") return "resend_mode=since is not supported by the browser mock (use after_id)";
    const afterId = query.get("after_id");
    this.lastSeq = conversation.eventCount; // only what comes next
    if (afterId !== null) {
      const position = await this.world.store.positionOf(conversation.id, afterId);
      if (!position) return `after_id ${afterId} is not an event of this conversation`;
      this.lastSeq = position.seq;
    } else if (resendMode === "all" || (resendMode === null && resendAll !== null && /^(true|1)$/i.test(resendAll))) {
      this.lastSeq = 0;
    }
    return undefined;
  }

  /** Stored events after `lastSeq`, page by page, until the store has nothing newer than what was published. */
  private async catchUp(): Promise<void> {
    while (this.phase === "catch-up") {
      const page = await this.world.store.readAfter(this.conversation.id, this.lastSeq, REPLAY_PAGE);
      if (this.isClosed()) return;
      for (const event of page) this.deliver(event);
      if (page.length < REPLAY_PAGE && this.publishedDuringCatchUp <= this.lastSeq) this.phase = "live";
    }
  }

  private onLive(events: readonly StoredEvent[]): void {
    if (this.phase !== "live") {
      this.publishedDuringCatchUp = Math.max(this.publishedDuringCatchUp, events[events.length - 1]?.seq ?? 0);
      return;
    }
    for (const event of events) if (event.seq > this.lastSeq) this.deliver(event);
  }

  private deliver(event: StoredEvent): void {
    this.lastSeq = event.seq;
    this.client.send(event.json);
  }

  /** A ServerErrorEvent to this socket only, never stored (as the agent server answers a frame it refuses). */
  private sendError(code: ServerErrorCode, detail: BrowserValidationError["detail"]): void {
    const event: ServerErrorEvent = {
      id: crypto.randomUUID(),
      timestamp: recordedTimestamp(),
      source: "environment",
      code,
      detail: detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "),
      kind: "ServerErrorEvent",
    };
    this.client.send(JSON.stringify(event));
  }

  private async onFrame(data: unknown): Promise<void> {
    if (this.phase === "closed") return;
    let frame: unknown;
    let parseError: string | undefined;
    if (typeof data !== "string") parseError = "binary frames are not accepted: send JSON text";
    else {
      try {
        frame = JSON.parse(data) as unknown;
      } catch {
        parseError = "is not valid JSON";
      }
    }
    const isAuth = typeof frame === "object" && frame !== null && (frame as { type?: unknown }).type === "auth";
    const authKey = isAuth ? (frame as { session_api_key?: unknown }).session_api_key : undefined;
    if (this.phase === "auth") {
      if (typeof authKey !== "string" || !this.world.keys.includes(authKey)) return this.close(LIVE_CLOSE_CODES.unauthorized, "Unauthorized");
      this.canWrite = true;
      return this.open();
    }
    if (this.phase !== "catch-up" && this.phase !== "live") return;
    if (parseError !== undefined) return this.sendError("JSONDecodeError", [{ loc: ["message"], msg: parseError, type: "json_invalid" }]);
    if (isAuth) {
      // A public reader may authenticate later to send messages; a wrong key ends the connection.
      if (typeof authKey !== "string" || !this.world.keys.includes(authKey)) return this.close(LIVE_CLOSE_CODES.unauthorized, "Unauthorized");
      this.canWrite = true;
      return;
    }
    if (!this.canWrite) return this.sendError("Unauthorized", [{ loc: ["message"], msg: "send an auth frame with a session API key before sending messages", type: "unauthorized" }]);
    try {
      // A message on the socket always runs the agent (the agent server's rule).
      await this.world.conversations.sendMessage(this.conversation.id, frame, { run: true }, ["message"]);
    } catch (error) {
      if (error instanceof BrowserValidationError) return this.sendError("ValidationError", error.detail);
      console.error("acs-mock: live channel: recording a message failed", error);
      this.sendError("InternalError", [{ loc: ["message"], msg: "the message could not be recorded", type: "internal_error" }]);
    }
  }
}

/** The live channel's MSW handler under `base` (see {@link liveUrlPattern}). */
export function browserLiveHandler(world: BrowserWorld, base: string): WebSocketHandler {
  const pattern = liveUrlPattern(base);
  // The handler is what addEventListener returns (a link itself is no handler).
  return ws.link(pattern).addEventListener("connection", ({ client }) => {
    const raw = pattern.exec(client.url.href)?.[1] ?? "";
    let id: string;
    try {
      id = decodeURIComponent(raw);
    } catch {
      id = raw;
    }
    new BrowserLiveConnection(world, client, id).start();
  });
}
