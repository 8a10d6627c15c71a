/**
 * Live events against the real reference server over real WebSockets: subscribe and the async
 * iterator, sendMessage over the socket and over HTTP, every event exactly once and in order across
 * transient closes (a real TCP proxy that cuts and stalls connections), slow consumers, a server
 * killed with SIGKILL and restarted on the same data, fatal closes and abort.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WebSocketServer } from "ws";
import type { ServerErrorEvent } from "@acs-toolkit/schema";
import { createClient, LiveError, type LiveStatus, type SearchedEvent } from "@acs-toolkit/client";
import { jsonl, KEY, manyEvents, startReferenceServer, type ReferenceServer } from "./support/server.js";
import { startTcpProxy } from "./support/proxy.js";

let ref: ReferenceServer;
beforeAll(async () => {
  ref = await startReferenceServer([], { live: { heartbeatMs: 2_000 } });
});
afterAll(async () => {
  await ref?.close();
});

const stored = manyEvents(120, "stored");
const fast = { initialMs: 5, maxMs: 50 };

async function conversationWith(client: ReturnType<typeof createClient>, events = stored): Promise<string> {
  return (await client.createConversation({ replay_json: jsonl(events) })).conversation_id;
}

async function allStoredIds(client: ReturnType<typeof createClient>, id: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const event of client.iterateEvents(id)) ids.push(event.id);
  return ids;
}

/** Resolves when `check()` is true, polling; rejects with `describe()` after `ms`. */
const until = (check: () => boolean, describe: () => string, ms = 30_000) =>
  vi.waitFor(
    () => {
      if (!check()) throw new Error(`timed out: ${describe()}`);
    },
    { timeout: ms, interval: 10 },
  );

describe("subscribe", () => {
  it("delivers stored events, then live ones, and reports its state", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY });
    const id = await conversationWith(client);
    const received: SearchedEvent[] = [];
    const statuses: LiveStatus[] = [];
    const sub = client.subscribe(id, { onEvent: (e) => received.push(e), onStatus: (s) => statuses.push(s), backoff: fast });
    await until(() => received.length === stored.length, () => `${received.length} events`);
    expect(received).toEqual(stored);
    await sub.sendMessage("over the socket");
    await client.sendMessage(id, { role: "user", content: [{ type: "text", text: "through the client, same socket" }] });
    await until(() => received.length === stored.length + 2, () => `${received.length} events`);
    expect(received.slice(-2).map((e) => e.kind === "MessageEvent" && e.llm_message.content?.[0])).toEqual([
      expect.objectContaining({ text: "over the socket" }),
      expect.objectContaining({ text: "through the client, same socket" }),
    ]);
    expect(await allStoredIds(client, id)).toEqual(received.map((e) => e.id));
    sub.close();
    await sub.done;
    expect(statuses).toEqual(["open", "closed"]);
    expect(sub.status).toBe("closed");
  });

  it("hands the server's answer to a refused frame (a ServerErrorEvent) to onServerError, never to onEvent, and carries on", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY });
    const id = await conversationWith(client, []);
    const received: SearchedEvent[] = [];
    const errors: ServerErrorEvent[] = [];
    const sub = client.subscribe(id, { onEvent: (e) => received.push(e), onServerError: (e) => errors.push(e) });
    await sub.sendMessage({ role: "assistant", content: [] } as never);
    await until(() => errors.length === 1, () => `${errors.length} errors`);
    expect(errors[0]).toMatchObject({ kind: "ServerErrorEvent", source: "environment", code: "ValidationError", detail: expect.stringContaining("message.role") });
    await sub.sendMessage("after the refusal");
    await until(() => received.length === 1, () => `${received.length} events`);
    expect(received[0]).toMatchObject({ kind: "MessageEvent", source: "user" });
    expect(await allStoredIds(client, id)).toEqual(received.map((e) => e.id));
    sub.close();
    await sub.done;
  });

  it("starts now or after a given event", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY });
    const id = await conversationWith(client);
    const fromNow: string[] = [];
    const afterOne: string[] = [];
    const a = client.subscribe(id, { onEvent: (e) => fromNow.push(e.id), from: "now" });
    const b = client.subscribe(id, { onEvent: (e) => afterOne.push(e.id), from: { afterId: stored[99]!.id } });
    await until(() => a.status === "open" && afterOne.length === 20, () => `${a.status} ${afterOne.length}`);
    await client.sendMessage(id, "hello", { signal: new AbortController().signal }); // over HTTP
    const all = await allStoredIds(client, id);
    await until(() => fromNow.length === 1 && afterOne.length === 21, () => `${fromNow.length} ${afterOne.length}`);
    expect(fromNow).toEqual(all.slice(-1));
    expect(afterOne).toEqual(all.slice(100));
    a.close();
    b.close();
  });

  it("sends over HTTP when no subscription of the conversation is open", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY });
    const id = await conversationWith(client, []);
    await client.sendMessage(id, "no socket");
    const ids = await allStoredIds(client, id);
    expect(ids).toHaveLength(1);
  });

  it("ends with a LiveError on a wrong key or an unknown conversation, without retrying", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: "wrong" });
    const statuses: LiveStatus[] = [];
    const sub = client.subscribe(randomUUID(), { onEvent: () => {}, onStatus: (s) => statuses.push(s) });
    await expect(sub.done).rejects.toMatchObject({ name: "LiveError", code: 4001, reason: "Unauthorized" });
    expect(statuses).toEqual(["closed"]);
    const good = createClient({ baseUrl: ref.url, apiKey: KEY });
    const missing = good.subscribe(randomUUID(), { onEvent: () => {} });
    const error = await missing.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LiveError);
    expect(error).toMatchObject({ code: 4004, reason: expect.stringMatching(/^Conversation not found/) });
  });

  it("stops on abort", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY });
    const id = await conversationWith(client);
    const controller = new AbortController();
    const sub = client.subscribe(id, { onEvent: () => {}, signal: controller.signal });
    await until(() => sub.status === "open", () => sub.status);
    controller.abort();
    await sub.done;
    expect(sub.status).toBe("closed");
    await until(() => ref.server.live.connections === 0, () => `${ref.server.live.connections} connections`);
  });
});

describe("events()", () => {
  it("iterates stored then live events and closes the socket on break", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY });
    const id = await conversationWith(client);
    const seen: string[] = [];
    let sent = false;
    for await (const event of client.events(id)) {
      seen.push(event.id);
      if (seen.length === stored.length && !sent) {
        sent = true;
        await client.sendMessage(id, "the last one");
      }
      if (seen.length === stored.length + 1) break;
    }
    expect(seen).toEqual(await allStoredIds(client, id));
    await until(() => ref.server.live.connections === 0, () => `${ref.server.live.connections} connections`);
  });

  it("throws the LiveError of a fatal close", async () => {
    const client = createClient({ baseUrl: ref.url, apiKey: KEY });
    const iterate = async () => {
      for await (const _ of client.events(randomUUID())) void _;
    };
    await expect(iterate()).rejects.toMatchObject({ code: 4004 });
  });
});

describe("exactly once, in order, across reconnects", () => {
  it("200 clients reconnecting at random while 1,000 events/s are appended each receive the stored list", async () => {
    const proxy = await startTcpProxy(ref.server.port);
    const writer = createClient({ baseUrl: ref.url, apiKey: KEY });
    const id = await conversationWith(writer);
    const client = createClient({ baseUrl: proxy.url, apiKey: KEY });
    const lists: string[][] = Array.from({ length: 200 }, () => []);
    let reconnects = 0;
    const subs = lists.map((list) =>
      client.subscribe(id, { onEvent: (e) => list.push(e.id), onStatus: (s) => (s === "reconnecting" ? reconnects++ : 0), backoff: fast }),
    );
    // Producer: one event a millisecond on average, in 10 ms batches, for 2 s.
    let random = 42;
    const next = () => ((random = (random * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let tick = 0; tick < 200; tick++) {
      for (let i = 0; i < 10; i++) ref.server.conversations.sendMessage(id, { role: "user", content: [{ type: "text", text: `t${tick}.${i}` }] });
      if (tick % 10 === 5) proxy.cutRandom(20, next);
      await new Promise((r) => setTimeout(r, 10));
    }
    const expected = await allStoredIds(writer, id);
    expect(expected).toHaveLength(stored.length + 2000);
    await until(
      () => lists.every((l) => l.length >= expected.length),
      () => `shortest ${Math.min(...lists.map((l) => l.length))} of ${expected.length}`,
      60_000,
    );
    for (const list of lists) expect(list).toEqual(expected);
    expect(reconnects).toBeGreaterThanOrEqual(100);
    for (const sub of subs) sub.close();
    await proxy.close();
  });

  it("a slow consumer is closed with 4429 and resumes without loss", async () => {
    const slow = await startReferenceServer([], { live: { maxBufferedBytes: 64 * 1024 } });
    const proxy = await startTcpProxy(slow.server.port);
    try {
      const writer = createClient({ baseUrl: slow.url, apiKey: KEY });
      const id = await conversationWith(writer);
      const received: string[] = [];
      const closes: Array<number | undefined> = [];
      const sub = createClient({ baseUrl: proxy.url, apiKey: KEY }).subscribe(id, {
        onEvent: (e) => received.push(e.id),
        onStatus: (s, d) => (s === "reconnecting" ? closes.push(d.code) : 0),
        backoff: fast,
      });
      await until(() => received.length === stored.length, () => `${received.length}`);
      proxy.stall(true); // the network stops delivering to this client
      const big = "x".repeat(32 * 1024);
      for (let i = 0; i < 400; i++) slow.server.conversations.sendMessage(id, { role: "user", content: [{ type: "text", text: `${i} ${big}` }] });
      // The server closed it while these were being recorded (its buffer passed 64 KiB at once);
      // the close frame queues behind the unsent events until the network delivers again.
      proxy.stall(false);
      await until(() => closes.length > 0, () => "no close yet");
      const expected = await allStoredIds(writer, id);
      await until(() => received.length >= expected.length, () => `${received.length} of ${expected.length}`);
      expect(closes[0]).toBe(4429);
      expect(received).toEqual(expected);
      sub.close();
    } finally {
      await proxy.close();
      await slow.close();
    }
  });

  it("drops a duplicate id however the server sends it", async () => {
    // A peer that misbehaves on purpose: it sends every event twice.
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    wss.on("connection", (ws) => {
      ws.send(JSON.stringify({ id: "s", timestamp: "2026-02-05T11:00:00", kind: "ConversationStateUpdateEvent", key: "full_state", value: { last_event_id: null } }));
      for (const event of stored.slice(0, 3)) for (let i = 0; i < 2; i++) ws.send(JSON.stringify(event));
      // Frames arrive in order: once the client has this one, it has handled every duplicate.
      ws.send(JSON.stringify(stored[3]));
    });
    await new Promise((r) => wss.once("listening", r));
    const port = (wss.address() as { port: number }).port;
    const received: string[] = [];
    const sub = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY }).subscribe(randomUUID(), { onEvent: (e) => received.push(e.id) });
    await until(() => received.includes(stored[3]!.id), () => `${received.length}`);
    expect(received).toEqual(stored.slice(0, 4).map((e) => e.id));
    sub.close();
    await new Promise((r) => wss.close(r));
  });
});

describe("a server killed with SIGKILL and restarted on the same data", () => {
  const cli = fileURLToPath(new URL("../../server/dist/cli.js", import.meta.url));
  let dataDir: string;
  let child: ChildProcess | undefined;

  /** Starts the server on `port` (0: any free one); resolves with the port once it listens, rejects with its error output if it exits. */
  function launch(port: number): Promise<number> {
    const started = spawn(process.execPath, [cli, "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir, "--log-level", "warn"], {
      env: { ...process.env, SESSION_API_KEY: KEY },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = started;
    let stdout = "";
    let stderr = "";
    started.stderr!.on("data", (chunk: Buffer) => (stderr += chunk));
    return new Promise((resolve, reject) => {
      started.stdout!.on("data", (chunk: Buffer) => {
        stdout += chunk;
        const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout);
        if (listening) resolve(Number(listening[1]));
      });
      started.once("exit", (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
    });
  }

  /** Starts the server on the same `port` again; another process may take it in between, so retries while it is in use. */
  async function relaunch(port: number): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await launch(port);
        return;
      } catch (error) {
        if (attempt === 20 || !/EADDRINUSE/.test(String(error))) throw error;
      }
    }
  }

  afterAll(async () => {
    child?.kill("SIGKILL");
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("the subscribed client receives every event exactly once, in order", async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "acs-client-kill-"));
    // Port 0: the server takes a free port itself (probing one first races other processes for it).
    const port = await launch(0);
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY });
    const id = await conversationWith(client);
    const received: string[] = [];
    const statuses: LiveStatus[] = [];
    const sub = client.subscribe(id, { onEvent: (e) => received.push(e.id), onStatus: (s) => statuses.push(s), backoff: { initialMs: 50, maxMs: 200 } });

    // A producer over HTTP that keeps going through the outage (a lost answer may or may not have
    // been stored: the stored list is the truth).
    let producing = true;
    let sent = 0;
    const producer = (async () => {
      while (producing) {
        try {
          await client.sendMessage(id, `message ${sent}`, { signal: AbortSignal.timeout(2_000) });
          sent++;
        } catch {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    })();
    await until(() => received.length > stored.length + 50, () => `${received.length}`);
    child!.kill("SIGKILL"); // in the middle of the stream
    await new Promise((r) => child!.once("exit", r));
    await relaunch(port);
    const before = sent;
    await until(() => sent > before + 50, () => `${sent - before} sent after restart`);
    producing = false;
    await producer;
    const expected = await allStoredIds(client, id);
    await until(() => received.length >= expected.length, () => `${received.length} of ${expected.length}`);
    expect(received).toEqual(expected);
    expect(new Set(received).size).toBe(received.length);
    expect(statuses).toContain("reconnecting");
    sub.close();
    child!.kill("SIGTERM");
    await new Promise((r) => child!.once("exit", r));
    child = undefined;
  });
});
