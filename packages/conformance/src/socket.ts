/**
 * A WebSocket client for the checks of the live-events channel: frames queued as they arrive and
 * taken one at a time with a deadline, the close code and reason kept, and failures worded as
 * evidence.
 */
import WebSocket from "ws";
import { CheckFailure } from "./check.js";

/** One text frame: its JSON value (undefined when it is not JSON) and its text. */
export interface Frame {
  json: any;
  text: string;
}

export interface Closed {
  code: number;
  reason: string;
}

/** The server answered the upgrade request with an HTTP status instead of switching protocols. */
export class HandshakeRefused extends Error {
  constructor(readonly status: number) {
    super(`the upgrade request was answered with HTTP ${status}`);
  }
}

export class LiveSocket {
  private readonly queue: Frame[] = [];
  private readonly waiters: Array<() => void> = [];
  private closedWith: Closed | undefined;
  /** Resolves when the connection is closed (by either side). */
  readonly closed: Promise<Closed>;

  private constructor(
    private readonly socket: WebSocket,
    readonly description: string,
  ) {
    this.closed = new Promise((resolve) => {
      socket.on("close", (code, reason) => {
        this.closedWith = { code, reason: reason.toString("utf8") };
        resolve(this.closedWith);
        this.wake();
      });
    });
    socket.on("message", (data, isBinary) => {
      const text = isBinary ? `<binary frame of ${(data as Buffer).length} bytes>` : data.toString();
      let json: unknown;
      try {
        json = isBinary ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      this.queue.push({ json, text });
      this.wake();
    });
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /**
   * Connects; resolves once the upgrade succeeded.
   * @throws HandshakeRefused when the server answers the upgrade with an HTTP status
   * @throws Error when nothing answers
   */
  static open(url: URL, headers: Record<string, string>, timeoutMs: number): Promise<LiveSocket> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers, handshakeTimeout: timeoutMs });
      const live = new LiveSocket(socket, `${url.pathname}${url.search.replace(/session_api_key=[^&]*/, "session_api_key=…")}`);
      socket.once("open", () => resolve(live));
      socket.once("unexpected-response", (_request, response) => {
        reject(new HandshakeRefused(response.statusCode ?? 0));
        response.resume();
        socket.terminate();
      });
      // `on`, not `once`: a later error (after open) must not go unhandled; rejecting a settled promise is a no-op.
      socket.on("error", (error) => reject(error));
    });
  }

  send(value: unknown): void {
    this.socket.send(typeof value === "string" ? value : JSON.stringify(value));
  }

  /** The next frame; fails the check when none arrives within `timeoutMs` or the socket closes first. */
  async next(timeoutMs: number, expecting = "a frame"): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = this.queue.shift();
      if (frame) return frame;
      if (this.closedWith) {
        throw new CheckFailure(`${this.description}: closed with ${this.closedWith.code} "${this.closedWith.reason}" while waiting for ${expecting}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new CheckFailure(`${this.description}: no frame within ${timeoutMs} ms while waiting for ${expecting}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The next `count` frames. */
  async take(count: number, timeoutMs: number, expecting: string): Promise<Frame[]> {
    const frames: Frame[] = [];
    for (let i = 0; i < count; i++) frames.push(await this.next(timeoutMs, `${expecting} (${i + 1} of ${count})`));
    return frames;
  }

  /** Waits for the server to close the connection; fails the check when it does not, or sends frames first. */
  async expectClose(timeoutMs: number): Promise<Closed> {
    const timer = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs).unref());
    const closed = await Promise.race([this.closed, timer]);
    if (!closed) throw new CheckFailure(`${this.description}: still open after ${timeoutMs} ms (received ${this.queue.length} frames)`);
    return closed;
  }

  /** Frames received and not yet taken. */
  get pending(): number {
    return this.queue.length;
  }

  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  close(): void {
    if (this.socket.readyState === WebSocket.CONNECTING) this.socket.terminate();
    else if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000);
  }
}
