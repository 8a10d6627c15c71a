/**
 * @packageDocumentation
 * MSW handlers of the mock that run in a browser (`setupWorker`, Storybook, a dev server), the live
 * channel included: `@acs-toolkit/mock/msw-browser`. The world is the mock's (the same scenarios
 * and ids under the same seed, the same scripted agent) on the server's in-memory store
 * (`@acs-toolkit/server/store`); nothing here imports a Node built-in or a native module, so Vite,
 * esbuild or webpack bundle it for the browser as is. HTTP goes through MSW's Service Worker
 * (serve `mockServiceWorker.js`, `npx msw init public/`); the live channel
 * (`/sockets/events/{conversation_id}`) through MSW's WebSocket API (`ws.link`, msw >= 2.6).
 *
 * ```ts
 * import { setupWorker } from "msw/browser";
 * import { createBrowserMockHandlers } from "@acs-toolkit/mock/msw-browser";
 *
 * const mock = await createBrowserMockHandlers({ baseUrl: "http://localhost:4010", scenarios: ["happy"] });
 * await setupWorker(...mock.handlers).start({ onUnhandledRequest: "bypass" });
 * const id = mock.world.scenarios[0]!.conversationId;
 * // fetch(`http://localhost:4010/api/conversations/${id}/events/search`),
 * // new WebSocket(`ws://localhost:4010/sockets/events/${id}?resend_all=true`)
 * ```
 */
import type { HttpHandler, WebSocketHandler } from "msw";
import { browserApi, browserHttpHandlers } from "./browser/http.js";
import { browserBashHandler, browserLiveHandler, liveUrlPattern } from "./browser/live.js";
import { createBrowserWorld, type BrowserWorld, type BrowserWorldOptions } from "./browser/world.js";

export { createBrowserWorld, BrowserConversations, BrowserBus, BrowserHttpError, BrowserValidationError, type BrowserWorld, type BrowserWorldOptions } from "./browser/world.js";
export { liveUrlPattern };
export type { ObservedBus, ScenarioWorld, ScenarioWorldOptions } from "./scenario-world.js";

/** Options of {@link createBrowserMockHandlers}. */
export interface BrowserMockHandlersOptions extends BrowserWorldOptions {
  /**
   * Origin (and optional path prefix) the code under test calls, e.g. `http://localhost:4010`; the
   * live channel is the same with `ws:` (`wss:` for `https:`). Default `*`: the mock's paths on any
   * origin (the page's own included).
   */
  baseUrl?: string;
}

/** The handlers and the world behind them. */
export interface BrowserMockHandlers {
  /** Pass them to `setupWorker(...handlers)` (or `worker.use(...)`): HTTP, the live channel and the bash-events socket. */
  handlers: Array<HttpHandler | WebSocketHandler>;
  /** The world: scenarios (`world.scenarios[i].conversationId`), store, conversations (`record` pushes to live clients). */
  world: BrowserWorld;
  /** Cancels streams and agent turns. */
  close(): void;
}

/**
 * Builds the browser world (default speed `instant`: every scenario stored at once) and MSW
 * handlers answering from it: event search and count (the server's paging and filters), creating
 * and reading a conversation, sending a message (the scripted agent answers with `run: true`),
 * settings (stored, read back masked), `GET /__mock`, and the live channel. Bad input gets the interface's 422 with the culprit's `loc`.
 */
export async function createBrowserMockHandlers(options: BrowserMockHandlersOptions = {}): Promise<BrowserMockHandlers> {
  const world = createBrowserWorld(options);
  try {
    await world.ready;
  } catch (error) {
    world.close();
    throw error;
  }
  const base = options.baseUrl ?? "*";
  const api = browserApi(world);
  return { handlers: [...browserHttpHandlers(world, base, api), browserLiveHandler(world, base), browserBashHandler(api, base)], world, close: () => world.close() };
}
