/**
 * The in-memory store's pages as bytes (searchJson): each event is encoded to UTF-8 once, when a
 * page first holds it, and later pages are copied from those bytes, not joined and encoded again
 * (what a mock's event search spent most of its store time on). The contract suite checks that the
 * pages are the same; this checks that the encoding is not redone.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { openMemoryStore } from "../../src/store/memory.js";

const CONV = "00000000-0000-4000-8000-000000000001";

afterEach(() => vi.restoreAllMocks());

describe("memory store searchJson", () => {
  it("encodes an event once: a page read again is copied from the kept bytes", async () => {
    const store = openMemoryStore();
    const events = Array.from({ length: 30 }, (_, i) => ({ kind: "PauseEvent", id: `p${i}`, timestamp: `2026-02-05T11:00:${String(i).padStart(2, "0")}`, source: "user", note: `é ${i} 😀` }));
    await store.createConversation({ id: CONV, status: "RUNNING" }, events.map((event) => ({ event: event as never, json: JSON.stringify(event) })));
    const read = async (query: { limit: number; after?: { ts: number; seq: number } }) => new TextDecoder().decode((await store.searchJson(CONV, { order: "asc", ...query })).json);
    const first = await read({ limit: 20 });
    expect(first).toBe(events.slice(0, 20).map((e) => JSON.stringify(e)).join(","));

    const encode = vi.spyOn(TextEncoder.prototype, "encode");
    expect(await read({ limit: 20 })).toBe(first);
    expect(await read({ limit: 10 })).toBe(events.slice(0, 10).map((e) => JSON.stringify(e)).join(","));
    expect(encode).not.toHaveBeenCalled();
    // A page that reaches events no page held yet encodes those only.
    expect(await read({ limit: 25 })).toBe(events.slice(0, 25).map((e) => JSON.stringify(e)).join(","));
    expect(encode).toHaveBeenCalledTimes(5);
  });
});
