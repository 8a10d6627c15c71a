/**
 * The real reference server for the tests: a fresh data directory, an ephemeral loopback port, a
 * known key, silent logs. Closed (and its data removed) by `close()`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { parseConfig, startServer, type RunningServer, type StartOptions } from "@acs-toolkit/server";

export const KEY = "client-test-key-0123456789abcdef";

export interface ReferenceServer {
  url: string;
  server: RunningServer;
  close(): Promise<void>;
}

export async function startReferenceServer(flags: string[] = [], options: Pick<StartOptions, "live"> = {}): Promise<ReferenceServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "acs-client-"));
  const config = parseConfig(["--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir, "--log-level", "silent", ...flags], {});
  const server = await startServer(config, { ...options, env: { SESSION_API_KEY: KEY } });
  return {
    url: server.url,
    server,
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `count` distinct events covering every kind: batches of the spec-built example trajectory (55
 * events each), each batch with its own seed (so its own ids) and a later start (so timestamps keep
 * increasing).
 */
export function manyEvents(count: number): ReturnType<typeof exampleEvents> {
  const events: ReturnType<typeof exampleEvents> = [];
  const start = Date.UTC(2026, 1, 5, 11, 24, 45);
  for (let batch = 0; events.length < count; batch++) {
    events.push(...exampleEvents({ seed: batch + 1, start: new Date(start + batch * 1000) }));
  }
  return events.slice(0, count);
}

/** JSONL text of events, as `replay_json` takes it. */
export const jsonl = (events: readonly unknown[]) => events.map((event) => JSON.stringify(event)).join("\n");
