/** The Express application: every route of the spec, wired to explicit dependencies. */
import type { IncomingMessage, ServerResponse } from "node:http";
import express, { type RequestHandler } from "express";
import { asyncapiDocument, openapiDocument } from "@acs-toolkit/schema/documents";
import type { EventBus } from "./core/bus.js";
import type { ServerConfig } from "./config.js";
import { ConversationService } from "./conversations.js";
import { createCursorCodec } from "./cursor.js";
import { requireSessionKey } from "./http/auth.js";
import { cors, corsHeaders } from "./http/cors.js";
import { errorHandler, unknownRoute } from "./http/errors.js";
import { failedFastRead, fastReads } from "./http/fast-reads.js";
import { jsonBody, jsonBodyBytes } from "./http/json-body.js";
import { answerOptions } from "./http/options.js";
import { pathTemplates, rejectMalformedPathEscapes } from "./http/path-encoding.js";
import { parseQueryString } from "./http/query.js";
import { sharedRequestValidators } from "./validation/request-validators.js";
import { createKeyCheck } from "./keys.js";
import type { Logger } from "./log.js";
import { controlRoutes } from "./routes/control.js";
import { conversationRoutes } from "./routes/conversations.js";
import { eventReads, eventRoutes } from "./routes/events.js";
import { fileRoutes } from "./routes/files.js";
import { metaRoutes } from "./routes/meta.js";
import { settingsRoutes } from "./routes/settings.js";
import type { ConversationRuntime } from "./core/runtime.js";
import type { SecretCipher } from "./secrets.js";
import type { EventStore } from "./store/types.js";
import { WorkerPool } from "./workers/pool.js";
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
  version: string;
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

export function createApp(deps: AppDeps): App {
  const { config, store, log } = deps;
  const writeHealth = deps.writeHealth ?? new WriteHealth(config.dataDir);
  const validators = sharedRequestValidators(openapiDocument);
  // One import thread: large replays are parsed and validated there (workers/import-worker.ts).
  const imports = new WorkerPool("import-worker", 1, {});
  const conversations = new ConversationService(store, deps.bus, deps.runtime, imports);
  const keyCheck = createKeyCheck(deps.keys);
  const auth = requireSessionKey(keyCheck);
  const readAuth: RequestHandler = config.publicRead ? (_req, _res, next) => next() : auth;
  const json = jsonBody(config.jsonLimitBytes);
  const cursors = createCursorCodec(deps.cursorSecret);
  const reads = eventReads({ store, cursors });
  // Event search and count, the hot reads, ahead of Express (same answers; see http/fast-reads.ts).
  const fast = fastReads({
    reads,
    mayRead: config.publicRead ? () => true : (req) => keyCheck(req.headers["x-session-api-key"] as string | undefined),
    cors: corsHeaders(config.corsOrigins),
    log,
  });

  const app = express();
  app.disable("x-powered-by");
  // No ETag: hashing every body (a page of 100 events is tens of kB) costs more than it saves, and
  // clients of a live record of events do not revalidate pages.
  app.set("etag", false);
  app.set("query parser", parseQueryString); // repeated parameters arrive as arrays and are refused, no nested objects
  app.use(requestLog(log));
  app.use(noteWrites(writeHealth));
  app.use(cors(config.corsOrigins));
  const templates = pathTemplates(openapiDocument);
  app.use(rejectMalformedPathEscapes(templates, unknownRoute));
  app.use(answerOptions(templates, unknownRoute));
  app.use(failedFastRead);
  app.use(metaRoutes({ store, writeHealth, fileIoHealth: deps.fileIoHealth ?? new FileIoHealth({ dir: config.dataDir }), openapi: deps.apiDocument ?? openapiDocument, asyncapi: asyncapiDocument, version: deps.version }));
  app.use(eventRoutes({ store, cursors, readAuth, reads }));
  app.use(conversationRoutes({ store, conversations, validators, auth, json, jsonBytes: jsonBodyBytes(config.jsonLimitBytes), jsonLimitBytes: config.jsonLimitBytes }));
  app.use(controlRoutes({ store, conversations, controls: deps.runtime.controls, validators, auth, json }));
  app.use(settingsRoutes({ store, cipher: deps.cipher, validators, auth, json }));
  app.use(fileRoutes({ store, validators, auth, dataDir: config.dataDir, limits: config.uploadLimits, owner: deps.fileOwner, log }));
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
  return { app, conversations, close: () => imports.close() };
}
