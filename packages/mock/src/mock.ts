/** Starts the mock: a world, Prism in front of it, the live channel, on one HTTP server. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { answerClientErrors, attachLiveEvents, createLogger, guardRequestTarget, outlastClientKeepAlive } from "@acs-toolkit/server";
import { createPrismFront, frontHandler, type Front, type FrontOptions, type NodeHandler } from "./front.js";
import { createWorld, type World, type WorldOptions } from "./world.js";

export interface MockOptions extends WorldOptions, FrontOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 4010; 0 for any free port. */
  port?: number;
  /** pino level of the request log when `log` is not given. Default `warn`. */
  logLevel?: string;
  /** Live channel heartbeat, ms (the server's default 30 s). */
  heartbeatMs?: number;
}

export interface RunningMock {
  /** `http://host:port` */
  url: string;
  /** `ws://host:port`, the base of `/sockets/events/{conversation_id}`. */
  wsUrl: string;
  port: number;
  world: World;
  http: Server;
  /** The handler mounted on `http` (Prism in front of the world). */
  handler: NodeHandler;
  /** Closes live connections, stops accepting, cancels streams and drops the world. Idempotent. */
  close(): Promise<void>;
}

/** A world and its front, without a listening server (what the MSW handlers use). */
export async function createMock(options: MockOptions = {}): Promise<{ world: World; handler: NodeHandler; front: Front }> {
  const log = options.log ?? createLogger(options.logLevel ?? "warn");
  const world = createWorld({ ...options, log });
  try {
    await world.ready;
    const front = await createPrismFront(world, { ...options, corsOrigins: options.corsOrigins ?? ["*"] });
    return { world, handler: frontHandler(world, front), front };
  } catch (error) {
    world.close();
    throw error;
  }
}

/** Starts the mock on `host:port` (default 127.0.0.1:4010). */
export async function startMock(options: MockOptions = {}): Promise<RunningMock> {
  const { world, handler } = await createMock(options);
  const http = createServer(guardRequestTarget(handler));
  answerClientErrors(http); // Node's 400/431/408 in the interface's JSON shape, as on the server
  outlastClientKeepAlive(http);
  // The server's live channel on the same world: the same replay/live join, auth, close codes.
  const live = attachLiveEvents(http, {
    store: world.store,
    bus: world.bus,
    conversations: world.conversations,
    keys: world.keys,
    publicRead: world.publicRead,
    log: world.log,
    // The bash-events socket answers as the world's execute_bash_command: the mock runs no commands.
    bashEvents: world.api,
    ...(options.heartbeatMs !== undefined && { heartbeatMs: options.heartbeatMs }),
  });
  const host = options.host ?? "127.0.0.1";
  try {
    await new Promise<void>((resolve, reject) => {
      http.once("error", reject);
      http.listen(options.port ?? 4010, host, () => {
        http.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await live.close();
    world.close();
    throw error;
  }
  const { port } = http.address() as AddressInfo;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${port}`,
    wsUrl: `ws://${shownHost}:${port}`,
    port,
    world,
    http,
    handler,
    close: () =>
      (closing ??= (async () => {
        await live.close();
        await new Promise<void>((resolve) => {
          http.close(() => resolve());
          http.closeIdleConnections();
          setTimeout(() => http.closeAllConnections(), 2_000).unref();
        });
        world.close();
      })()),
  };
}
