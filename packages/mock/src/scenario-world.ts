/**
 * What the Node world (world.ts) and the browser world (browser/world.ts) share beyond the server's
 * core: the bus that says when a conversation gets its first live client, the scenarios a world
 * serves (built-in names resolved under the seed, ids checked unique), and the streamer that stores
 * them and streams the rest once subscribed. Browser-safe: no Node built-in.
 */
import { EventBus, type ConversationCore, type EventListener } from "@acs-toolkit/server/core";
import type { EventStore } from "@acs-toolkit/server/store";
import { ScenarioStreamer, type RuntimeLog, type Scheduler, type ScriptedAgent, type Speed } from "./runtime.js";
import { BUILT_IN_SCENARIOS } from "./scenarios/builtin.js";
import type { Scenario } from "./scenarios/types.js";

/** The options of a world, Node's (`WorldOptions`) or a browser page's (`BrowserWorldOptions`). */
export interface ScenarioWorldOptions {
  /** Seed of scenario ids, texts, timings and the agent's ids (and, in Node, Prism's generated data). Default 1. */
  seed?: number;
  /** Pace of scenario streams and agent turns: a factor (1 = as recorded) or `instant`. Default 1 in Node, `instant` in a browser. */
  speed?: Speed;
  /**
   * Scenarios to serve: built-in names (`happy`, `long`, `errors`, `condensation`, `confirmation`)
   * and scenario objects. Default: every built-in.
   */
  scenarios?: Array<string | Scenario>;
  /** Time of the first event of built-in scenarios, ms since the epoch. Default 2026-02-05T11:24:45Z. */
  start?: number;
  /** Accepted X-Session-API-Key values. Default `["mock-session-key"]` (DEFAULT_MOCK_KEY). */
  keys?: string[];
  /**
   * Serve event search, count and the live channel without a key, as the interface declares no
   * security scheme there (the reference server asks for one unless `--public-read`). Default true.
   */
  publicRead?: boolean;
  /** Start streaming every scenario at once instead of when its first live client subscribes. */
  streamAtStart?: boolean;
}

/** What every world has: a store, the scenarios in it, the conversation service, the agent, the live bus. */
export interface ScenarioWorld {
  store: EventStore;
  /** Resolves once every scenario's conversation is stored (rejects if one could not be). */
  ready: Promise<void>;
  bus: ObservedBus;
  conversations: ConversationCore;
  agent: ScriptedAgent;
  streamer: ScenarioStreamer;
  scenarios: Scenario[];
  keys: string[];
  publicRead: boolean;
  seed: number;
  speed: Speed;
  /** Cancels streams and agent turns (and, in Node, closes the server's app). */
  close(): void;
}

/** An EventBus that also says when a conversation gets a subscriber (a live client opened it). */
export class ObservedBus extends EventBus {
  /** Called after each subscription, with its conversation. */
  onSubscribe?: (conversationId: string) => void;

  override subscribe(conversationId: string, listener: EventListener): () => void {
    const unsubscribe = super.subscribe(conversationId, listener);
    this.onSubscribe?.(conversationId);
    return unsubscribe;
  }
}

/**
 * The scenarios of a world: each built-in name built under `seed` and `start`, objects as they
 * are. @throws Error for an unknown name, or two scenarios with one conversation id
 */
export function resolveScenarios(entries: ReadonlyArray<string | Scenario> | undefined, options: { seed: number; start: number }): Scenario[] {
  const scenarios = (entries ?? Object.keys(BUILT_IN_SCENARIOS)).map((entry) => {
    if (typeof entry !== "string") return entry;
    const build = BUILT_IN_SCENARIOS[entry];
    if (!build) throw new Error(`unknown scenario "${entry}": the built-in ones are ${Object.keys(BUILT_IN_SCENARIOS).join(", ")}`);
    return build(options);
  });
  const seen = new Map<string, string>();
  for (const scenario of scenarios) {
    const other = seen.get(scenario.conversationId);
    if (other) throw new Error(`scenarios "${other}" and "${scenario.name}" have the same conversation_id ${scenario.conversationId}`);
    seen.set(scenario.conversationId, scenario.name);
  }
  return scenarios;
}

/** What {@link streamScenarios} works with. */
interface ScenarioStreamOptions {
  store: EventStore;
  conversations: ConversationCore;
  bus: ObservedBus;
  scenarios: readonly Scenario[];
  speed: Speed;
  scheduler: Scheduler;
  log: RuntimeLog;
  /** Start streaming every scenario at once instead of when its first live client subscribes. */
  streamAtStart?: boolean;
}

/**
 * Stores every scenario's conversation and streams each one's rest from its first live subscriber
 * (or at once with `streamAtStart`); `ready` resolves once every conversation is stored.
 */
export function streamScenarios(options: ScenarioStreamOptions): { streamer: ScenarioStreamer; ready: Promise<void> } {
  const { store, conversations, bus, speed, scheduler, log } = options;
  const streamer = new ScenarioStreamer({ store, conversations, speed, scheduler, log });
  const ready = Promise.all(options.scenarios.map((scenario) => streamer.add(scenario))).then(() => {});
  ready.catch(() => {}); // the caller's to await; unobserved, not an unhandled rejection
  bus.onSubscribe = (conversationId) => streamer.start(conversationId);
  if (options.streamAtStart) void ready.then(() => streamer.startAll());
  return { streamer, ready };
}
