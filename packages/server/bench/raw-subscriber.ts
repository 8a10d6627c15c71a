/**
 * A WebSocket subscriber for the fan-out benchmark (fanout.bench.ts) that costs its process little
 * per message: a TCP socket that makes the HTTP upgrade itself and reads the server's frames by
 * their RFC 6455 §5.2 headers, handing each text frame's payload to the caller as a range of the
 * bytes read (no string, no JSON, no per-message event), answering pings with pongs. What it does
 * not do, because the server never sends it: fragmented messages (a continuation frame is
 * counted as a protocol error), permessage-deflate (not offered), masked server frames (refused).
 * A thousand `ws` clients in one process cost it about as much CPU per delivery as the server,
 * and the latency measured included that process's own queue; the benchmark keeps a
 * few real `ws` clients beside these and reports their latencies apart, as the cross-check.
 */
import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

export interface RawSubscriber {
  /** Resolves at the first text frame (the channel's `full_state`: subscribed). */
  ready: Promise<void>;
  /** Frames the client could not read as the channel sends them (fragments, masks, bad lengths). */
  readonly protocolErrors: number;
  terminate(): void;
}

interface RawSubscriberOptions {
  port: number;
  path: string;
  headers: Record<string, string>;
  /**
   * A text frame's payload: `bytes[start, end)` (valid only during the call); `readAt`: when the
   * read that completed it returned (performance.timeOrigin + performance.now(), ms), once per read.
   */
  onText(bytes: Buffer, start: number, end: number, readAt: number): void;
  /** The server's close frame, or the connection's end. Called once. */
  onClose(code: number | undefined): void;
}

const PONG_MASK = Buffer.from([0, 0, 0, 0]);
/**
 * Every subscriber reads into this one buffer (net's `onread`: no Buffer and no 'data' event per
 * read); what a read leaves of an incomplete frame is copied out before the next.
 */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

export function connectRawSubscriber(options: RawSubscriberOptions): RawSubscriber {
  const socket: Socket = connect({ port: options.port, host: "127.0.0.1", onread: { buffer: READ_BUFFER, callback: (length) => (onData(READ_BUFFER.subarray(0, length)), true) } });
  socket.setNoDelay(true);
  let upgraded = false;
  let pending: Buffer | undefined; // bytes of a frame (or of the response head) not yet complete
  let errors = 0;
  let closed = false;
  let resolveReady!: () => void;
  let rejectReady!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  let readyDone = false;

  const close = (code: number | undefined) => {
    if (closed) return;
    closed = true;
    if (!readyDone) rejectReady(new Error(`closed before subscribing (${code ?? "no close frame"})`));
    options.onClose(code);
  };

  socket.on("connect", () => {
    const lines = [`GET ${options.path} HTTP/1.1`, "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade", `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}`, "Sec-WebSocket-Version: 13"];
    for (const [name, value] of Object.entries(options.headers)) lines.push(`${name}: ${value}`);
    socket.write(lines.join("\r\n") + "\r\n\r\n");
  });

  /** A pong answering a ping with `payload` (client frames are masked: an all-zero mask). */
  const pong = (payload: Buffer) => {
    socket.write(Buffer.concat([Buffer.from([0x8a, 0x80 | payload.length]), PONG_MASK, payload]));
  };

  const onData = (chunk: Buffer): void => {
    const bytes = pending ? Buffer.concat([pending, chunk]) : chunk;
    pending = undefined;
    let at = 0;
    if (!upgraded) {
      const end = bytes.indexOf("\r\n\r\n", 0, "latin1");
      if (end < 0) {
        pending = Buffer.from(bytes);
        return;
      }
      if (!/^HTTP\/1\.1 101 /.test(bytes.toString("latin1", 0, 13))) {
        rejectReady(new Error(`upgrade refused: ${bytes.toString("latin1", 0, end)}`));
        readyDone = true;
        socket.destroy();
        return;
      }
      upgraded = true;
      at = end + 4;
    }
    const length = bytes.length;
    const readAt = performance.timeOrigin + performance.now();
    while (at + 2 <= length) {
      const b0 = bytes[at]!;
      const b1 = bytes[at + 1]!;
      let payloadLength = b1 & 0x7f;
      let header = 2;
      if (payloadLength === 126) {
        if (at + 4 > length) break;
        payloadLength = bytes.readUInt16BE(at + 2);
        header = 4;
      } else if (payloadLength === 127) {
        if (at + 10 > length) break;
        payloadLength = Number(bytes.readBigUInt64BE(at + 2));
        header = 10;
      }
      if (b1 & 0x80) {
        // A server never masks its frames (RFC 6455 §5.1).
        errors++;
        socket.destroy();
        return close(undefined);
      }
      const start = at + header;
      const end = start + payloadLength;
      if (end > length) break;
      const opcode = b0 & 0x0f;
      if (opcode === 1 && b0 & 0x80) {
        options.onText(bytes, start, end, readAt);
        if (!readyDone) {
          readyDone = true;
          resolveReady();
        }
      } else if (opcode === 9) pong(bytes.subarray(start, end));
      else if (opcode === 8) {
        close(payloadLength >= 2 ? bytes.readUInt16BE(start) : 1005);
        socket.end();
        return;
      } else if (opcode !== 10) errors++; // binary, fragments: never sent by the channel
      at = end;
    }
    // A copy: `chunk` is the shared read buffer, which the next read overwrites.
    if (at < length) pending = Buffer.from(bytes.subarray(at));
  };
  socket.on("error", () => {});
  socket.on("close", () => close(undefined));

  return {
    ready,
    get protocolErrors() {
      return errors;
    },
    terminate: () => socket.destroy(),
  };
}
