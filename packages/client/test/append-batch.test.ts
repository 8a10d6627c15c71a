/**
 * appendEventBatch against the real reference server: a lazy (async) iterable streamed as JSONL
 * batches, read no further ahead than the request being sent, strings taken as lines as they are,
 * a failed batch leaving the earlier ones stored and naming its own line, and its argument checks.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, createClient, isApiError } from "@acs-toolkit/client";
import { KEY, manyEvents, startReferenceServer, type ReferenceServer } from "./support/server.js";

let ref: ReferenceServer;
let client: ReturnType<typeof createClient>;
beforeAll(async () => {
  ref = await startReferenceServer();
  client = createClient({ baseUrl: ref.url, apiKey: KEY });
});
afterAll(async () => {
  await ref?.close();
});

const ids = async (id: string) => (await ref.server.store.readAfter(id, 0, 100_000)).map((e) => e.id);

describe("appendEventBatch", () => {
  it("streams an async iterable in batches, reading only as fast as it sends", async () => {
    const { conversation_id: id } = await client.createConversation();
    const events = manyEvents(25_000);
    let read = 0;
    let aheadOfServer = 0;
    // getConversation on every read is slow: check the bound on every 2,000th read only.
    async function* sampled() {
      for (const [i, event] of events.entries()) {
        read = i + 1;
        if (i % 2_000 === 0) aheadOfServer = Math.max(aheadOfServer, read - (await client.getConversation(id)).event_count);
        yield event;
      }
    }
    const batches: number[] = [];
    const result = await client.appendEventBatch(id, sampled(), { onBatch: (b) => batches.push(b.event_count) });
    expect(result).toEqual({ appended: 25_000, event_count: 25_000, batches: 3 });
    expect(batches).toEqual([10_000, 20_000, 25_000]);
    expect(aheadOfServer).toBeLessThanOrEqual(10_001);
    expect(await ids(id)).toEqual(events.map((e) => e.id));
  });

  it("takes strings as lines, sends no empty batch, and leaves earlier batches stored when one fails", async () => {
    const { conversation_id: id } = await client.createConversation();
    const events = manyEvents(30);
    const lines = events.map((e) => JSON.stringify(e));
    expect(await client.appendEventBatch(id, lines.slice(0, 20), { batchSize: 10 })).toEqual({ appended: 20, event_count: 20, batches: 2 });
    expect(await client.appendEventBatch(id, [])).toEqual({ appended: 0, event_count: 0, batches: 0 });
    // Batch 1 (lines 21–25) is fine, batch 2 repeats an id stored before on its line 3.
    const stored: number[] = [];
    const error = await client.appendEventBatch(id, [...lines.slice(20, 27), lines[4]!, ...lines.slice(27)], { batchSize: 5, onBatch: (b) => stored.push(b.event_count) }).catch((e: unknown) => e);
    expect(isApiError(error, "appendEventBatch") && error.is(422)).toBe(true);
    expect((error as ApiError<"appendEventBatch">).detail?.[0]?.loc).toEqual(["body", 3, "id"]);
    expect(stored).toEqual([25]);
    expect(await ids(id)).toEqual(events.slice(0, 25).map((e) => e.id));
  });

  it("refuses a line with a newline and a batch size the server would refuse, sending nothing", async () => {
    const { conversation_id: id } = await client.createConversation();
    await expect(client.appendEventBatch(id, ['{"kind":\n"PauseEvent"}'])).rejects.toThrow(/one line/);
    await expect(client.appendEventBatch(id, [], { batchSize: 10_001 })).rejects.toThrow(RangeError);
    await expect(client.appendEventBatch(id, [], { batchSize: 0 })).rejects.toThrow(RangeError);
    expect(await ids(id)).toEqual([]);
  });
});
