/**
 * Test harness: a real mock on an ephemeral loopback port, and a `call` that checks EVERY response
 * the mock sends against the spec's response schema for its operation and status (so "every
 * response validates" holds for the whole suite, not for chosen ones).
 */
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { expect } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLogger, parseConfig, RequestValidators, startServer } from "@acs-toolkit/server";
import { httpCaller, type Call, type Reply } from "@acs-toolkit/test-kit/http";
import { DEFAULT_MOCK_KEY, startMock, type MockOptions, type RunningMock } from "../src/index.js";

export const KEY = DEFAULT_MOCK_KEY;
export type { Reply };

/** The validators of the spec's requests and responses (the server's, over the bundled spec). */
export const specValidators = new RequestValidators(openapiDocument);

/** The reference server's key in {@link startReferenceServer}. */
export const SERVER_KEY = "test-session-key-0123456789";

/** A real reference server on an ephemeral loopback port, with a fresh data directory. */
export async function startReferenceServer(): Promise<{ url: string; call: Call; close(): Promise<void> }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "acs-mock-reference-"));
  const server = await startServer(parseConfig(["--port", "0", "--data-dir", dataDir], {}), { env: { SESSION_API_KEY: SERVER_KEY }, log: createLogger("silent") });
  return {
    url: server.url,
    call: httpCaller(server.url, SERVER_KEY),
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

type Options = { key?: string | null; json?: unknown; body?: BodyInit; headers?: Record<string, string>; query?: Record<string, string | number | string[]> };

/** operationId of a request, from the spec's paths (null for routes that are not in the spec). */
const OPERATIONS: Array<{ method: string; pattern: RegExp; operationId: string }> = Object.entries(openapiDocument.paths as Record<string, Record<string, { operationId?: string }>>).flatMap(
  ([path, item]) =>
    Object.entries(item).flatMap(([method, op]) =>
      op.operationId ? [{ method: method.toUpperCase(), pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`), operationId: op.operationId }] : [],
    ),
);

/** The statuses the spec documents for a request's operation. */
function documentedStatuses(method: string, pathname: string): string[] {
  for (const [path, item] of Object.entries(openapiDocument.paths as Record<string, Record<string, { responses?: object }>>)) {
    if (new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(pathname) && item[method.toLowerCase()]) return Object.keys(item[method.toLowerCase()]!.responses ?? {});
  }
  return [];
}

export function operationOf(method: string, pathname: string): string | null {
  return OPERATIONS.find((o) => o.method === method.toUpperCase() && o.pattern.test(pathname))?.operationId ?? null;
}

/**
 * Asserts that a reply is what the spec says for its operation and status. A failure injected on
 * purpose (`Prefer: code=` with a status the spec does not list) is checked as the interface's error
 * shape `{"detail": string}`; routes outside the spec (docs assets, /__mock) are not checked.
 */
function expectSpecConforming(method: string, url: URL, reply: Reply, injectedFailure = false): void {
  const operationId = operationOf(method, url.pathname);
  if (!operationId) return;
  const type = reply.headers.get("content-type") ?? "";
  if (injectedFailure) {
    expect(reply.body, reply.text).toEqual({ detail: expect.any(String) });
    return;
  }
  if (reply.status === 204) {
    expect(reply.text, `${method} ${url.pathname} answered 204 with a body`).toBe("");
    return;
  }
  if (!/json/.test(type)) {
    // Non-JSON answers of the spec: the download's bytes and the docs page.
    expect(["downloadFile", "getApiReference"], `${method} ${url.pathname} answered ${reply.status} ${type}`).toContain(operationId);
    return;
  }
  expect(specValidators.response(operationId, reply.status, reply.body), `${method} ${url.pathname} → ${reply.status} ${reply.text.slice(0, 300)}`).toEqual([]);
}

export interface TestMock {
  mock: RunningMock;
  url: string;
  /** Sends a request and checks the response against the spec (see {@link expectSpecConforming}). */
  call(method: string, route: string, options?: Options): Promise<Reply>;
  close(): Promise<void>;
}

export async function startTestMock(options: MockOptions = {}): Promise<TestMock> {
  const mock = await startMock({ port: 0, speed: "instant", logLevel: "silent", ...options });
  const call: TestMock["call"] = async (method, route, o = {}) => {
    const url = new URL(route, mock.url);
    for (const [name, value] of Object.entries(o.query ?? {})) {
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(v));
    }
    const headers: Record<string, string> = { ...o.headers };
    if (o.key !== null) headers["X-Session-API-Key"] = o.key ?? options.keys?.[0] ?? KEY;
    let body = o.body;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers["Content-Type"] ??= "application/json";
    }
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const reply: Reply = { status: response.status, headers: response.headers, text, body: parsed };
    const code = /code=(\d{3})/.exec(headers.Prefer ?? headers.prefer ?? "")?.[1];
    expectSpecConforming(method, url, reply, code !== undefined && !documentedStatuses(method, url.pathname).includes(code) && reply.status === Number(code));
    return reply;
  };
  return { mock, url: mock.url, call, close: () => mock.close() };
}
