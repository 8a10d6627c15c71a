/**
 * The mock's world for a browser page: the same scenarios, scripted agent and store contract as the
 * Node world (world.ts), without the reference server's Express app, which needs Node. It is the
 * server's core (`@acs-toolkit/server/core`: the conversation service, the bus) on the server's
 * `MemoryEventStore` (`@acs-toolkit/server/store`), neither importing a Node built-in or a native
 * module; the scenarios load as in the Node world (scenario-world.ts).
 */
import { ConversationCore, HttpError, RequestValidationError } from "@acs-toolkit/server/core";
import { openMemoryStore } from "@acs-toolkit/server/store";
import { DEFAULT_MOCK_KEY, DEFAULT_START } from "../defaults.js";
import { Scheduler, ScriptedAgent, type RuntimeLog } from "../runtime.js";
import { ObservedBus, resolveScenarios, streamScenarios, type ScenarioWorld, type ScenarioWorldOptions } from "../scenario-world.js";

/** Options of {@link createBrowserWorld}: those of every world (the Node world's that make sense in a page). */
export interface BrowserWorldOptions extends ScenarioWorldOptions {
  /** Where failures of the agent and of streams go. Default: `console.warn`. */
  log?: RuntimeLog;
}

/**
 * A validation failure in the interface's 422 shape (`detail[].loc`, `msg`, `type`): the core's
 * `RequestValidationError`, under the name this entry has exported.
 */
export const BrowserValidationError = RequestValidationError;
/** A validation failure (the core's `RequestValidationError`). */
export type BrowserValidationError = RequestValidationError;
/** An answer other than 422 with the interface's `{"detail": string}`: the core's `HttpError`. */
export const BrowserHttpError = HttpError;
/** An answer other than 422 (the core's `HttpError`). */
export type BrowserHttpError = HttpError;
/** The bus of the browser world: the server core's EventBus that says when a conversation gets its first live client. */
export const BrowserBus = ObservedBus;
/** The bus of the browser world (see {@link ObservedBus}). */
export type BrowserBus = ObservedBus;
/** The conversation service of the browser world: the server's core one. */
export const BrowserConversations = ConversationCore;
/** The conversation service of the browser world: `ConversationCore` of `@acs-toolkit/server/core`. */
export type BrowserConversations = ConversationCore;

/** The browser world: a store, the scenarios in it, the agent, the live bus. */
export type BrowserWorld = ScenarioWorld;

/** Builds the browser world with its scenarios stored (and streaming, paced, once subscribed). */
export function createBrowserWorld(options: BrowserWorldOptions = {}): BrowserWorld {
  const seed = options.seed ?? 1;
  const speed = options.speed ?? "instant";
  const log: RuntimeLog = options.log ?? { warn: (details, message) => console.warn(`acs-mock: ${message}`, details) };
  const keys = options.keys?.length ? options.keys : [DEFAULT_MOCK_KEY];
  const scenarios = resolveScenarios(options.scenarios, { seed, start: options.start ?? DEFAULT_START });
  const store = openMemoryStore();
  const bus = new ObservedBus();
  const scheduler = new Scheduler();
  const agent = new ScriptedAgent({ seed, speed, scheduler, log });
  agent.store = store;
  const conversations = new ConversationCore(store, bus, agent);
  const { streamer, ready } = streamScenarios({ store, conversations, bus, scenarios, speed, scheduler, log, streamAtStart: options.streamAtStart });
  return {
    store,
    conversations,
    bus,
    agent,
    streamer,
    scenarios,
    keys,
    publicRead: options.publicRead ?? true,
    seed,
    speed,
    ready,
    close() {
      scheduler.close();
      void store.close();
    },
  };
}
