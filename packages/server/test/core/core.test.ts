/** Units of the core (`@acs-toolkit/server/core`) that the server's and the mock's tests do not single out. */
import { describe, expect, it } from "vitest";
import { ConversationCore, EventBus, recordingRuntime, shallowConformance, truncateReason } from "../../src/core/index.js";
import { openMemoryStore } from "../../src/store/index.js";

describe("EventBus", () => {
  it("an unsubscribe called twice leaves a later subscriber of the conversation alone", () => {
    const bus = new EventBus();
    const stop = bus.subscribe("c", () => {});
    stop();
    const seen: number[] = [];
    bus.subscribe("c", (events) => seen.push(events.length));
    stop();
    bus.publish("c", [{ seq: 1, ts: 0, id: "e", json: "{}" }] as never);
    expect(seen).toEqual([1]);
    expect(bus.hasSubscribers("c")).toBe(true);
  });
});

describe("the default state conformance (no compiled validator)", () => {
  it("checks a property's JSON type and enum, through its $ref", () => {
    const at = (name: string) => `AgentConversationState/properties/${name}`;
    expect(shallowConformance(at("max_iterations"), 10)).toBe(true);
    expect(shallowConformance(at("max_iterations"), "10")).toBe(false);
    expect(shallowConformance(at("execution_status"), "running")).toBe(true);
    expect(shallowConformance(at("execution_status"), "sleeping")).toBe(false);
    expect(shallowConformance(at("title"), null)).toBe(true);
    expect(shallowConformance(at("no_such_property"), 1)).toBe(false);
  });

  it("derives the state of a conversation from what it recorded, ignoring values that do not fit", async () => {
    const store = openMemoryStore();
    const conversations = new ConversationCore(store, new EventBus(), recordingRuntime);
    const record = await conversations.create({});
    const update = (key: string, value: unknown, n: number) => ({ id: `00000000-0000-4000-8000-00000000000${n}`, timestamp: "2026-02-05T11:00:00", source: "environment", key, value, kind: "ConversationStateUpdateEvent" }) as never;
    await conversations.record(record.id, [update("execution_status", "running", 1), update("max_iterations", "many", 2)]);
    const info = await conversations.info((await store.getConversation(record.id))!);
    expect(info).toMatchObject({ conversation_id: record.id, execution_status: "running", max_iterations: 500, event_count: 2 });
  });
});

describe("truncateReason", () => {
  it("keeps a close reason within 123 bytes of UTF-8, never splitting a character", () => {
    expect(truncateReason("short")).toBe("short");
    const long = truncateReason("é".repeat(100));
    expect(new TextEncoder().encode(long).length).toBeLessThanOrEqual(123);
    expect(long.endsWith("é…")).toBe(true);
  });
});
