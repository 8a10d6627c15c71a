/**
 * The real reference server for the tests: a fresh data directory, an ephemeral loopback port, a
 * known key, silent logs. Closed (and its data removed) by `close()`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { LIVE_ONLY_EVENT_KINDS } from "@acs-toolkit/schema";
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
 * `count` distinct events covering every kind (or every kind an agent server stores): batches of
 * the spec-built example trajectory, each batch with its own seed (so its own ids) and a later start
 * (so timestamps keep increasing).
 */
export function manyEvents(count: number, kinds: "every" | "stored" = "every"): ReturnType<typeof exampleEvents> {
  const events: ReturnType<typeof exampleEvents> = [];
  const start = Date.UTC(2026, 1, 5, 11, 24, 45);
  // "stored": what an agent server stores, never a live-only kind (a ServerErrorEvent frame answers a sent frame).
  const keep = (event: { kind: string }) => kinds === "every" || !(LIVE_ONLY_EVENT_KINDS as readonly string[]).includes(event.kind);
  for (let batch = 0; events.length < count; batch++) {
    events.push(...exampleEvents({ seed: batch + 1, start: new Date(start + batch * 1000) }).filter(keep));
  }
  return events.slice(0, count);
}

/** JSONL text of events, as `replay_json` takes it. */
export const jsonl = (events: readonly unknown[]) => events.map((event) => JSON.stringify(event)).join("\n");
