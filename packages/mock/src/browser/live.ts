/**
 * The live channel of the browser mock, `/sockets/events/{conversation_id}`, through MSW's WebSocket
 * API (`ws.link`): the protocol is the server core's `LiveSession` (the one the reference server's
 * `ws` channel carries): a `full_state` first; then the stored events from the starting point
 * (`resend_all`, `resend_mode`, `after_id`) and the live ones, each once, in append order; a key in
 * the query or an auth frame `{"type":"auth","session_api_key":…}` lets a client send messages, which
 * the scripted agent answers; a frame it cannot accept gets a ServerErrorEvent on this socket only;
 * the close codes are the spec's. This module only carries the session's frames over MSW's client.
 */
import { ws, type WebSocketHandler, type WebSocketHandlerConnection } from "msw";
import { LiveSession, type LiveLog, type LiveTransport } from "@acs-toolkit/server/core";
import type { Api } from "@acs-toolkit/server/api";
import type { StoredEvent } from "@acs-toolkit/server/store";
import type { BrowserWorld } from "./world.js";

type Client = WebSocketHandlerConnection["client"];

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The URL pattern of the live channel under `base` (`http(s)://host[/prefix]`, or `*` for any host). */
export function liveUrlPattern(base: string): RegExp {
  const origin = base === "*" ? "wss?://[^/]+" : escape(base.replace(/\/+$/, "").replace(/^http/, "ws"));
  return new RegExp(`^${origin}/sockets/events/([^/?#]+)(?:[?#]|$)`);
}

/** Failures of the channel to the console (what a page's developer tools show); the routine lines are left out. */
const CONSOLE_LOG: LiveLog = {
  debug() {},
  info() {},
  warn: (details, message) => console.warn(`acs-mock: ${message}`, details),
  error: (details, message) => console.error(`acs-mock: ${message}`, details),
};

/** A session's frames over MSW's client socket (which has no send buffer to watch). */
class MswTransport implements LiveTransport {
  constructor(private readonly client: Client) {}

  send(text: string): void {
    this.client.send(text);
  }

  sendEvent(event: StoredEvent): void {
    this.client.send(event.json);
  }

  close(code: number, reason: string): void {
    this.client.close(code, reason);
  }

  bufferedAmount(): number {
    return 0;
  }
}

/** The live channel's MSW handler under `base` (see {@link liveUrlPattern}). */
export function browserLiveHandler(world: BrowserWorld, base: string): WebSocketHandler {
  const pattern = liveUrlPattern(base);
  const { store, bus, conversations, keys, publicRead } = world;
  // The handler is what addEventListener returns (a link itself is no handler).
  return ws.link(pattern).addEventListener("connection", ({ client }) => {
    const raw = pattern.exec(client.url.href)?.[1] ?? "";
    let id: string;
    try {
      id = decodeURIComponent(raw);
    } catch {
      id = raw;
    }
    const session = new LiveSession(new MswTransport(client), id, client.url.searchParams, {
      store,
      bus,
      conversations,
      checkKey: (presented) => presented !== undefined && keys.includes(presented),
      publicRead,
      log: CONSOLE_LOG,
    });
    client.addEventListener("message", (event) => session.receive(typeof event.data === "string" ? event.data : undefined));
    client.addEventListener("close", () => session.closed());
    session.start(client.url.searchParams.get("session_api_key") ?? undefined);
  });
}

/** The URL pattern of the bash-events socket under `base` (as {@link liveUrlPattern}). */
function bashUrlPattern(base: string): RegExp {
  const origin = base === "*" ? "wss?://[^/]+" : escape(base.replace(/\/+$/, "").replace(/^http/, "ws"));
  return new RegExp(`^${origin}/sockets/bash-events/?(?:[?#]|$)`);
}

/**
 * The bash-events socket's MSW handler under `base`: the API's session (`api.bashEvents`, the one the
 * reference server's socket carries), which authenticates, echoes each command and answers it as
 * POST /api/bash/execute_bash_command does here: the mock runs no commands, so each one's single
 * BashOutput has `exit_code` -1 and says so.
 */
export function browserBashHandler(api: Pick<Api, "bashEvents">, base: string): WebSocketHandler {
  return ws.link(bashUrlPattern(base)).addEventListener("connection", ({ client }) => {
    const session = api.bashEvents({ send: (text) => client.send(text), close: (code, reason) => client.close(code, reason) });
    client.addEventListener("message", (event) => session.receive(typeof event.data === "string" ? event.data : undefined));
    client.addEventListener("close", () => session.closed());
    session.start(client.url.searchParams.get("session_api_key") ?? undefined);
  });
}
