/**
 * A store's streamBatch (an event batch written as the import thread parses it; ConversationService.appendBatch),
 * for each store that has one (SQLite with its import writer, PostgreSQL): one transaction committed at `end`,
 * the store's other writes in turn after it, a rollback of everything written at `abort`, on an id already
 * stored (named by its index within the whole batch) or for an unknown conversation.
 */
import { describe, expect, it } from "vitest";
import type { MessageEvent } from "@acs-toolkit/schema";
import { messageSearchText, prepareEvent } from "../../src/store/prepare.js";
import { encodeRows } from "../../src/store/row-batch.js";
import { DuplicateEventIdError, type EventStore, type EventToStore } from "../../src/store/types.js";
import { CONV, OTHER, events } from "./contract/fixtures.js";

interface StreamBatchSubject {
  /** A new store, with an empty schema or file. */
  open(): Promise<EventStore> | EventStore;
  /** The rows of the store's tables, counted below the store's own reads (a rolled-back write leaves none). */
  rawCounts(store: EventStore): Promise<Record<string, number>> | Record<string, number>;
}

const rows = (batch: EventToStore[]) => batch.map((entry, index) => prepareEvent(entry, index, true));
const chunksOf = (batch: EventToStore[], size: number) => Array.from({ length: Math.ceil(batch.length / size) }, (_, i) => encodeRows(rows(batch.slice(i * size, (i + 1) * size))));

export function describeStreamBatch(name: string, subject: StreamBatchSubject): void {
  describe(`an event batch streamed as it is parsed (${name}: streamBatch, parse and write overlapping)`, () => {
    it("commits every chunk in one transaction at the end, while the store's other writes wait their turn", async () => {
      const store = await subject.open();
      await store.createConversation({ id: CONV, status: "STOPPED" }, []);
      await store.createConversation({ id: OTHER, status: "STOPPED" }, []);
      const batch = events(2_500);
      const stream = store.streamBatch!(CONV)!;
      const chunks = chunksOf(batch, 1_000);
      stream.add(chunks[0]!);
      stream.add(chunks[1]!);
      // Made while the batch's transaction is open: it goes in after the batch, in order.
      const other = store.appendEvents(OTHER, events(1, { seed: 3 }));
      expect((await store.getConversation(CONV))?.eventCount).toBe(0); // nothing visible before the commit
      stream.add(chunks[2]!);
      expect(await stream.end(2_500)).toEqual({ firstSeq: 1, count: 2_500, eventCount: 2_500 });
      expect((await other).map((e) => e.seq)).toEqual([1]);
      expect((await store.readAfter(CONV, 0, 5_000)).map((e) => e.id)).toEqual(batch.map((e) => e.event.id));
      expect(await store.count(CONV, { kind: "MessageEvent" })).toBe(batch.filter((e) => e.event.kind === "MessageEvent").length);
      // The messages' texts went in with their events (a body count reads them alone on PostgreSQL).
      const textOf = (e: EventToStore) => (e.event.kind === "MessageEvent" ? messageSearchText(e.event as MessageEvent).toLowerCase() : "");
      const term = textOf(batch.find((e) => textOf(e).length >= 6)!).slice(0, 6);
      expect(await store.count(CONV, { body: term })).toBe(batch.filter((e) => textOf(e).includes(term)).length);
      // The next batch, small, goes on from there.
      const next = store.streamBatch!(CONV)!;
      next.add(encodeRows(rows(events(10, { seed: 4 }))));
      expect(await next.end(10)).toEqual({ firstSeq: 2_501, count: 10, eventCount: 2_510 });
      expect((await store.readAfter(CONV, 2_500, 100)).map((e) => e.id)).toEqual(events(10, { seed: 4 }).map((e) => e.event.id));
    });

    it("rolls back what it wrote when aborted, or on an id already stored (its index within the whole batch)", async () => {
      const store = await subject.open();
      await store.createConversation({ id: CONV, status: "STOPPED" }, []);
      const stored = events(5, { seed: 5 });
      await store.appendEvents(CONV, stored);
      const before = await subject.rawCounts(store);
      // Aborted after two chunks were written into the open transaction.
      const aborted = store.streamBatch!(CONV)!;
      for (const chunk of chunksOf(events(2_000, { seed: 6 }), 1_000)) aborted.add(chunk);
      await aborted.abort();
      expect(await subject.rawCounts(store)).toEqual(before);
      // An id stored before, at index 1,234 of the batch (in its second chunk).
      const batch = events(2_000, { seed: 7 });
      batch[1_234] = stored[2]!;
      const duplicate = store.streamBatch!(CONV)!;
      for (const chunk of chunksOf(batch, 1_000)) duplicate.add(chunk);
      const error = await duplicate.end(2_000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DuplicateEventIdError);
      expect(error).toMatchObject({ eventId: stored[2]!.event.id, index: 1_234 });
      // An id twice in the batch, in two chunks: the second is named.
      const repeated = events(2_000, { seed: 8 });
      repeated[1_500] = repeated[100]!;
      const twice = store.streamBatch!(CONV)!;
      for (const chunk of chunksOf(repeated, 1_000)) twice.add(chunk);
      await expect(twice.end(2_000)).rejects.toMatchObject({ constructor: DuplicateEventIdError, index: 1_500 });
      expect(await subject.rawCounts(store)).toEqual(before);
      expect((await store.getConversation(CONV))?.eventCount).toBe(5);
      expect(await store.count(CONV, { kind: stored[0]!.event.kind })).toBe(stored.filter((e) => e.event.kind === stored[0]!.event.kind).length);
      // An unknown conversation; and the store writes on afterwards.
      const unknown = store.streamBatch!("0b0b0b0b-0000-4000-8000-000000000000")!;
      unknown.add(encodeRows(rows(events(3, { seed: 9 }))));
      await expect(unknown.end(3)).rejects.toMatchObject({ name: "ConversationNotFoundError" });
      expect((await store.appendEvents(CONV, events(1, { seed: 10 })))[0]!.seq).toBe(6);
    });
  });
}
