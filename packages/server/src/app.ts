/** The Express application: every route of the spec, wired to explicit dependencies. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import express, { type RequestHandler } from "express";
import type { Health } from "@acs-toolkit/schema";
import { asyncapiDocument, openapiDocument } from "@acs-toolkit/schema/documents";
import { createApi, type Api, type CommandRunner } from "./api/index.js";
import { docsFiles } from "./api/docs.js";
import type { EventBus } from "./core/bus.js";
import type { CursorCodec } from "./core/cursor.js";
import type { ConversationRuntime } from "./core/runtime.js";
import type { ServerConfig } from "./config.js";
import { ConversationService } from "./conversation-service.js";
import { createCursorCodec } from "./signed-cursors.js";
import { cors, corsHeaders } from "./http/cors.js";
import { diskFiles } from "./http/disk-files.js";
import { errorHandler, unknownRoute } from "./http/errors.js";
import { fastReads, writeFastReply } from "./http/fast-reads.js";
import { apiRouter } from "./http/node-host.js";
import { answerOptions } from "./http/options.js";
import { rejectMalformedPathEscapes } from "./http/path-encoding.js";
import { parseQueryString } from "./http/query.js";
import { writeReply } from "./http/write-reply.js";
import { sharedRequestValidators } from "./validation/precompiled-validators.js";
import { createKeyCheck } from "./keys.js";
import type { Logger } from "./log.js";
import type { SecretCipher } from "./secrets.js";
import { readStoredSettings } from "./sealed-settings.js";
import type { EventStore } from "./store/types.js";
import { WorkerPool } from "./threads/pool.js";
import { IMPORT_WORKER } from "./workers/entries.js";
import { FileIoHealth } from "./file-io-health.js";
import { WriteHealth } from "./write-health.js";

export interface AppDeps {
  config: Pick<ServerConfig, "publicRead" | "corsOrigins" | "uploadLimits" | "jsonLimitBytes" | "dataDir">;
  store: EventStore;
  bus: EventBus;
  runtime: ConversationRuntime;
  log: Logger;
  /** Accepted X-Session-API-Key values. */
  keys: readonly string[];
  cipher: SecretCipher;
  /** Secret that signs page cursors (stable across restarts so cursors survive them). */
  cursorSecret: Buffer;
  /** The page cursors (default: signed with `cursorSecret`). */
  cursors?: CursorCodec;
  version: string;
  /** The server's name at /server_info (default: the reference server's). */
  title?: string;
  /**
   * The OpenAPI document served at /openapi.json and rendered at /docs. Default: the bundled spec
   * (requests are validated against the bundled spec whatever this is).
   */
  apiDocument?: Record<string, unknown>;
  /** Whether writes work (a full disk); one is made for `config.dataDir` when not given. */
  writeHealth?: WriteHealth;
  /** The probe of the file I/O thread pool /health reports (default: a stat of `config.dataDir` within 2 s). */
  fileIoHealth?: FileIoHealth;
  /** Who uploaded files belong to: the agent sandbox's user, for a server running as root. */
  fileOwner?: { uid: number; gid: number };
  /** Runs the bash routes' commands (the agent runtime's sandboxes); absent: none runs (ApiDeps.commands). */
  commands?: CommandRunner;
}

/**
 * A Node request handler. The app is an Express application, typed by what it is used for (so that
 * this package's types need no `@types/express`): `http.createServer(app)`, or mounted in another
 * Express or Connect app with `parent.use(app)`.
 */
export type RequestListener = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

export interface App {
  app: RequestListener;
  conversations: ConversationService;
  /** The operations the app answers with, without a transport (what an in-process host calls). */
  api: Api;
  /** Ends the app's worker threads (the import thread). */
  close(): Promise<void>;
}

/** Logs each request once it is answered: method, path without query, status, time. Never headers or bodies. */
function requestLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    // Below info (silent, warn, …) a request costs no timer and no listener.
    if (!log.isLevelEnabled("info")) return next();
    const start = process.hrtime.bigint();
    res.on("finish", () => {
      log.info({ method: req.method, path: req.path, status: res.statusCode, ms: Number(process.hrtime.bigint() - start) / 1e6 }, "request");
    });
    next();
  };
}

/** A successful write clears a remembered full disk (space was freed). */
function noteWrites(writeHealth: WriteHealth): RequestHandler {
  return (req, res, next) => {
    if (req.method === "POST") res.once("finish", () => res.statusCode < 400 && writeHealth.succeeded());
    next();
  };
}

/** dist/docs/ of this package: Swagger UI's two files (also when the code runs from src/, as in its tests, after a build). */
const docsAssets = () => path.join(path.dirname(createRequire(import.meta.url).resolve("@acs-toolkit/server/package.json")), "dist/docs");

/** /health's answer: the store answers, writes work, file I/O is not held. */
function healthCheck(store: EventStore, writeHealth: WriteHealth, fileIoHealth: FileIoHealth, version: string): () => Promise<Health> {
  return async () => {
    const [ok, stuck] = await Promise.all([store.ping().catch(() => false), fileIoHealth.check()]);
    // Reads may work while writes fail (a full disk): either makes the server unavailable.
    const failure = writeHealth.check();
    return {
      status: ok && !failure && !stuck ? "ok" : "unavailable",
      store: store.kind,
      version,
      writes: failure ? "failing" : "ok",
      file_io: stuck ? "stuck" : "ok",
      ...(stuck && { detail: `file I/O does not answer since ${stuck.since}: the thread pool that runs file system calls is held (uploads, downloads and agent runs wait)` }),
      ...(failure && { detail: `writes fail since ${failure.since}: the disk is full (${failure.cause})` }),
      ...(!ok && { detail: "the store does not answer" }),
    };
  };
}

export function createApp(deps: AppDeps): App {
  const { config, store, log } = deps;
  const writeHealth = deps.writeHealth ?? new WriteHealth(config.dataDir);
  // One import thread: large replays are parsed and validated there (workers/import-worker.ts).
  const imports = new WorkerPool(IMPORT_WORKER, 1, {});
  const conversations = new ConversationService(store, deps.bus, deps.runtime, imports);
  const keyCheck = createKeyCheck(deps.keys);
  const api = createApi({
    store,
    conversations,
    controls: deps.runtime.controls,
    validators: sharedRequestValidators(openapiDocument),
    cursors: deps.cursors ?? createCursorCodec(deps.cursorSecret),
    settings: { sealer: deps.cipher, read: (text) => readStoredSettings(text, deps.cipher) },
    files: diskFiles({ dataDir: config.dataDir, limits: config.uploadLimits, owner: deps.fileOwner }),
    health: healthCheck(store, writeHealth, deps.fileIoHealth ?? new FileIoHealth({ dir: config.dataDir }), deps.version),
    openapi: deps.apiDocument ?? openapiDocument,
    asyncapi: asyncapiDocument,
    keyAccepted: keyCheck,
    publicRead: config.publicRead,
    server: { version: deps.version, title: deps.title },
    workspaceRoot: path.resolve(config.dataDir, "uploads"),
    commands: deps.commands,
  });
  // Event search and count, the hot reads, ahead of Express (same operations; see http/fast-reads.ts).
  const fast = fastReads({ api, cors: corsHeaders(config.corsOrigins), log, writeHealth });

  const app = express();
  app.disable("x-powered-by");
  // No ETag: hashing every body (a page of 100 events is tens of kB) costs more than it saves, and
  // clients of a live record of events do not revalidate pages.
  app.set("etag", false);
  app.set("query parser", parseQueryString); // repeated parameters arrive as arrays (refused unless the parameter is an array), no nested objects
  app.use(requestLog(log));
  app.use(noteWrites(writeHealth));
  app.use(cors(config.corsOrigins));
  app.use(rejectMalformedPathEscapes(api.templates, unknownRoute));
  app.use(answerOptions(api.templates, unknownRoute));
  app.use(writeFastReply);
  app.use(apiRouter(api, { jsonLimitBytes: config.jsonLimitBytes, log, writeHealth }));
  for (const [file, reply] of docsFiles(asyncapiDocument)) app.get(file, (req, res) => writeReply(res, reply(req.headers.host)));
  app.use("/docs/assets", express.static(docsAssets(), { index: false, maxAge: "1h" }));
  app.use(unknownRoute);
  app.use(errorHandler(log, writeHealth));
  // Ahead of Express's own handling, whether the app is called (`http.createServer(app)`) or
  // mounted (a parent app calls `handle`); the app stays the Express app (the mock walks its routes).
  type Handle = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;
  const expressApp = app as unknown as { handle: Handle };
  const handle = expressApp.handle.bind(app);
  expressApp.handle = (req, res, next) => {
    if (!fast(req, res, () => handle(req, res, next))) handle(req, res, next);
  };
  return { app, conversations, api, close: () => imports.close() };
}
