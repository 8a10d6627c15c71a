/**
 * Live frames built once (src/live/frame.ts): a real `ws` client reads the frames written as raw
 * bytes to the socket, at every length boundary of RFC 6455's header, in order with `ws`'s own
 * sends; and a turn's writes to one socket leave together.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable, type Duplex } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { TurnBatcher, textFrame } from "../../src/live/frame.js";

let server: Server | undefined;
afterEach(async () => {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

/** A server that, once a client connects, hands the test the server-side ws and its raw socket. */
async function connected(): Promise<{ client: WebSocket; ws: WebSocket; socket: Duplex }> {
  const wss = new WebSocketServer({ noServer: true });
  server = createServer();
  const accepted = new Promise<{ ws: WebSocket; socket: Duplex }>((resolve) => {
    server!.on("upgrade", (request, socket, head) => wss.handleUpgrade(request, socket, head, (ws) => resolve({ ws, socket })));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await once(client, "open");
  return { client, ...(await accepted) };
}

function received(client: WebSocket, count: number): Promise<{ text: string; isBinary: boolean }[]> {
  const messages: { text: string; isBinary: boolean }[] = [];
  return new Promise((resolve) => {
    client.on("message", (data, isBinary) => {
      messages.push({ text: String(data), isBinary });
      if (messages.length === count) resolve(messages);
    });
  });
}

describe("textFrame", () => {
  it("is read by a real client as the same text, at each length boundary of the header, between ws's own sends", async () => {
    const { client, ws, socket } = await connected();
    const lengths = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000];
    const texts = lengths.map((n) => "é".repeat(Math.floor(n / 2)) + "x".repeat(n % 2)); // UTF-8: 2 bytes per é
    const got = received(client, texts.length * 2);
    for (const text of texts) {
      expect(Buffer.byteLength(text)).toBe(lengths[texts.indexOf(text)]);
      socket.write(textFrame(Buffer.from(text)));
      ws.send(`ws:${text.length}`);
    }
    const messages = await got;
    expect(messages).toEqual(texts.flatMap((text) => [{ text, isBinary: false }, { text: `ws:${text.length}`, isBinary: false }]));
    client.close();
  });
});

describe("TurnBatcher", () => {
  /** A stream that records each write it is asked to make (writev: a batch). */
  function recorder(): { stream: Writable; writes: number[] } {
    const writes: number[] = [];
    const stream = new Writable({
      writev(chunks, callback) {
        writes.push(chunks.length);
        callback();
      },
      write(_chunk, _encoding, callback) {
        writes.push(1);
        callback();
      },
    });
    return { stream, writes };
  }

  it("lets one turn's writes to a socket go out in one write, and each turn's separately", async () => {
    const batcher = new TurnBatcher();
    const a = recorder();
    const b = recorder();
    for (let i = 0; i < 3; i++) batcher.write(a.stream as unknown as Duplex, Buffer.from(`a${i}`));
    batcher.write(b.stream as unknown as Duplex, Buffer.from("b0"));
    expect(a.writes).toEqual([]); // held until the turn ends
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.writes).toEqual([3]);
    expect(b.writes).toEqual([1]);
    batcher.write(a.stream as unknown as Duplex, Buffer.from("a3"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.writes).toEqual([3, 1]);
  });

  it("paces flushes by their cost: after a flush of 6 ms, the writes of the next 6 ms leave together", async () => {
    // A clock that a flush advances by 6 ms (as a thousand sockets' writes would take).
    let clock = 0;
    const a = recorder();
    const uncork = a.stream.uncork.bind(a.stream);
    a.stream.uncork = () => {
      clock += 6;
      uncork();
    };
    const batcher = new TurnBatcher(() => clock);
    batcher.write(a.stream as unknown as Duplex, Buffer.from("e0"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.writes).toEqual([1]); // the first flush is not held
    // Three events, a turn apart, within the 6 ms that follow: held, then one write.
    for (let i = 1; i <= 3; i++) {
      batcher.write(a.stream as unknown as Duplex, Buffer.from(`e${i}`));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(a.writes).toEqual([1]);
    await vi.waitFor(() => expect(a.writes).toEqual([1, 3]));
  });

  it("does not pace cheap flushes", async () => {
    const a = recorder();
    const batcher = new TurnBatcher(() => 0); // every flush takes no time
    for (let i = 0; i < 3; i++) {
      batcher.write(a.stream as unknown as Duplex, Buffer.from(`e${i}`));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(a.writes).toEqual([1, 1, 1]);
  });

  it("delivers every frame of a busy turn to a real client, in order", async () => {
    const { client, socket } = await connected();
    const batcher = new TurnBatcher();
    const got = received(client, 500);
    for (let i = 0; i < 500; i++) batcher.write(socket, textFrame(Buffer.from(`{"n":${i}}`)));
    expect((await got).map((m) => m.text)).toEqual(Array.from({ length: 500 }, (_, i) => `{"n":${i}}`));
    client.close();
  });
});
