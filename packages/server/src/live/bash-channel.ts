/**
 * The bash-events socket, `/sockets/bash-events` (spec/asyncapi.yaml, channel bashEvents), over
 * `ws`: the protocol is the API's {@link BashEventsSession} (api/bash.ts: authentication, the
 * BashCommand echo of each request frame, the commands' BashOutput events, BashError frames); this
 * module only carries it on one `ws` connection, with the pings and shutdown of the live channel
 * beside it (live/channel.ts routes the upgrade here).
 */
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import type { Api, BashEventsSession } from "../api/index.js";
import type { Logger } from "../log.js";
import { rawText } from "./ws-text.js";

/** What opens bash-events sessions: the API the HTTP routes answer with (so the socket runs commands as they do). */
export type BashEventsHost = Pick<Api, "bashEvents">;

export class BashConnection {
  private alive = true;
  private readonly closeListeners: Array<() => void> = [];
  private readonly session: BashEventsSession;

  constructor(
    private readonly ws: WebSocket,
    private readonly request: IncomingMessage,
    private readonly searchParams: URLSearchParams,
    host: BashEventsHost,
    private readonly log: Logger,
    authTimeoutMs: number,
  ) {
    this.session = host.bashEvents(
      {
        send: (text) => {
          if (ws.readyState === ws.OPEN) ws.send(text, { binary: false });
        },
        close: (code, reason) => ws.close(code, reason),
      },
      authTimeoutMs,
    );
  }

  start(): void {
    const { ws, session } = this;
    ws.on("pong", () => (this.alive = true));
    ws.on("message", (data, isBinary) => session.receive(isBinary ? undefined : rawText(data)));
    ws.on("error", (error) => this.log.debug({ err: error.message }, "bash-events connection error"));
    ws.once("close", (code) => {
      session.closed();
      this.log.info({ code }, "bash-events connection closed");
      for (const listener of this.closeListeners.splice(0)) listener();
    });
    const header = this.request.headers["x-session-api-key"];
    const fromQuery = this.searchParams.get("session_api_key");
    if (fromQuery !== null) {
      this.log.warn({ path: "/sockets/bash-events" }, "bash-events: session_api_key in the query string is deprecated (URLs leak into logs); send the X-Session-API-Key header or an auth frame");
    }
    session.start(typeof header === "string" ? header : (fromQuery ?? undefined));
  }

  heartbeat(): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (!this.alive) return this.terminate();
    this.alive = false;
    this.ws.ping();
  }

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
}
