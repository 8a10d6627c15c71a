/**
 * Live events framed once for every subscriber (issue 18, fan-out): a WebSocket text frame as a
 * server sends it (FIN, opcode 1, unmasked: RFC 6455 §5.2), built once per event and written as
 * the same bytes to each subscriber's socket, instead of framing it again in every `ws.send`.
 * Safe beside `ws`'s own sends (pings, close, catch-up pages): without permessage-deflate, which
 * the channel does not offer, `ws` writes each frame to the socket at once, in call order.
 */
import type { Duplex } from "node:stream";

/** The frame of a text message: `payload` is its text, or the text's UTF-8 bytes. */
export function textFrame(payload: Buffer | string): Buffer {
  const length = typeof payload === "string" ? Buffer.byteLength(payload) : payload.length;
  const headerLength = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = 0x81; // FIN, text
  if (length < 126) {
    frame[1] = length;
  } else if (length < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  if (typeof payload === "string") frame.write(payload, headerLength);
  else payload.copy(frame, headerLength);
  return frame;
}

/** A flush that took at least this long paces the next one (see TurnBatcher). */
export const PACED_FLUSH_MS = 2;

/**
 * Holds writes to sockets until the end of the current turn of the event loop, then lets each
 * socket's go out in one write: when the server is busy, the frames of several events published in
 * one turn leave in one system call per subscriber instead of one each (on loopback a write costs
 * the receiver's work too). An idle server flushes at once, in the same turn.
 *
 * Flushes are paced by their own cost: after one that took `d` ms (d ≥ PACED_FLUSH_MS: a thousand
 * subscribers), the next waits until `d` ms have passed, so writing never takes more than about half
 * of the thread, and under a steady stream the events of those `d` ms leave together: one system
 * call per subscriber for several events (issue 18: at 200 events/s to 1,000 subscribers the
 * per-event writes were most of the server's time). The added latency is at most the cost of one
 * flush; a flush of a few sockets (under PACED_FLUSH_MS) paces nothing.
 */
export class TurnBatcher {
  private readonly held = new Set<Duplex>();
  private scheduled = false;
  /** performance.now() before which the next flush waits (0: none). */
  private notBefore = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Writes `bytes` to `socket`, held (corked) until the next flush. */
  write(socket: Duplex, bytes: Buffer): void {
    if (!this.held.has(socket)) {
      socket.cork();
      this.held.add(socket);
      if (!this.scheduled) {
        this.scheduled = true;
        const wait = this.notBefore - this.now();
        if (wait >= 1) setTimeout(this.flush, wait);
        else setImmediate(this.flush);
      }
    }
    socket.write(bytes);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const start = this.now();
    for (const socket of this.held) socket.uncork();
    this.held.clear();
    const end = this.now();
    this.notBefore = end - start >= PACED_FLUSH_MS ? end + (end - start) : 0;
  };
}
