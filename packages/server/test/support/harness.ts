/**
 * Black-box test harness: a real server on an ephemeral loopback port with a fresh data directory,
 * log lines captured, and every JSON response checkable against the spec.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { expect } from "vitest";
import { httpCaller, type Call, type Reply } from "@acs-toolkit/test-kit/http";
import { RequestValidators } from "../../src/validation/request-validators.js";
import { createLogger } from "../../src/log.js";
import { parseConfig, type ServerConfig } from "../../src/config.js";
import { startServer, type RunningServer, type StartOptions } from "../../src/server.js";

export const KEY = "test-session-key-0123456789";

export const specValidators = new RequestValidators(openapiDocument);
export type { Reply };

export interface TestServer {
  url: string;
  dataDir: string;
  server: RunningServer;
  /** Every log line the server wrote. */
  logs: string[];
  /**
   * Sends a request. `key: null` sends no key; `json` is sent as a JSON body; `query` is appended.
   */
  call: Call;
  close(): Promise<void>;
}

export async function startTestServer(
  flags: string[] = [],
  env: NodeJS.ProcessEnv = {},
  existingDataDir?: string,
  options: Pick<StartOptions, "live" | "http" | "runtime" | "agent" | "fileIoHealth"> = {},
): Promise<TestServer> {
  const dataDir = existingDataDir ?? (await mkdtemp(path.join(tmpdir(), "acs-server-")));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  const config: ServerConfig = parseConfig(["--port", "0", "--data-dir", dataDir, ...flags], {});
  const server = await startServer(config, { ...options, env: { SESSION_API_KEY: KEY, ...env }, log: createLogger("debug", sink) });
  const call = httpCaller(server.url, KEY);
  return {
    url: server.url,
    dataDir,
    server,
    logs,
    call,
    async close() {
      await server.close();
      // A sandboxed process killed as the server stopped may still have been creating entries in its
      // workspace: rm retries (ENOTEMPTY) instead of failing the test that closes the server.
      if (!existingDataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/** Asserts the reply's status and that its JSON body is what the spec says for that status. */
export function expectConforms(operationId: string, reply: Reply, status: number): void {
  expect(reply.status, reply.text).toBe(status);
  expect(specValidators.response(operationId, status, reply.body)).toEqual([]);
}

/** Asserts a 422 HTTPValidationError with an entry at `loc`. */
export function expect422(operationId: string, reply: Reply, loc: Array<string | number>): void {
  expectConforms(operationId, reply, 422);
  const locs = (reply.body.detail as Array<{ loc: unknown[] }>).map((d) => d.loc);
  expect(locs, reply.text).toContainEqual(loc);
}
