/** What `GET /__mock` answers, for the Node mock (front.ts) and the browser handlers (browser/http.ts). */

/** What the description reads of a world (the Node mock's World and the BrowserWorld both have it). */
interface DescribableWorld {
  seed: unknown;
  speed: unknown;
  publicRead: boolean;
  scenarios: ReadonlyArray<{ name: string; description: string; conversationId: string; events: readonly unknown[]; preload: number; origin: unknown }>;
  streamer: { waiting: readonly string[] };
}

/** The scenarios and how the mock runs (never the keys). */
export function describeWorld(world: DescribableWorld): Record<string, unknown> {
  return {
    seed: world.seed,
    speed: world.speed,
    public_read: world.publicRead,
    live_channel: "/sockets/events/{conversation_id}",
    scenarios: world.scenarios.map((s) => ({
      name: s.name,
      description: s.description,
      conversation_id: s.conversationId,
      events: s.events.length,
      preload: s.preload,
      streaming: !world.streamer.waiting.includes(s.conversationId),
      origin: s.origin,
    })),
  };
}
