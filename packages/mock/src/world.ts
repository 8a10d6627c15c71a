/**
 * The mock's world IS the reference server: `createApp` from `@acs-toolkit/server` with the
 * server's in-memory store (`MemoryEventStore`, plain TypeScript: no native SQLite build for a world
 * that dies with the mock), the server's event bus and conversation service, and the mock's scripted
 * agent as the runtime. Search, paging, cursors, settings masking, uploads and live events are the
 * server's code, so the mock and the server cannot disagree about them.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import packageJson from "../package.json" with { type: "json" };
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { openMemoryStore } from "@acs-toolkit/server/store";
import type { Api } from "@acs-toolkit/server/api";
import { createApp, createCipher, createLogger, decodeRows, parseConfig, type App, type ConversationService, type Logger } from "@acs-toolkit/server";

type Express = App["app"];
import { mockApiDocument } from "./docs.js";
import { Scheduler, ScriptedAgent } from "./runtime.js";
import { ObservedBus, resolveScenarios, streamScenarios, type ScenarioWorld, type ScenarioWorldOptions } from "./scenario-world.js";
import { DEFAULT_MOCK_KEY, DEFAULT_START, MOCK_TITLE } from "./defaults.js";

export { DEFAULT_MOCK_KEY, DEFAULT_START };

/** Options of {@link createWorld}: those of every world, and the Node mock's own. */
export interface WorldOptions extends ScenarioWorldOptions {
  /** Browser origins allowed by CORS; default `["*"]` (any). `[]` turns CORS off. */
  corsOrigins?: string[];
  log?: Logger;
}

/** The running world: the server's Express app and its parts. */
export interface World extends ScenarioWorld {
  app: Express;
  /** The same operations without a transport (the Node MSW handlers call them). */
  api: Api;
  conversations: ConversationService;
  log: Logger;
  /**
   * The routes the world implements, as `METHOD /openapi/{path}`; a spec operation without one is
   * answered by Prism's examples.
   */
  routes: Set<string>;
}

/** Builds a world with its scenarios stored (and streaming, paced, once subscribed). */
export function createWorld(options: WorldOptions = {}): World {
  const seed = options.seed ?? 1;
  const speed = options.speed ?? 1;
  const log = options.log ?? createLogger("silent");
  const keys = options.keys?.length ? options.keys : [DEFAULT_MOCK_KEY];
  const publicRead = options.publicRead ?? true;
  // Uploads are streamed to disk by the server's code: a private folder that dies with the mock.
  const dataDir = mkdtempSync(path.join(tmpdir(), "acs-mock-"));
  const serverConfig = parseConfig(["--data-dir", dataDir], {});
  // Event batches come from the server's import thread as encoded rows (Node only).
  const store = openMemoryStore({ decodeRows });
  const bus = new ObservedBus();
  const scheduler = new Scheduler();
  const agent = new ScriptedAgent({ seed, speed, scheduler, log });
  agent.store = store;
  const start = options.start ?? DEFAULT_START;
  const scenarios = resolveScenarios(options.scenarios, { seed, start });
  const { app, api, conversations, close: closeApp } = createApp({
    config: { ...serverConfig, publicRead, corsOrigins: options.corsOrigins ?? ["*"] },
    store,
    bus,
    runtime: agent,
    log,
    keys,
    cipher: createCipher(randomBytes(32)),
    // Cursors depend only on the seed: the same requests give the same next_page_id every run.
    cursorSecret: createHash("sha256").update(`acs-mock cursors ${seed}`).digest(),
    version: `${packageJson.version}-mock`,
    title: MOCK_TITLE,
    apiDocument: mockApiDocument(openapiDocument, { scenarios, publicRead }),
  });

  const { streamer, ready } = streamScenarios({ store, conversations, bus, scenarios, speed, scheduler, log, streamAtStart: options.streamAtStart });

  let closed = false;
  return {
    app,
    api,
    store,
    ready,
    bus,
    conversations,
    agent,
    streamer,
    scenarios,
    keys,
    publicRead,
    seed,
    speed,
    log,
    routes: expressRoutes(app),
    close() {
      if (closed) return;
      closed = true;
      scheduler.close();
      void closeApp();
      void store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
}

/** `METHOD /path/{param}` of every route the Express app has, in the OpenAPI path syntax. */
function expressRoutes(app: Express): Set<string> {
  const routes = new Set<string>();
  const walk = (stack: RouterLayer[] | undefined) => {
    for (const layer of stack ?? []) {
      if (layer.route) {
        const openapiPath = layer.route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
        for (const [method, on] of Object.entries(layer.route.methods)) if (on) routes.add(`${method.toUpperCase()} ${openapiPath}`);
      } else walk(layer.handle?.stack);
    }
  };
  walk((app as unknown as { router: { stack: RouterLayer[] } }).router.stack);
  return routes;
}
