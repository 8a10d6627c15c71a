/**
 * @packageDocumentation
 * MSW handlers backed by the mock's world, for a frontend's unit tests without any server: each
 * intercepted request is injected (a real request and response on an in-memory socket) into the very handler `acs-mock` serves
 * (Prism in front of the reference server's code), so status codes, 422 `loc`s, paging cursors and
 * stored state are the same as against the running mock. Node only (jsdom or happy-dom tests run in
 * Node): the world is the server's code with SQLite, which cannot run in a browser.
 *
 * ```ts
 * import { setupServer } from "msw/node";
 * import { createMockHandlers } from "@acs-toolkit/mock/msw";
 *
 * const mock = await createMockHandlers({ baseUrl: "http://localhost:4010", speed: "instant" });
 * const server = setupServer(...mock.handlers);
 * server.listen();
 * // … fetch("http://localhost:4010/api/conversations/<id>/events/search") in the code under test …
 * server.close();
 * mock.close();
 * ```
 */
import { http, HttpResponse, type HttpHandler } from "msw";
import { injectRequest } from "./inject.js";
import { basePath, mockUrlPattern } from "./url-pattern.js";

export { mockUrlPattern };
import { createMock, type MockOptions } from "./mock.js";
import type { NodeHandler } from "./front.js";
import type { World } from "./world.js";

export interface MockHandlersOptions extends Omit<MockOptions, "host" | "port"> {
  /**
   * Origin (and optional path prefix) the code under test calls, e.g. `http://localhost:4010`. Default
   * `*`: the mock's paths (`/api/…`, `/health`, `/openapi.json`, `/asyncapi.json`, `/docs`, `/__mock`) on any origin.
   */
  baseUrl?: string;
}

export interface MockHandlers {
  /** Pass them to `setupServer(...handlers)` (or `server.use(...)`). */
  handlers: HttpHandler[];
  /** The world behind them: scenarios (`world.scenarios[i].conversationId`), store, conversations. */
  world: World;
  /** The Node handler the requests are injected into. */
  handler: NodeHandler;
  /** Cancels streams and drops the world. */
  close(): void;
}

/** Builds a world (as `acs-mock` would, default speed `instant`) and MSW handlers answering from it. */
export async function createMockHandlers(options: MockHandlersOptions = {}): Promise<MockHandlers> {
  const { world, handler } = await createMock({ speed: "instant", logLevel: "silent", ...options });
  const prefix = basePath(options.baseUrl);
  const intercept = http.all(mockUrlPattern(options.baseUrl), async ({ request }) => {
    const url = new URL(request.url);
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : Buffer.from(await request.arrayBuffer());
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const reply = await injectRequest(handler, { method: request.method, url: url.pathname.slice(prefix.length) + url.search, headers, ...(body && { body }) });
    const responseHeaders = new Headers();
    for (const [name, value] of reply.headers) {
      if (["content-length", "transfer-encoding", "connection", "keep-alive", "date"].includes(name)) continue;
      responseHeaders.append(name, value);
    }
    const noBody = reply.status === 204 || reply.status === 304 || request.method === "HEAD";
    return new HttpResponse(noBody ? null : new Uint8Array(reply.body), { status: reply.status, headers: responseHeaders });
  });
  return { handlers: [intercept], world, handler, close: () => world.close() };
}
