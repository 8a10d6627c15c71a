/**
 * What the suite's tests run against: the real reference server (ephemeral port, fresh data
 * directory), and thin HTTP proxies in front of it that corrupt one behaviour each, so that the
 * suite can be shown to catch it.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import http, { type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { seededRandom } from "@acs-toolkit/schema/examples";
import { createLogger, parseConfig, recordedTimestamp, startServer, type ConversationRuntime, type RunningServer, type RuntimeContext } from "@acs-toolkit/server";

export const KEY = "conformance-test-key-0123456789";

export interface ReferenceServer {
  url: string;
  server: RunningServer;
  close(): Promise<void>;
}

/**
 * The reference server on 127.0.0.1, any free port, a fresh data directory, quiet; `flags` as on its
 * command line, and the runtime that runs its conversations (none by default).
 */
export async function startReference(flags: string[] = [], runtime?: ConversationRuntime): Promise<ReferenceServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "acs-conformance-"));
  const server = await startServer(parseConfig(["--port", "0", "--data-dir", dataDir, ...flags], {}), {
    env: { SESSION_API_KEY: KEY },
    log: createLogger("silent"),
    shutdownGraceMs: 1_000,
    runtime,
  });
  return {
    url: server.url,
    server,
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A request as the proxy received it; `url` is relative to the proxy and may be rewritten. */
interface ProxiedRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface ProxiedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One corrupted behaviour. Every hook is optional; without hooks the proxy is transparent. */
interface Corruption {
  /** Rewrite the request (its `url` in place), or answer it without asking upstream. */
  request?(request: ProxiedRequest): ProxiedResponse | void;
  /** Rewrite the upstream answer. */
  response?(request: ProxiedRequest, response: ProxiedResponse): ProxiedResponse;
  /** Refuse WebSocket upgrades with this HTTP status instead of passing them on. */
  refuseUpgrades?: number;
}

export interface Proxy {
  url: string;
  close(): Promise<void>;
}

const json = (status: number, value: unknown): ProxiedResponse => ({ status, headers: { "content-type": "application/json" }, body: Buffer.from(JSON.stringify(value)) });

/** A real HTTP (and WebSocket) proxy in front of `upstream` that applies `corruption`. */
export async function startProxy(upstream: string, corruption: Corruption = {}): Promise<Proxy> {
  const target = new URL(upstream);
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request: ProxiedRequest = { method: req.method!, url: new URL(req.url!, "http://proxy"), headers: req.headers, body: Buffer.concat(chunks) };
      const send = (response: ProxiedResponse) => {
        const headers = { ...response.headers, "content-length": String(response.body.length) };
        delete headers["transfer-encoding"];
        res.writeHead(response.status, headers);
        res.end(response.body);
      };
      const early = corruption.request?.(request);
      if (early) return send(early);
      const forwarded = http.request(
        { host: target.hostname, port: target.port, method: request.method, path: `${request.url.pathname}${request.url.search}`, headers: { ...request.headers, host: target.host } },
        (upstreamResponse) => {
          const body: Buffer[] = [];
          upstreamResponse.on("data", (chunk: Buffer) => body.push(chunk));
          upstreamResponse.on("end", () => {
            const response = { status: upstreamResponse.statusCode!, headers: upstreamResponse.headers, body: Buffer.concat(body) };
            send(corruption.response ? corruption.response(request, response) : response);
          });
        },
      );
      forwarded.on("error", (error) => send(json(502, { detail: `proxy: ${error.message}` })));
      forwarded.end(request.body);
    });
  });
  // WebSocket upgrades are passed through as raw bytes (the request head re-sent upstream), or refused.
  server.on("upgrade", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    if (corruption.refuseUpgrades) {
      client.end(`HTTP/1.1 ${corruption.refuseUpgrades} Refused\r\nContent-Type: application/json\r\nContent-Length: 23\r\nConnection: close\r\n\r\n{"detail":"Not Found"}\n`);
      return;
    }
    const upstreamSocket = net.connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstreamSocket.write(`${lines.join("\r\n")}\r\n\r\n`);
      upstreamSocket.write(head);
      client.pipe(upstreamSocket).pipe(client);
    });
    sockets.add(upstreamSocket);
    upstreamSocket.on("close", () => sockets.delete(upstreamSocket));
    upstreamSocket.on("error", () => client.destroy());
    client.on("error", () => upstreamSocket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const isSearch = (request: ProxiedRequest) => request.method === "GET" && request.url.pathname.endsWith("/events/search");

/** Deliberately broken implementations: each corrupts one behaviour of the reference server. */
export const BROKEN: Record<string, () => Corruption> = {
  /** Search ignores the `source` filter. */
  "ignores the source filter": () => ({
    request(request) {
      if (isSearch(request)) request.url.searchParams.delete("source");
    },
  }),
  /** Every page after the first loses its first event. */
  "loses an event between pages": () => ({
    response(request, response) {
      if (!isSearch(request) || !request.url.searchParams.has("page_id") || response.status !== 200) return response;
      const page = JSON.parse(response.body.toString("utf8"));
      page.items.shift();
      return { ...response, body: Buffer.from(JSON.stringify(page)) };
    },
  }),
  /** limit=101 crashes with 500 (as the original implementation did). */
  "answers 500 to limit=101": () => ({
    request(request) {
      if (isSearch(request) && request.url.searchParams.get("limit") === "101") return json(500, { detail: "Internal Server Error" });
    },
  }),
  /** GET /api/settings returns the stored llm_api_key instead of blanking it. */
  "leaks a stored secret in GET /api/settings": () => {
    let stored: string | undefined;
    return {
      request(request) {
        if (request.method === "POST" && request.url.pathname === "/api/settings") {
          try {
            const body = JSON.parse(request.body.toString("utf8"));
            if (typeof body?.llm_api_key === "string") stored = body.llm_api_key;
          } catch {
            // not JSON: nothing to remember
          }
        }
      },
      response(request, response) {
        if (request.method !== "GET" || request.url.pathname !== "/api/settings" || response.status !== 200 || !stored) return response;
        return { ...response, body: Buffer.from(JSON.stringify({ ...JSON.parse(response.body.toString("utf8")), llm_api_key: stored })) };
      },
    };
  },
};

/** An implementation of the interface alone: no live channel, no `POST …/events`. */
export const INTERFACE_ONLY: Corruption = {
  refuseUpgrades: 404,
  request(request) {
    if (request.method === "POST" && /\/api\/conversations\/[^/]+\/events$/.test(request.url.pathname)) return json(404, { detail: "Not Found" });
  },
};

/** A runtime that records events of its own, and how many it recorded. */
export interface AppendingRuntime extends ConversationRuntime {
  readonly recorded: number;
  /** Stops every clock (before the server closes). */
  stop(): void;
}

/**
 * An agent that records on its own clock, as a real one does while a client reads: from its start
 * every conversation gets one to three state updates every 20 to 150 ms, for as long as the runtime
 * runs, and every user message (whether it runs the agent or not) a turn of three events a few
 * milliseconds apart. Pacing comes from a seed, so runs differ only by scheduling.
 */
export function appendingRuntime(seed = 14): AppendingRuntime {
  const random = seededRandom(seed);
  const timers = new Set<NodeJS.Timeout>();
  let recorded = 0;
  let stopped = false;
  const later = (ms: number, task: () => Promise<void>) => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped) task().catch(() => {}); // a conversation the suite made unreadable: nothing to do
    }, ms);
    timers.add(timer);
  };
  const record = async (context: RuntimeContext, events: Array<Record<string, unknown>>) => {
    await context.record(events.map((event) => ({ id: randomUUID(), timestamp: recordedTimestamp(), source: "environment", ...event })) as never);
    recorded += events.length;
  };
  const update = (value: string) => ({ key: "execution_status", value, kind: "ConversationStateUpdateEvent" });
  const tick = (context: RuntimeContext) =>
    later(20 + random() * 130, async () => {
      const count = 1 + Math.floor(random() * 3);
      await record(context, Array.from({ length: count }, (_, i) => update(i % 2 ? "idle" : "running")));
      tick(context);
    });
  return {
    initialStatus: "RUNNING",
    get recorded() {
      return recorded;
    },
    start(_conversation, context) {
      tick(context);
    },
    onUserMessage(_conversation, _message, context) {
      later(random() * 10, () => record(context, [update("running")]));
      later(5 + random() * 10, () =>
        record(context, [{ source: "agent", llm_message: { role: "assistant", content: [{ type: "text", text: "noted" }] }, llm_response_id: "resp-1", kind: "MessageEvent" }]),
      );
      later(15 + random() * 10, () => record(context, [update("finished")]));
    },
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
