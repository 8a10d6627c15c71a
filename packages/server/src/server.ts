/** Starts the reference server: data directory, keys, store, HTTP; and stops it gracefully. */
import { createHmac } from "node:crypto";
import { createServer, type Server, type ServerOptions } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createApp } from "./app.js";
import { answerClientErrors, guardRequestTarget } from "./http/client-errors.js";
import { outlastClientKeepAlive } from "./http/keep-alive.js";
import { EventBus } from "./core/bus.js";
import type { ServerConfig } from "./config.js";
import type { ConversationService } from "./conversation-service.js";
import { loadSessionKeys, type SessionKeys } from "./keys.js";
import { attachLiveEvents, type LiveEvents, type LiveEventsOptions } from "./live/channel.js";
import { createLogger, type Logger } from "./log.js";
import type { FileIoHealth } from "./file-io-health.js";
import { PRIVATE_DIRECTORY_MODE, privateDirectorySync, SEARCHABLE_DIRECTORY_MODE } from "./private-files.js";
import type { AgentRuntimeOptions } from "@acs-toolkit/agent";
import { recordingRuntime, type ConversationRuntime } from "./core/runtime.js";
import { createCipher, loadSecretKey } from "./secrets.js";
import { openSqliteStore } from "./store/sqlite/index.js";
import { FencedPostgresStore, openPostgresStore, PostgresEventStore } from "./store/postgres/index.js";
import { startPostgresLiveFeed } from "./live/postgres-feed.js";
import { removeTemporaryFiles } from "./upload-folders.js";
import { WriteHealth } from "./write-health.js";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { validateEvent } from "@acs-toolkit/validator";
import type { EventStore } from "./store/types.js";
import { VERSION } from "./version.js";

export { VERSION } from "./version.js";

/** Reader threads of the store (store/sqlite/read-worker.ts). */
const READ_THREADS = 2;

export interface StartOptions {
  /** The runtime; default: the one `config.runtime` names. */
  runtime?: ConversationRuntime;
  /** Options of the agent runtime under `config.runtime` agent (an LLM factory, the sandbox, …), over those of the config. */
  agent?: AgentRuntimeOptions;
  /** The probe of the file I/O thread pool that /health reports (default: a stat of the data directory within 2 s). */
  fileIoHealth?: FileIoHealth;
  log?: Logger;
  env?: NodeJS.ProcessEnv;
  /** Milliseconds that in-flight requests get to finish on close before connections are cut. */
  shutdownGraceMs?: number;
  /** Tuning of the live channel (timeouts, buffer bound, heartbeat, connections per conversation). */
  live?: Pick<LiveEventsOptions, "authTimeoutMs" | "heartbeatMs" | "maxBufferedBytes" | "replayPageSize" | "maxPayloadBytes" | "maxConnectionsPerConversation">;
  /** Node's HTTP timeouts (defaults: Node's). A request past them is answered 408. */
  http?: Pick<ServerOptions, "requestTimeout" | "headersTimeout" | "connectionsCheckingInterval">;
}

export interface RunningServer {
  /** `http://host:port` */
  url: string;
  port: number;
  keys: SessionKeys;
  store: EventStore;
  bus: EventBus;
  conversations: ConversationService;
  http: Server;
  /** The WebSocket channel `/sockets/events/{conversation_id}`. */
  live: LiveEvents;
  /** What runs the conversations (the agent's under `--runtime agent`). */
  runtime: ConversationRuntime;
  /** Stops accepting, lets in-flight requests finish, closes the store. Idempotent. */
  close(): Promise<void>;
}

/** A temporary upload file in a shared data directory untouched this long is a dead instance's. */
const SHARED_UPLOAD_STALE_MS = 60 * 60_000;

export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const env = options.env ?? process.env;
  const log = options.log ?? createLogger(config.logLevel);
  // A root server's agent commands run as an unprivileged user, whose bwrap must reach the
  // workspaces: the data directory, `uploads` and `tmp` are then searchable (0711), never listable.
  const sandboxOwner = config.runtime === "agent" && process.getuid?.() === 0 ? config.sandboxUser : undefined;
  const dataDirMode = sandboxOwner ? SEARCHABLE_DIRECTORY_MODE : PRIVATE_DIRECTORY_MODE;
  const widerMode = privateDirectorySync(config.dataDir, dataDirMode);
  if (widerMode !== undefined) {
    log.warn({ dataDir: config.dataDir, was: `0${widerMode.toString(8)}` }, `the data directory was accessible to group or others; its mode is now 0${dataDirMode.toString(8)}`);
  }
  if (sandboxOwner) for (const dir of ["uploads", "tmp"]) privateDirectorySync(path.join(config.dataDir, dir), SEARCHABLE_DIRECTORY_MODE);
  // On PostgreSQL several instances may share the data directory: another one's uploads in progress stay.
  const leftovers = removeTemporaryFiles(path.join(config.dataDir, "uploads"), config.store ? { olderThanMs: SHARED_UPLOAD_STALE_MS } : {});
  if (leftovers > 0) log.info({ removed: leftovers }, "removed temporary upload files of an earlier run");
  const keys = loadSessionKeys(config.dataDir, env);
  const secretKey = loadSecretKey({ dataDir: config.dataDir, env, onWarning: (message) => log.warn(message) });
  // Counts and body searches on reader threads, the rows of large replays on the import writer:
  // they never hold the request thread.
  const store: EventStore = config.store
    ? await openPostgresStore({ url: config.store.url, maxConnections: config.store.maxConnections, statementTimeoutMs: config.store.statementTimeoutMs })
    : openSqliteStore({ file: path.join(config.dataDir, "acs.sqlite"), readThreads: READ_THREADS, importThread: true });
  const bus = new EventBus();
  // Several instances on one database: other instances' appends reach this one's subscribers.
  const feed = store instanceof PostgresEventStore ? await startPostgresLiveFeed(store, bus, log) : undefined;
  const writeHealth = new WriteHealth(config.dataDir);
  const cipher = createCipher(secretKey);
  // The agent runtime is loaded only when it runs: `@acs-toolkit/agent` (its MCP client, zod, …)
  // takes about 250 ms to load, which a server or mock with another runtime should not pay for.
  // On PostgreSQL, one agent per conversation across the instances that share the database.
  const leases =
    !options.runtime && config.runtime === "agent" && config.store && store instanceof FencedPostgresStore
      ? new (await import("./agent-cluster.js")).PostgresLeases({ store, log, ttlMs: config.store.leaseTtlMs, forwardTimeoutMs: config.store.forwardTimeoutMs })
      : undefined;
  const agentRuntime =
    !options.runtime && config.runtime === "agent"
      ? new (await import("./llm-agent-runtime.js")).AgentConversationRuntime({
          store,
          cipher,
          dataDir: config.dataDir,
          log,
          leases,
          idleCloseMs: config.agentIdleSeconds * 1000,
          agent: {
            allowHostExecution: config.allowHostExecution,
            allowNetwork: config.agentNetwork,
            runAs: config.sandboxUser,
            limits: config.sandboxLimits,
            cgroup: config.sandboxCgroup === "off" ? false : config.sandboxCgroup,
            ...options.agent,
          },
        })
      : undefined;
  const runtime = options.runtime ?? agentRuntime ?? recordingRuntime;
  const { app, api, conversations, close: closeApp } = createApp({
    config,
    store,
    bus,
    runtime,
    log,
    keys: keys.keys,
    cipher,
    cursorSecret: createHmac("sha256", secretKey).update("page cursors").digest(),
    version: VERSION,
    writeHealth,
    fileOwner: sandboxOwner,
    fileIoHealth: options.fileIoHealth,
    // The bash routes run commands in the agent's sandboxes; without the agent runtime, none runs.
    commands: agentRuntime?.commands,
  });

  // V8 compiles the event validators' large functions on their first call: about 40 ms for the
  // first replay that holds a SystemPromptEvent. One example of every kind now, so that no request
  // pays it with the event loop held.
  for (const event of exampleEvents()) validateEvent(event);

  const http = createServer(options.http ?? {}, guardRequestTarget(app));
  answerClientErrors(http);
  outlastClientKeepAlive(http);
  const live = attachLiveEvents(http, { ...options.live, store, bus, conversations, keys: keys.keys, publicRead: config.publicRead, log, writeHealth, bashEvents: api });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(config.port, config.host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  await runtime.open?.((id) => conversations.contextFor(id));
  const { port } = http.address() as AddressInfo;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  log.info({ url: `http://${host}:${port}`, dataDir: config.dataDir, store: store.kind, publicRead: config.publicRead, runtime: config.runtime }, "listening");

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= live.close().then(() => runtime.close?.()).then(() => new Promise<void>((resolve) => {
      const force = setTimeout(() => http.closeAllConnections(), options.shutdownGraceMs ?? 10_000);
      http.close(() => {
        clearTimeout(force);
        void closeApp();
        void feed?.close();
        // Resolved once the store is closed: a caller may remove the data directory then.
        void store.close().catch((error: unknown) => log.error({ err: error }, "closing the store failed")).finally(() => {
          log.info("stopped");
          resolve();
        });
      });
      http.closeIdleConnections();
    })));

  return { url: `http://${host}:${port}`, port, keys, store, bus, conversations, http, live, runtime, close };
}
