import type { Server } from "node:http";

/**
 * How long an idle keep-alive connection stays open. Longer than the 5 s for which Node's own
 * client agents (and so proxies built on them, such as the OpenHands web UI's static server) keep
 * an idle socket: with Node's default of 5 s on both sides, a proxy that reuses its socket just as
 * the server closes it gets "socket hang up" and answers 502. Common proxies idle for 60 s.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Keeps idle keep-alive connections open past the idle time of the clients and proxies in front. */
export function outlastClientKeepAlive(server: Server): void {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
}
