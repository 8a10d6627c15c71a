/**
 * The mock's world needs no native SQLite build: its events live in the server's MemoryEventStore
 * (`@acs-toolkit/server/store`, plain TypeScript), which the browser entry uses too.
 */
import { MemoryEventStore } from "@acs-toolkit/server/store";
import { describe, expect, it } from "vitest";
import { createWorld } from "../src/world.js";

describe("the mock's world", () => {
  it("keeps its events in the server's MemoryEventStore, not in SQLite", async () => {
    const world = createWorld({ scenarios: ["happy"], speed: "instant" });
    try {
      await world.ready;
      expect(world.store).toBeInstanceOf(MemoryEventStore);
      expect(world.store.kind).toBe("memory");
      const page = await world.store.search(world.scenarios[0]!.conversationId, { order: "asc", limit: 100 });
      expect(page.items.map((event) => event.id)).toEqual(world.scenarios[0]!.events.map((event) => event.id));
    } finally {
      world.close();
    }
  });
});
