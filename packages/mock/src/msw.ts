/**
 * @packageDocumentation
 * MSW handlers backed by the mock's world, for a frontend's unit tests without any server: each
 * intercepted request goes through the front `acs-mock` serves (Prism's checks and mocker) and, where
 * Prism lets it pass, to the world's operations (`@acs-toolkit/server/api`, the reference server's
 * code), so status codes, 422 `loc`s, paging cursors and stored state are the same as against the
 * running mock. Node only (jsdom or happy-dom tests run in Node): the world keeps uploads on disk.
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
import { http, type HttpHandler } from "msw";
import { answerFetch, headersOf, toResponse } from "./fetch-host.js";
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
  /** The Node handler of the same front and world (mount it on an HTTP server to serve them). */
  handler: NodeHandler;
  /** Cancels streams and drops the world. */
  close(): void;
}

/** Builds a world (as `acs-mock` would, default speed `instant`) and MSW handlers answering from it. */
export async function createMockHandlers(options: MockHandlersOptions = {}): Promise<MockHandlers> {
  const { world, handler, front } = await createMock({ speed: "instant", logLevel: "silent", ...options });
  const prefix = basePath(options.baseUrl);
  const intercept = http.all(mockUrlPattern(options.baseUrl), async ({ request }) => {
    const url = new URL(request.url);
    const path = url.pathname.slice(prefix.length);
    let bytes: Uint8Array | undefined;
    const body = async () => (bytes ??= new Uint8Array(await request.arrayBuffer()));
    const answer = await front({
      method: request.method,
      url: path + url.search,
      headers: headersOf(request),
      readBody: async (limit) => {
        const read = await body();
        return { chunks: [read], overLimit: read.byteLength > limit };
      },
    });
    if ("reply" in answer) return toResponse(answer.reply, request.method);
    // What Prism passes, the world's operations answer, with the body as sent (read once already, or not at all).
    const passed = bytes === undefined ? request : new Request(request.url, { method: request.method, headers: request.headers, body: bytes as BodyInit });
    return answerFetch(world.api, passed, prefix);
  });
  return { handlers: [intercept], world, handler, close: () => world.close() };
}
