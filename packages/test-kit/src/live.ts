/** A raw WebSocket peer of the live channel for black-box tests: every frame kept, close code awaited. */
import { WebSocket, type ClientOptions } from "ws";

export interface Frame {
  /** Parsed JSON of the text frame. */
  value: any;
  text: string;
}

export interface LivePeer {
  ws: WebSocket;
  frames: Frame[];
  /** Stored events' frames only (see isEventFrame). */
  events(): any[];
  /** Resolves once `count` frames matching `filter` have arrived (rejects on close first). */
  waitFor(count: number, filter?: (frame: Frame) => boolean, timeoutMs?: number): Promise<Frame[]>;
  closed: Promise<{ code: number; reason: string }>;
  opened: Promise<void>;
  send(value: unknown): void;
}

export function livePath(conversationId: string, query: Record<string, string> = {}): string {
  const q = new URLSearchParams(query).toString();
  return `/sockets/events/${conversationId}${q ? `?${q}` : ""}`;
}

export function connectLive(baseUrl: string, path: string, options: ClientOptions = {}): LivePeer {
  const ws = new WebSocket(baseUrl.replace(/^http/, "ws") + path, options);
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  ws.on("message", (data, isBinary) => {
    const text = isBinary ? "" : data.toString();
    frames.push({ value: JSON.parse(text), text });
    for (const w of waiters) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on("close", (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const w of waiters) w();
    });
  });
  ws.on("error", () => {}); // surfaced through `closed`
  const opened = new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("close", () => reject(new Error("closed before open")));
  });
  opened.catch(() => {});
  return {
    ws,
    frames,
    events: () => frames.filter(isEventFrame).map((f) => f.value),
    closed,
    opened,
    send: (value) => ws.send(typeof value === "string" ? value : JSON.stringify(value)),
    waitFor(count, filter = () => true, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const matching = frames.filter(filter);
          if (matching.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(matching);
          } else if (ws.readyState === ws.CLOSED) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`closed after ${matching.length} of ${count} frames`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out with ${frames.filter(filter).length} of ${count} frames`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

/** A stored event's frame: not the full_state, not a ServerErrorEvent answering an inbound frame. */
export const isEventFrame = (f: Frame) => Boolean(f.value.kind) && f.value.key !== "full_state" && f.value.kind !== "ServerErrorEvent";

/** A ServerErrorEvent answering an inbound frame the server could not accept. */
export const isErrorFrame = (f: Frame) => f.value.kind === "ServerErrorEvent";
