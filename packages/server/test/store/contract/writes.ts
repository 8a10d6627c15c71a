/**
 * The store contract, writes and reads of records: creation, appends, atomicity, duplicate ids,
 * unknown conversations, staged creation, documents, lifecycle, and the order of concurrent calls.
 */
import { describe, expect, it, vi } from "vitest";
import type { Event } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { prepareEvent, type RowBatch } from "../../../src/store/prepare.js";
import { encodeRows } from "../../../src/store/row-batch.js";
import { ConversationExistsError, ConversationNotFoundError, DuplicateEventIdError, type EventStore, type EventToStore } from "../../../src/store/types.js";
import type { StoreContext } from "./index.js";
import { CONV, OTHER, allIds, events } from "./fixtures.js";

/** An instant the stores' clock is set to (see atClock): a round millisecond, far from the real time. */
const NOW = new Date("2030-04-05T06:07:08.009Z");

/**
 * Runs `call` with the clock (`Date`, which every store reads for createdAt and updatedAt) set to
 * `at`; timers stay real, so the stores' I/O goes on as usual.
 */
export async function atClock<T>(at: Date, call: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ["Date"], now: at });
  try {
    return await call();
  } finally {
    vi.useRealTimers();
  }
}

/** What a reader can see of a conversation: its record, its events in both orders, their count. */
async function observable(store: EventStore, id = CONV) {
  return {
    record: await store.getConversation(id),
    ids: await allIds(store, id),
    appendOrder: (await store.readAfter(id, 0, 10_000)).map((e) => `${e.seq}:${e.id}`),
    count: await store.count(id, {}),
    messages: await store.count(id, { body: "" }),
  };
}

export function writesContract(ctx: StoreContext): void {
  const { open } = ctx;
  describe("conversations and events", () => {
    it("creates a conversation with its events and reads it back", async () => {
      const store = await open();
      expect(typeof store.kind).toBe("string");
      const batch = events(55);
      const record = await atClock(NOW, () =>
        store.createConversation({ id: CONV, status: "STARTING", repository: "octo/repo", selectedBranch: "main", gitProvider: "github" }, batch),
      );
      expect(record).toMatchObject({ id: CONV, status: "STARTING", eventCount: 55, repository: "octo/repo", selectedBranch: "main", gitProvider: "github" });
      expect(record.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(record.createdAt).toBe(NOW.toISOString()); // the time of the call
      expect(record.updatedAt).toBe(record.createdAt);
      expect(await store.getConversation(CONV)).toEqual(record);
      expect(await store.getConversation(OTHER)).toBeUndefined();
      expect(await allIds(store)).toEqual(batch.map((e) => e.event.id));
    });

    it("defaults the optional conversation fields to null and accepts no events", async () => {
      const store = await open();
      const record = await store.createConversation({ id: CONV, status: "RUNNING" }, []);
      expect(record).toMatchObject({ eventCount: 0, repository: null, selectedBranch: null, gitProvider: null });
      expect(await store.search(CONV, { order: "asc", limit: 10 })).toEqual({ items: [], hasMore: false });
      expect(await store.appendEvents(CONV, [])).toEqual([]);
    });

    it("appends events with increasing seq and returns them as stored", async () => {
      const store = await open();
      await store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
      const more = events(4, { seed: 2 });
      const stored = await store.appendEvents(CONV, more);
      expect(stored.map((e) => e.seq)).toEqual([4, 5, 6, 7]);
      expect(stored.map((e) => e.id)).toEqual(more.map((e) => e.event.id));
      expect(stored[0]!.json).toBe(more[0]!.json);
      expect(stored[0]!.ts).toBe(Date.parse(`${more[0]!.event.timestamp}Z`) * 1000);
      expect((await store.getConversation(CONV))!.eventCount).toBe(7);
      expect(await store.positionOf(CONV, more[2]!.event.id)).toEqual({ ts: stored[2]!.ts, seq: 6 });
      expect(await store.positionOf(CONV, "nope")).toBeUndefined();
      expect(await store.positionOf(OTHER, more[2]!.event.id)).toBeUndefined();
    });

    it("returns each event's JSON text byte for byte, from search, searchJson and readAfter", async () => {
      const store = await open();
      const [first] = events(1);
      const json = `{ "kind" : "PauseEvent",\n  "id":"${first!.event.id}", "timestamp": "2026-02-05T11:00:00", "source":"user" , "x\\u00e9": 1, "é": "\u{1F600}" }`;
      await store.createConversation({ id: CONV, status: "RUNNING" }, [
        { event: { kind: "PauseEvent", id: first!.event.id, timestamp: "2026-02-05T11:00:00", source: "user" }, json },
      ]);
      expect((await store.search(CONV, { order: "asc", limit: 1 })).items[0]!.json).toBe(json);
      const page = await store.searchJson(CONV, { order: "asc", limit: 1 });
      expect(Buffer.from(page.json).equals(Buffer.from(json, "utf8"))).toBe(true);
      expect((await store.readAfter(CONV, 0, 1))[0]!.json).toBe(json);
    });

    it("stores the kind's default source when an event has none", async () => {
      const store = await open();
      const pause = { kind: "PauseEvent", id: "p", timestamp: "2026-02-05T11:00:00" } as Event;
      const obs = { ...exampleEvents().find((e) => e.kind === "ObservationEvent")!, id: "o", source: undefined } as Event;
      await store.createConversation({ id: CONV, status: "RUNNING" }, [pause, obs].map((event) => ({ event, json: JSON.stringify(event) })));
      expect((await store.search(CONV, { order: "asc", limit: 10, source: "user" })).items.map((e) => e.id)).toEqual(["p"]);
      expect((await store.search(CONV, { order: "asc", limit: 10, source: "environment" })).items.map((e) => e.id)).toEqual(["o"]);
    });

    it("keeps conversations apart", async () => {
      const store = await open();
      await store.createConversation({ id: CONV, status: "RUNNING" }, events(5, { seed: 1 }));
      // The same event ids may appear in another conversation.
      await store.createConversation({ id: OTHER, status: "RUNNING" }, events(7, { seed: 1 }));
      expect(await allIds(store, CONV)).toHaveLength(5);
      expect(await allIds(store, OTHER)).toHaveLength(7);
      expect(await store.count(CONV, {})).toBe(5);
      expect(await store.count(OTHER, {})).toBe(7);
    });

    it("sets the status and bumps updatedAt", async () => {
      const store = await open();
      const created = await atClock(NOW, () => store.createConversation({ id: CONV, status: "STARTING" }, []));
      const later = new Date(NOW.getTime() + 5);
      const updated = await atClock(later, () => store.setStatus(CONV, "STOPPED"));
      expect(updated.status).toBe("STOPPED");
      expect(updated.createdAt).toBe(created.createdAt);
      expect(created.updatedAt).toBe(NOW.toISOString());
      expect(updated.updatedAt).toBe(later.toISOString());
      expect(await store.getConversation(CONV)).toEqual(updated);
    });

    it("refuses writes to an unknown conversation, and reads of it are empty", async () => {
      const store = await open();
      await expect(store.appendEvents(OTHER, events(1))).rejects.toThrow(ConversationNotFoundError);
      await expect(store.setStatus(OTHER, "RUNNING")).rejects.toThrow(ConversationNotFoundError);
      await expect(store.setStatus(OTHER, "RUNNING")).rejects.toMatchObject({ conversationId: OTHER });
      expect(await store.search(OTHER, { order: "asc", limit: 5 })).toEqual({ items: [], hasMore: false });
      expect((await store.searchJson(OTHER, { order: "asc", limit: 5 })).count).toBe(0);
      expect(await store.count(OTHER, {})).toBe(0);
      expect(await store.count(OTHER, { body: "x" })).toBe(0);
      expect(await store.readAfter(OTHER, 0, 5)).toEqual([]);
      expect(await store.getConversation(OTHER)).toBeUndefined();
    });

    it("validates the page size and order (a rejection, never a throw)", async () => {
      const store = await open();
      await store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
      for (const limit of [0, 101, 1.5, Number.NaN]) {
        await expect(store.search(CONV, { order: "asc", limit })).rejects.toThrow(RangeError);
        await expect(store.searchJson(CONV, { order: "asc", limit })).rejects.toThrow(RangeError);
        await expect(store.searchJson(CONV, { order: "asc", limit, body: "x" })).rejects.toThrow(RangeError);
      }
      await expect(store.search(CONV, { order: "up" as "asc", limit: 5 })).rejects.toThrow(RangeError);
    });
  });

  describe("atomicity and duplicate ids", () => {
    it("createConversation with a duplicate event id leaves nothing behind", async () => {
      const store = await open();
      const batch = events(10);
      batch[7] = { ...batch[7]!, event: { ...batch[7]!.event, id: batch[2]!.event.id } };
      const error = await store.createConversation({ id: CONV, status: "RUNNING" }, batch).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(DuplicateEventIdError);
      expect(error).toMatchObject({ eventId: batch[2]!.event.id, index: 7 });
      expect(await store.getConversation(CONV)).toBeUndefined();
      expect(await observable(store)).toEqual({ record: undefined, ids: [], appendOrder: [], count: 0, messages: 0 });
      // The id is free again.
      expect((await store.createConversation({ id: CONV, status: "RUNNING" }, events(10))).eventCount).toBe(10);
    });

    it("appendEvents with an id already stored, or twice in the batch, leaves nothing behind", async () => {
      const store = await open();
      await store.createConversation({ id: CONV, status: "RUNNING" }, events(5));
      const before = await observable(store);

      const again = events(6, { seed: 3 });
      again[4] = events(5)[1]!; // already stored
      await expect(store.appendEvents(CONV, again)).rejects.toThrow(expect.objectContaining({ index: 4, eventId: "1-1" }));

      const twice = events(6, { seed: 4 });
      twice[5] = { ...twice[5]!, event: { ...twice[5]!.event, id: twice[1]!.event.id } };
      await expect(store.appendEvents(CONV, twice)).rejects.toThrow(expect.objectContaining({ index: 5, eventId: "4-1" }));

      expect(await observable(store)).toEqual(before);
      expect(await store.positionOf(CONV, "3-0")).toBeUndefined();
      // Seq continues where it was: nothing was consumed by the failed batches.
      expect((await store.appendEvents(CONV, events(1, { seed: 5 })))[0]!.seq).toBe(6);
    });

    it("reports the first offending event of a batch", async () => {
      const store = await open();
      await store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
      const batch = events(6, { seed: 2 });
      batch[2] = { ...batch[2]!, event: { ...batch[2]!.event, id: batch[0]!.event.id } }; // repeats index 0
      batch[4] = events(3)[0]!; // stored
      await expect(store.appendEvents(CONV, batch)).rejects.toThrow(expect.objectContaining({ index: 2 }));
    });

    it("an event that cannot be stored (no instant, no source) fails its whole batch", async () => {
      const store = await open();
      await store.createConversation({ id: CONV, status: "RUNNING" }, events(5));
      const before = await observable(store);
      const bad = events(4, { seed: 8 });
      bad[2] = { ...bad[2]!, event: { ...bad[2]!.event, timestamp: "yesterday" } };
      await expect(store.appendEvents(CONV, bad)).rejects.toThrow(/events\[2\].*timestamp/);
      const noSource = events(2, { seed: 9 });
      noSource[1] = { ...noSource[1]!, event: { ...exampleEvents().find((e) => e.kind === "MessageEvent")!, id: "m", source: undefined } as unknown as Event };
      await expect(store.appendEvents(CONV, noSource)).rejects.toThrow(/events\[1\].*source/);
      await expect(store.createConversation({ id: OTHER, status: "RUNNING" }, bad)).rejects.toThrow(/events\[2\].*timestamp/);
      expect(await observable(store)).toEqual(before);
      expect(await store.getConversation(OTHER)).toBeUndefined();
    });

    it("a kind or source never stored matches nothing", async () => {
      const store = await open();
      await store.createConversation({ id: CONV, status: "RUNNING" }, events(3).filter((e) => e.event.kind !== "MessageEvent"));
      expect(await store.search(CONV, { order: "asc", limit: 10, kind: "CondensationSummaryEvent" })).toEqual({ items: [], hasMore: false });
      expect(await store.count(CONV, { kind: "CondensationSummaryEvent" })).toBe(0);
      expect(await store.search(CONV, { order: "asc", limit: 10, body: "anything" })).toEqual({ items: [], hasMore: false });
      expect(await store.count(CONV, { body: "x" })).toBe(0);
    });

    it("createConversation of an existing id rejects with ConversationExistsError and changes nothing", async () => {
      const store = await open();
      const record = await store.createConversation({ id: CONV, status: "RUNNING", repository: "a/b" }, events(4));
      const before = await observable(store);
      await expect(store.createConversation({ id: CONV, status: "STOPPED", repository: "c/d" }, events(3, { seed: 2 }))).rejects.toThrow(ConversationExistsError);
      expect(await store.getConversation(CONV)).toEqual(record);
      expect(await observable(store)).toEqual(before);
    });
  });

  describe("order of calls", () => {
    it("appends to one conversation, called without waiting, are stored in the order called", async () => {
      const store = await open();
      await store.createConversation({ id: CONV, status: "RUNNING" }, []);
      const batches = Array.from({ length: 20 }, (_, i) => events(1 + (i % 3), { seed: 10 + i }));
      const results = await Promise.all(batches.map((batch) => store.appendEvents(CONV, batch)));
      let seq = 0;
      for (const [i, stored] of results.entries()) {
        expect(stored.map((e) => e.seq), `batch ${i}`).toEqual(batches[i]!.map(() => ++seq));
      }
      expect((await store.readAfter(CONV, 0, 1000)).map((e) => e.id)).toEqual(batches.flat().map((e) => e.event.id));
    });

    it("a conversation is visible to every read as soon as its creation resolved", async () => {
      const store = await open();
      const created = store.createConversation({ id: CONV, status: "RUNNING" }, events(3));
      const appended = created.then(() => store.appendEvents(CONV, events(2, { seed: 2 })));
      await created;
      const [record, page, json, count] = await Promise.all([
        store.getConversation(CONV),
        store.search(CONV, { order: "asc", limit: 100 }),
        store.searchJson(CONV, { order: "asc", limit: 100, body: "" }),
        store.count(CONV, { source: "agent" }),
      ]);
      expect(record?.id).toBe(CONV);
      expect(page.items.length).toBeGreaterThanOrEqual(3);
      expect(json.count).toBeGreaterThanOrEqual(0);
      expect(count).toBeGreaterThanOrEqual(0);
      await appended;
      expect(await store.count(CONV, {})).toBe(5);
    });
  });

  describe("staged creation (large replays, in several transactions)", () => {
    const rows = (batch: EventToStore[]) => batch.map((entry, index) => prepareEvent(entry, index, true));

    it("is invisible until finished, then appears whole, as a one-shot creation would", async () => {
      const store = await open();
      const all = events(3_000);
      const handle = await store.beginImport({ id: CONV, status: "STOPPED" });
      for (let from = 0; from < 2_500; from += 700) {
        await store.importRows(handle, rows(all.slice(from, Math.min(from + 700, 2_500))));
        expect(await store.getConversation(CONV)).toBeUndefined();
        expect(await store.search(CONV, { order: "asc", limit: 10 })).toEqual({ items: [], hasMore: false });
        expect(await store.count(CONV, { body: "the" })).toBe(0);
      }
      const record = await store.finishImport(handle, all.slice(2_500));
      expect(record).toMatchObject({ id: CONV, eventCount: 3_000 });
      const oneShot = await open();
      await oneShot.createConversation({ id: CONV, status: "STOPPED" }, all);
      expect(await store.readAfter(CONV, 0, 5_000)).toEqual(await oneShot.readAfter(CONV, 0, 5_000));
      expect(await store.count(CONV, { body: "the" })).toBe(await oneShot.count(CONV, { body: "the" }));
      expect(await observable(store)).toEqual({ ...(await observable(oneShot)), record: expect.objectContaining({ eventCount: 3_000 }) });
    });

    it("discarded step by step, leaves nothing", async () => {
      const store = await open();
      await store.createConversation({ id: OTHER, status: "STOPPED" }, events(50, { seed: 9 }));
      const before = await observable(store, OTHER);
      const handle = await store.beginImport({ id: CONV, status: "STOPPED" });
      await store.importRows(handle, rows(events(2_000)));
      let steps = 1;
      while (!(await store.discardImport(handle, 300))) steps++;
      expect(steps).toBeGreaterThan(5);
      expect(await observable(store, OTHER)).toEqual(before);
      expect(await observable(store)).toEqual({ record: undefined, ids: [], appendOrder: [], count: 0, messages: 0 });
      // The id is free: a new import of it works.
      const again = await store.beginImport({ id: CONV, status: "STOPPED" });
      await store.importRows(again, rows(events(10)));
      expect((await store.finishImport(again, [])).eventCount).toBe(10);
    });

    it("writes called while a chunk is written are neither lost nor reordered, and each sees the chunk", async () => {
      const store = await open();
      await store.createConversation({ id: OTHER, status: "STOPPED" }, []);
      const handle = await store.beginImport({ id: CONV, status: "STOPPED" });
      const all = events(1_200);
      const extra = events(3, { seed: 5 });
      // Called without waiting: a chunk, writes to another conversation, the next chunk, a document.
      const calls = [
        store.importRows(handle, rows(all.slice(0, 600))),
        store.appendEvents(OTHER, extra.slice(0, 1)),
        store.setStatus(OTHER, "RUNNING"),
        store.importRows(handle, rows(all.slice(600, 1_100))),
        store.appendEvents(OTHER, extra.slice(1)),
        store.putDocument("during-import", "1"),
        store.importRows(handle, rows(all.slice(0, 1))), // a duplicate of the first chunk's first id
      ];
      const settled = await Promise.allSettled(calls);
      expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled", "fulfilled", "fulfilled", "rejected"]);
      expect((settled[6] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateEventIdError);
      expect((settled[1] as PromiseFulfilledResult<{ seq: number }[]>).value.map((e) => e.seq)).toEqual([1]);
      expect((settled[4] as PromiseFulfilledResult<{ seq: number }[]>).value.map((e) => e.seq)).toEqual([2, 3]);
      expect(await store.getConversation(OTHER)).toMatchObject({ status: "RUNNING", eventCount: 3 });
      expect(await store.getDocument("during-import")).toBe("1");
      const record = await store.finishImport(handle, all.slice(1_100));
      expect(record.eventCount).toBe(1_200);
      expect((await store.readAfter(CONV, 0, 2_000)).map((e) => e.id)).toEqual(all.map((e) => e.event.id));
    });

    it("refuses an id taken before it begins or before it finishes, and an id repeated across chunks", async () => {
      const store = await open();
      await store.createConversation({ id: OTHER, status: "STOPPED" }, []);
      await expect(store.beginImport({ id: OTHER, status: "STOPPED" })).rejects.toThrow(ConversationExistsError);
      const handle = await store.beginImport({ id: CONV, status: "STOPPED" });
      await store.importRows(handle, rows(events(10)));
      await expect(store.importRows(handle, rows(events(10)).slice(3, 4))).rejects.toThrow(DuplicateEventIdError);
      await store.createConversation({ id: CONV, status: "STOPPED" }, []);
      await expect(store.finishImport(handle, [])).rejects.toThrow(ConversationExistsError);
      expect((await store.getConversation(CONV))?.eventCount).toBe(0);
    });
  });

  describe("event batches (appendBatch: one transaction, rows encoded)", () => {
    /** A RowBatch of `batch`, in chunks of `per` rows. */
    const encoded = (batch: EventToStore[], per = 400): RowBatch => {
      const rows = batch.map((entry, index) => prepareEvent(entry, index, true));
      const chunks = [];
      for (let from = 0; from < rows.length; from += per) chunks.push(encodeRows(rows.slice(from, from + per)));
      return { count: rows.length, chunks };
    };
    // Both SQLite configurations: on the import writer's connection, and in place.
    const variantsOf = ({ variants }: StoreContext) => [0, 1].filter((v) => v < variants);

    it("appends the rows in order after the conversation's events, as appendEvents would", async () => {
      for (const variant of variantsOf(ctx)) {
        const store = await ctx.open(variant);
        const head = events(5);
        const batch = events(1_000, { seed: 3 });
        await store.createConversation({ id: CONV, status: "STOPPED" }, head);
        expect(await store.appendBatch(CONV, encoded(batch))).toEqual({ firstSeq: 6, count: 1_000, eventCount: 1_005 });
        expect(await store.appendBatch(CONV, { count: 0, chunks: [] })).toEqual({ firstSeq: 1_006, count: 0, eventCount: 1_005 });
        const oneByOne = await ctx.open(variant);
        await oneByOne.createConversation({ id: CONV, status: "STOPPED" }, head);
        await oneByOne.appendEvents(CONV, batch);
        expect(await store.readAfter(CONV, 0, 5_000)).toEqual(await oneByOne.readAfter(CONV, 0, 5_000));
        expect(await observable(store)).toEqual({ ...(await observable(oneByOne)), record: expect.objectContaining({ eventCount: 1_005 }) });
      }
    });

    it("stores nothing of a batch with an id already stored or repeated, and names its index", async () => {
      for (const variant of variantsOf(ctx)) {
        const store = await ctx.open(variant);
        const stored = events(10);
        await store.createConversation({ id: CONV, status: "STOPPED" }, stored);
        const before = await observable(store);
        const fresh = events(900, { seed: 4 });
        const taken = [...fresh.slice(0, 700), stored[3]!, ...fresh.slice(700)];
        await expect(store.appendBatch(CONV, encoded(taken))).rejects.toMatchObject({ constructor: DuplicateEventIdError, index: 700, eventId: stored[3]!.event.id });
        expect(await observable(store)).toEqual(before);
        const repeated = [...fresh.slice(0, 850), fresh[2]!];
        await expect(store.appendBatch(CONV, encoded(repeated))).rejects.toMatchObject({ constructor: DuplicateEventIdError, index: 850 });
        expect(await observable(store)).toEqual(before);
        await expect(store.appendBatch(OTHER, encoded(fresh.slice(0, 3)))).rejects.toThrow(ConversationNotFoundError);
        // The store goes on: the same batch without the offender is taken whole.
        expect((await store.appendBatch(CONV, encoded(fresh))).eventCount).toBe(910);
      }
    });

    it("takes its turn among the conversation's other writes, in the order called", async () => {
      for (const variant of variantsOf(ctx)) {
        const store = await ctx.open(variant);
        await store.createConversation({ id: CONV, status: "STOPPED" }, []);
        const a = events(2, { seed: 5 });
        const batch = events(600, { seed: 6 });
        const b = events(2, { seed: 7 });
        const calls = [store.appendEvents(CONV, a), store.appendBatch(CONV, encoded(batch)), store.appendEvents(CONV, b), store.setStatus(CONV, "RUNNING")];
        await Promise.all(calls);
        expect((await store.readAfter(CONV, 0, 1_000)).map((e) => e.id)).toEqual([...a, ...batch, ...b].map((e) => e.event.id));
        expect(await store.getConversation(CONV)).toMatchObject({ status: "RUNNING", eventCount: 604 });
      }
    });
  });

  describe("documents and lifecycle", () => {
    it("gets and upserts documents", async () => {
      const store = await open();
      expect(await store.getDocument("settings")).toBeUndefined();
      await store.putDocument("settings", "{}");
      await store.putDocument("tokens", '{"github":"x"}');
      await store.putDocument("settings", '{"language":"fr"}');
      expect(await store.getDocument("settings")).toBe('{"language":"fr"}');
      expect(await store.getDocument("tokens")).toBe('{"github":"x"}');
      await store.putDocument("empty", "");
      expect(await store.getDocument("empty")).toBe("");
    });

    it("pings until closed; close is idempotent", async () => {
      const store = await open();
      expect(await store.ping()).toBe(true);
      await store.close();
      await store.close();
      expect(await store.ping()).toBe(false);
    });
  });
}
