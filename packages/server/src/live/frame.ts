/**
 * Live events framed once for every subscriber: a WebSocket text frame as a
 * server sends it (FIN, opcode 1, unmasked: RFC 6455 §5.2), built once per event and written as
 * the same bytes to each subscriber's socket, instead of framing it again in every `ws.send`; and
 * the writer that holds a turn's frames and writes each socket's in one write (FanOutWriter).
 * Safe beside `ws`'s own sends (pings, close, error frames) once a socket's held frames are
 * released before them: without permessage-deflate, which the channel does not offer, `ws` writes
 * each frame to the socket at once, in call order.
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

/** A flush that took at least this long paces the next one (see FanOutWriter). */
const PACED_FLUSH_MS = 2;
/** After a paced flush, the next starts at least this long after it started (see FanOutWriter). */
const PACED_INTERVAL_MS = 50;

/** A socket that a {@link FanOutWriter} writes to. */
export interface FanOutTarget {
  readonly socket: Duplex;
  /** Whether held bytes may still be written (false once the connection is closing: they are dropped). */
  writable(): boolean;
}

/** What one target has been given since the last flush. */
interface Held {
  /** The flush's shared frames [start, end), while that is all it was given (`own` undefined). */
  start: number;
  end: number;
  /** Its frames in order, once they are not one run of the shared ones (its own catch-up frames). */
  own: Buffer[] | undefined;
  ownBytes: number;
}

/**
 * Holds the frames written to sockets until the end of the current turn of the event loop (or
 * later: see pacing), then writes each socket's frames in ONE write of one Buffer.
 *
 * Live events are framed once for all their subscribers (`shared` writes: the same Buffer to every
 * socket); a flush joins the shared frames each socket got into one Buffer, built once for every
 * socket that got the same run of them (all the followers of a conversation, as a rule), and
 * writes that Buffer to each: per socket and flush one `write` of one Buffer, whatever the number
 * of events, and nothing per socket and event but bookkeeping, where each frame was a
 * `socket.write` into a corked stream and the flush a `writev` of their array (a flush
 * of 64 events to 1,000 sockets cost 0.51–0.54 µs a delivery that way, 0.33–0.34 µs this way; at
 * 16 events or fewer the system call dominates and both cost the same, bench/fanout-flush.bench.ts).
 * A socket given anything else (its own catch-up frames) gets its frames joined into a Buffer of
 * its own, still one write. The bytes on the wire are the same frames in the same order.
 *
 * Anything else written to a held socket must go after its held frames: call {@link release}
 * first (the channel does before `ws.send` and `ws.close`). A target that is no longer `writable`
 * at the flush (its close handshake has begun) has its held frames dropped.
 *
 * Flushes are paced by their own cost: after one that took `d` ms (d ≥ PACED_FLUSH_MS: a thousand
 * subscribers), the next waits until `d` ms have passed, and at least until PACED_INTERVAL_MS after
 * the paced one started, so writing never takes more than about half of the thread, and under a
 * steady stream the events of that time leave together. A write costs about the same for one event
 * or sixteen: ~10 µs of the server's CPU a socket (~8 of them the kernel's: on loopback the sender
 * also does the receiver's TCP work), then ~0.2 µs an event (bench/fanout-flush.bench.ts), and
 * the subscriber pays a read per write too; so at 200 events/s the 50 ms make it ten events a
 * write instead of one or two on an idle machine (the goal: 1,000 subscribers, a p99 budget of
 * 250 ms). The added latency is at most PACED_INTERVAL_MS or the cost of one flush; a flush of a
 * few sockets (under PACED_FLUSH_MS) paces nothing.
 */
export class FanOutWriter {
  private readonly held = new Map<FanOutTarget, Held>();
  /** This flush's shared frames, in the order first written, and where each is in `frames`. */
  private frames: Buffer[] = [];
  private readonly sharedIndex = new Map<Buffer, number>();
  private lastShared: Buffer | undefined;
  private lastSharedIndex = 0;
  /** Byte offset of the end of each shared frame in the flush's run (prefix sums). */
  private ends: number[] = [];
  /** Joined runs of shared frames, by start × 2^26 + end (a flush never holds 2^26 frames). */
  private readonly joined = new Map<number, Buffer>();
  private scheduled = false;
  /** performance.now() before which the next flush waits (0: none). */
  private notBefore = 0;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly pacedIntervalMs = PACED_INTERVAL_MS,
  ) {}

  /**
   * Writes a frame to `target` at the next flush. `shared`: the same Buffer goes to other targets
   * (a live event framed once); it must not change until the flush.
   */
  write(target: FanOutTarget, frame: Buffer, shared: boolean): void {
    const held = this.held.get(target);
    if (shared) {
      // Every subscriber gets the same frame in turn: the last one looked up is the one asked for.
      let index = frame === this.lastShared ? this.lastSharedIndex : this.sharedIndex.get(frame);
      if (index === undefined) {
        index = this.frames.length;
        this.frames.push(frame);
        this.ends.push((this.ends[index - 1] ?? 0) + frame.length);
        this.sharedIndex.set(frame, index);
      }
      this.lastShared = frame;
      this.lastSharedIndex = index;
      if (!held) {
        this.hold(target, { start: index, end: index + 1, own: undefined, ownBytes: 0 });
        return;
      }
      if (held.own === undefined && held.end === index) {
        held.end++;
        return;
      }
    } else if (!held) {
      this.hold(target, { start: 0, end: 0, own: [frame], ownBytes: frame.length });
      return;
    }
    const own = this.ownFrames(held);
    own.push(frame);
    held.ownBytes += frame.length;
  }

  /** Bytes held for `target` (not yet written to its socket). */
  pending(target: FanOutTarget): number {
    const held = this.held.get(target);
    if (!held) return 0;
    return held.own === undefined ? this.ends[held.end - 1]! - (this.ends[held.start - 1] ?? 0) : held.ownBytes;
  }

  /** Writes what is held for `target` now (before something else is written to its socket). */
  release(target: FanOutTarget): void {
    const held = this.held.get(target);
    if (!held) return;
    this.held.delete(target);
    this.send(target, held);
  }

  private hold(target: FanOutTarget, held: Held): void {
    this.held.set(target, held);
    if (!this.scheduled) {
      this.scheduled = true;
      const wait = this.notBefore - this.now();
      if (wait >= 1) setTimeout(this.flush, wait);
      else setImmediate(this.flush);
    }
  }

  private ownFrames(held: Held): Buffer[] {
    if (held.own === undefined) {
      held.own = this.frames.slice(held.start, held.end);
      held.ownBytes = this.ends[held.end - 1]! - (this.ends[held.start - 1] ?? 0);
    }
    return held.own;
  }

  private send(target: FanOutTarget, held: Held): void {
    const { socket } = target;
    if (socket.destroyed || !target.writable()) return;
    if (held.own !== undefined) {
      socket.write(held.own.length === 1 ? held.own[0]! : Buffer.concat(held.own, held.ownBytes));
      return;
    }
    if (held.end - held.start === 1) {
      socket.write(this.frames[held.start]!);
      return;
    }
    const key = held.start * 2 ** 26 + held.end;
    let bytes = this.joined.get(key);
    if (!bytes) this.joined.set(key, (bytes = Buffer.concat(this.frames.slice(held.start, held.end))));
    socket.write(bytes);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const start = this.now();
    for (const [target, held] of this.held) this.send(target, held);
    this.held.clear();
    this.frames = [];
    this.ends = [];
    this.sharedIndex.clear();
    this.lastShared = undefined;
    this.joined.clear();
    const end = this.now();
    this.notBefore = end - start >= PACED_FLUSH_MS ? Math.max(end + (end - start), start + this.pacedIntervalMs) : 0;
  };
}
