/**
 * Live frames built once (src/live/frame.ts): a real `ws` client reads the frames written as raw
 * bytes to the socket, at every length boundary of RFC 6455's header, in order with `ws`'s own
 * sends; and a turn's writes to one socket leave together, in one write of one Buffer shared by
 * the sockets that got the same frames.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable, type Duplex } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { FanOutWriter, textFrame, type FanOutTarget } from "../../src/live/frame.js";

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

describe("FanOutWriter", () => {
  /** A stream that records each write it is asked to make (the Buffer of each write or writev chunk). */
  function recorder(): { target: FanOutTarget; stream: Writable; writes: Buffer[][]; open: { value: boolean } } {
    const writes: Buffer[][] = [];
    const stream = new Writable({
      writev(chunks, callback) {
        writes.push(chunks.map((c) => c.chunk as Buffer));
        callback();
      },
      write(chunk: Buffer, _encoding, callback) {
        writes.push([chunk]);
        callback();
      },
    });
    const open = { value: true };
    return { target: { socket: stream as unknown as Duplex, writable: () => open.value }, stream, writes, open };
  }
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  /**
   * A clock that stands still: every flush takes no time, so none is paced and each turn's flush
   * runs at the next setImmediate. With the real clock a flush that took 2 ms or more (a slow or
   * loaded machine: CI, 2026-11-26) paced the next one by a timer, after the test's `turn()`.
   * Pacing has its own tests, on their own clocks.
   */
  const still = () => 0;
  const texts = (writes: Buffer[][]) => writes.map((chunks) => chunks.map(String));

  it("lets one turn's writes to a socket go out in one write of one Buffer, and each turn's separately", async () => {
    const writer = new FanOutWriter(still);
    const a = recorder();
    const b = recorder();
    for (let i = 0; i < 3; i++) writer.write(a.target, Buffer.from(`a${i}`), false);
    writer.write(b.target, Buffer.from("b0"), false);
    expect(a.writes).toEqual([]); // held until the turn ends
    expect(writer.pending(a.target)).toBe(6);
    await turn();
    expect(texts(a.writes)).toEqual([["a0a1a2"]]);
    expect(texts(b.writes)).toEqual([["b0"]]);
    expect(writer.pending(a.target)).toBe(0);
    writer.write(a.target, Buffer.from("a3"), false);
    await turn();
    expect(texts(a.writes)).toEqual([["a0a1a2"], ["a3"]]);
  });

  it("writes the shared frames of a flush to every socket that got them as the same Buffer, joined once", async () => {
    const writer = new FanOutWriter(still);
    const sockets = [recorder(), recorder(), recorder()];
    const events = [Buffer.from("e0"), Buffer.from("e1"), Buffer.from("e2")];
    for (const event of events) for (const s of sockets) writer.write(s.target, event, true);
    expect(writer.pending(sockets[0]!.target)).toBe(6);
    await turn();
    for (const s of sockets) expect(texts(s.writes)).toEqual([["e0e1e2"]]);
    // One Buffer for all: the join is made once per flush, not once per socket.
    expect(sockets[1]!.writes[0]![0]).toBe(sockets[0]!.writes[0]![0]);
    expect(sockets[2]!.writes[0]![0]).toBe(sockets[0]!.writes[0]![0]);
  });

  it("keeps each socket's own order when shared frames and its own are mixed, or it joined late", async () => {
    const writer = new FanOutWriter(still);
    const early = recorder();
    const late = recorder();
    const mixed = recorder();
    const [e0, e1, e2] = [Buffer.from("e0"), Buffer.from("e1"), Buffer.from("e2")];
    writer.write(early.target, e0, true);
    writer.write(mixed.target, Buffer.from("own0"), false); // a catch-up page, then live events
    writer.write(early.target, e1, true);
    writer.write(mixed.target, e1, true);
    writer.write(late.target, e1, true);
    writer.write(early.target, e2, true);
    writer.write(late.target, e2, true);
    writer.write(mixed.target, e2, true);
    writer.write(mixed.target, Buffer.from("own1"), false);
    expect(writer.pending(mixed.target)).toBe(12);
    await turn();
    expect(texts(early.writes)).toEqual([["e0e1e2"]]);
    expect(texts(late.writes)).toEqual([["e1e2"]]);
    expect(texts(mixed.writes)).toEqual([["own0e1e2own1"]]);
  });

  it("release writes a socket's held frames at once (what is sent next goes after them); a closing socket's are dropped", async () => {
    const writer = new FanOutWriter(still);
    const a = recorder();
    const b = recorder();
    writer.write(a.target, Buffer.from("e0"), true);
    writer.write(b.target, Buffer.from("e0"), true);
    writer.release(a.target);
    a.stream.write(Buffer.from("after"));
    expect(texts(a.writes)).toEqual([["e0"], ["after"]]);
    expect(writer.pending(a.target)).toBe(0);
    b.open.value = false;
    await turn();
    expect(texts(a.writes)).toEqual([["e0"], ["after"]]); // nothing held any more
    expect(b.writes).toEqual([]);
  });

  it("paces flushes by their cost: after a flush of 6 ms, the writes of the next 6 ms leave together", async () => {
    // A clock that a flush advances by 6 ms (as a thousand sockets' writes would take).
    let clock = 0;
    const a = recorder();
    const write = a.stream.write.bind(a.stream);
    a.stream.write = ((chunk: Buffer) => {
      clock += 6;
      return write(chunk);
    }) as typeof a.stream.write;
    const writer = new FanOutWriter(() => clock, 0);
    writer.write(a.target, Buffer.from("e0"), true);
    await turn();
    expect(texts(a.writes)).toEqual([["e0"]]); // the first flush is not held
    // Three events, a turn apart, within the 6 ms that follow: held, then one write.
    for (let i = 1; i <= 3; i++) {
      writer.write(a.target, Buffer.from(`e${i}`), true);
      await turn();
    }
    expect(a.writes.length).toBe(1);
    await vi.waitFor(() => expect(texts(a.writes)).toEqual([["e0"], ["e1e2e3"]]));
  });

  it("after a paced flush, waits at least the paced interval from its start, even when the flush was shorter", async () => {
    // A flush of 3 ms (≥ PACED_FLUSH_MS), an interval of 50 ms: the next flush waits until 50 ms
    // after the first began, not 3 ms after it ended. The writer's timer is faked (its clock is
    // the test's); setImmediate stays real, so `turn()` still ends a turn.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      let clock = 0;
      const a = recorder();
      const write = a.stream.write.bind(a.stream);
      a.stream.write = ((chunk: Buffer) => {
        clock += 3;
        return write(chunk);
      }) as typeof a.stream.write;
      const writer = new FanOutWriter(() => clock, 50);
      writer.write(a.target, Buffer.from("e0"), true);
      await turn();
      expect(texts(a.writes)).toEqual([["e0"]]); // the first flush is not held
      clock += 10; // 13 ms after the first flush began: past its end + its cost, not past the interval
      writer.write(a.target, Buffer.from("e1"), true);
      await turn();
      expect(a.writes.length).toBe(1); // held: the flush waits 37 ms (50 − 13), on a timer
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(36);
      await turn();
      expect(a.writes.length).toBe(1); // still held 1 ms before the interval ends
      vi.advanceTimersByTime(1);
      await turn();
      expect(texts(a.writes)).toEqual([["e0"], ["e1"]]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("does not pace cheap flushes", async () => {
    const a = recorder();
    const writer = new FanOutWriter(still);
    for (let i = 0; i < 3; i++) {
      writer.write(a.target, Buffer.from(`e${i}`), true);
      await turn();
    }
    expect(a.writes.length).toBe(3);
  });

  it("delivers every frame of a busy turn to a real client, in order, and ws's own sends after a release", async () => {
    const { client, ws, socket } = await connected();
    const writer = new FanOutWriter();
    const target = { socket, writable: () => true };
    const got = received(client, 501);
    for (let i = 0; i < 500; i++) writer.write(target, textFrame(Buffer.from(`{"n":${i}}`)), i % 2 === 0);
    writer.release(target);
    ws.send("last");
    expect((await got).map((m) => m.text)).toEqual([...Array.from({ length: 500 }, (_, i) => `{"n":${i}}`), "last"]);
    client.close();
  });
});
