/**
 * The store contract, conversations as a list: the listing in both orders of both keys from any
 * position, the count, an update's title and tags, and a delete (gone from every read, every later
 * write refused, the id free again).
 */
import { describe, expect, it } from "vitest";
import { prepareEvent } from "../../../src/store/prepare.js";
import { encodeRows } from "../../../src/store/row-batch.js";
import { ConversationNotFoundError, type ConversationListQuery, type ConversationRecord, type EventStore } from "../../../src/store/types.js";
import type { StoreContext } from "./index.js";
import { CONV, OTHER, events } from "./fixtures.js";
import { atClock } from "./writes.js";

/** Conversation ids in a known byte order (ties on an instant are ordered by id). */
const ID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** Every page of a listing `limit` at a time, each from the next page's first conversation. */
async function listAll(store: EventStore, query: Omit<ConversationListQuery, "limit" | "from">, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let from: ConversationListQuery["from"];
  for (let guard = 0; guard < 100; guard++) {
    const page = await store.listConversations({ ...query, limit: limit + 1, from });
    ids.push(...page.slice(0, limit).map((r) => r.id));
    const next = page[limit];
    if (!next) return ids;
    from = { key: next[query.by], id: next.id };
  }
  throw new Error("the listing does not end");
}

/** The model: records sorted by (key, id), or the reverse. */
const sorted = (records: ConversationRecord[], by: ConversationListQuery["by"], order: "asc" | "desc") =>
  [...records].sort((a, b) => (a[by] < b[by] ? -1 : a[by] > b[by] ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * (order === "asc" ? 1 : -1)).map((r) => r.id);

export function listingContract(ctx: StoreContext): void {
  const { open } = ctx;
  describe("conversations as a list", () => {
    it("lists by creation and by last change, both ways, ties by id, from any conversation on", async () => {
      const store = await open();
      // Three created at one instant (ordered by id), in an order that is not the ids'.
      const same = new Date("2030-01-01T00:00:00.000Z");
      for (const n of [3, 1, 2]) await atClock(same, () => store.createConversation({ id: ID(n), status: "STOPPED" }, []));
      await atClock(new Date("2029-12-31T00:00:00.000Z"), () => store.createConversation({ id: ID(9), status: "STOPPED" }, []));
      await atClock(new Date("2030-01-02T00:00:00.000Z"), () => store.createConversation({ id: ID(5), status: "STOPPED" }, events(3)));
      // Last changes: an append, a status, an update, in that order.
      await atClock(new Date("2030-02-01T00:00:00.000Z"), () => store.appendEvents(ID(9), events(2, { seed: 2 })));
      await atClock(new Date("2030-02-02T00:00:00.000Z"), () => store.setStatus(ID(1), "RUNNING"));
      await atClock(new Date("2030-02-03T00:00:00.000Z"), () => store.updateConversation(ID(3), { title: "third" }));
      const records = (await Promise.all([1, 2, 3, 5, 9].map((n) => store.getConversation(ID(n))))) as ConversationRecord[];
      expect(sorted(records, "createdAt", "asc")).toEqual([ID(9), ID(1), ID(2), ID(3), ID(5)]);
      expect(sorted(records, "updatedAt", "desc")).toEqual([ID(3), ID(1), ID(9), ID(5), ID(2)]);
      for (const by of ["createdAt", "updatedAt"] as const) {
        for (const order of ["asc", "desc"] as const) {
          const want = sorted(records, by, order);
          expect((await store.listConversations({ by, order, limit: 100 })).map((r) => r.id), `${by} ${order}`).toEqual(want);
          for (const limit of [1, 2, 3]) expect(await listAll(store, { by, order }, limit), `${by} ${order} by ${limit}`).toEqual(want);
          // From a conversation: it and what follows it, inclusive.
          const third = records.find((r) => r.id === want[2])!;
          expect((await store.listConversations({ by, order, limit: 2, from: { key: third[by], id: third.id } })).map((r) => r.id)).toEqual(want.slice(2, 4));
        }
      }
      expect(await store.listConversations({ by: "createdAt", order: "asc", limit: 2 })).toEqual([records[4], records[0]]); // whole records
      expect(await store.countConversations()).toBe(5);
    });

    it("never lists nor counts a conversation being imported", async () => {
      const store = await open();
      await store.createConversation({ id: OTHER, status: "STOPPED" }, []);
      const handle = await store.beginImport({ id: CONV, status: "STOPPED" });
      await store.importRows(handle, events(5).map((entry, index) => prepareEvent(entry, index)));
      expect((await store.listConversations({ by: "createdAt", order: "desc", limit: 10 })).map((r) => r.id)).toEqual([OTHER]);
      expect(await store.countConversations()).toBe(1);
      await store.finishImport(handle, []);
      expect(await store.countConversations()).toBe(2);
    });

    it("stores a title and tags: given ones replace the stored ones, absent ones stay, updatedAt moves", async () => {
      const store = await open();
      const created = await atClock(new Date("2030-01-01T00:00:00.000Z"), () => store.createConversation({ id: CONV, status: "STOPPED" }, events(2)));
      expect(created).toMatchObject({ title: null, tags: null });
      const titled = await atClock(new Date("2030-01-02T00:00:00.000Z"), () => store.updateConversation(CONV, { title: "Fix the build", tags: { team: "infra", n1: "x" } }));
      expect(titled).toEqual({ ...created, title: "Fix the build", tags: { team: "infra", n1: "x" }, updatedAt: "2030-01-02T00:00:00.000Z" });
      expect(await store.getConversation(CONV)).toEqual(titled);
      const retagged = await store.updateConversation(CONV, { tags: { only: "one" } });
      expect(retagged).toMatchObject({ title: "Fix the build", tags: { only: "one" }, eventCount: 2 });
      expect(await store.updateConversation(CONV, {})).toMatchObject({ title: "Fix the build", tags: { only: "one" } });
      expect(await store.updateConversation(CONV, { tags: {} })).toMatchObject({ tags: {} });
      await expect(store.updateConversation(OTHER, { title: "x" })).rejects.toBeInstanceOf(ConversationNotFoundError);
    });

    it("deletes a conversation: gone from every read, later writes refused, the id free again", async () => {
      const store = await open();
      await store.createConversation({ id: OTHER, status: "STOPPED" }, events(3, { seed: 7 }));
      // Long enough that a store freeing its rows in steps takes several.
      const batch = events(4_500);
      await store.createConversation({ id: CONV, status: "STOPPED" }, batch);
      const position = await store.positionOf(CONV, batch[10]!.event.id);
      expect(position).toBeDefined();
      expect(await store.deleteConversation(CONV)).toBe(true);
      expect(await store.getConversation(CONV)).toBeUndefined();
      expect(await store.readAfter(CONV, 0, 10)).toEqual([]);
      expect(await store.search(CONV, { order: "asc", limit: 10 })).toEqual({ items: [], hasMore: false });
      expect(await store.count(CONV, {})).toBe(0);
      expect(await store.count(CONV, { kind: "MessageEvent" })).toBe(0);
      expect(await store.count(CONV, { body: "a" })).toBe(0);
      expect(await store.positionOf(CONV, batch[10]!.event.id)).toBeUndefined();
      expect((await store.listConversations({ by: "updatedAt", order: "desc", limit: 10 })).map((r) => r.id)).toEqual([OTHER]);
      expect(await store.countConversations()).toBe(1);
      await expect(store.appendEvents(CONV, events(1, { seed: 3 }))).rejects.toBeInstanceOf(ConversationNotFoundError);
      await expect(store.appendBatch(CONV, { count: 1, chunks: [encodeRows(events(1, { seed: 3 }).map((entry, index) => prepareEvent(entry, index)))] })).rejects.toBeInstanceOf(ConversationNotFoundError);
      await expect(store.setStatus(CONV, "RUNNING")).rejects.toBeInstanceOf(ConversationNotFoundError);
      await expect(store.updateConversation(CONV, { title: "x" })).rejects.toBeInstanceOf(ConversationNotFoundError);
      expect(await store.deleteConversation(CONV)).toBe(false);
      // The other conversation is whole; the id can be created again, empty.
      expect((await store.readAfter(OTHER, 0, 10)).map((e) => e.id)).toEqual(["7-0", "7-1", "7-2"]);
      const again = await store.createConversation({ id: CONV, status: "STOPPED" }, events(2, { seed: 4 }));
      expect(again).toMatchObject({ eventCount: 2, title: null, tags: null });
      expect((await store.readAfter(CONV, 0, 10)).map((e) => e.id)).toEqual(["4-0", "4-1"]);
      expect(await store.count(CONV, {})).toBe(2);
      expect(await store.positionOf(CONV, batch[10]!.event.id)).toBeUndefined();
    });

    it("an append called with a delete lands before it (and goes with it) or fails as for an unknown conversation", async () => {
      const store = await open();
      await store.createConversation({ id: CONV, status: "STOPPED" }, events(3));
      const append = store.appendEvents(CONV, events(2, { seed: 5 })).then(
        () => "appended",
        (error: unknown) => (error instanceof ConversationNotFoundError ? "refused" : error),
      );
      const deleted = store.deleteConversation(CONV);
      const late = store.appendEvents(CONV, events(2, { seed: 6 })).then(
        () => "appended",
        (error: unknown) => (error instanceof ConversationNotFoundError ? "refused" : error),
      );
      expect(await deleted).toBe(true);
      expect(["appended", "refused"]).toContain(await append);
      expect(await late).toBe("refused");
      expect(await store.getConversation(CONV)).toBeUndefined();
      expect(await store.readAfter(CONV, 0, 10)).toEqual([]);
      expect(await store.countConversations()).toBe(0);
    });
  });
}
