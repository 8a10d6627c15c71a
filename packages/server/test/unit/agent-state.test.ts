/**
 * Reading a conversation's state (GET …/conversations/{id}, the live channel's full_state) walks
 * its state updates, then the events recorded since the last read. Over a store that answers at
 * once (SQLite), awaiting each page never yields: 67k state updates took 306 ms in one task, and a
 * fold of 50k new events 195 ms. Each page now runs in a task of its own.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Event } from "@acs-toolkit/schema";
import { RecordedStates } from "../../src/recorded-states.js";
import { openSqliteStore, type SqliteEventStore } from "../../src/store/sqlite/index.js";
import type { EventToStore } from "../../src/store/types.js";

let dir: string;
let store: SqliteEventStore;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "acs-state-"));
  store = openSqliteStore({ file: path.join(dir, "acs.sqlite") });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const toStore = (event: Record<string, unknown>): EventToStore => ({ event: event as unknown as Event, json: JSON.stringify(event) });
const update = (i: number, value: string) =>
  toStore({ id: randomUUID(), timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), source: "environment", kind: "ConversationStateUpdateEvent", key: "execution_status", value });
const message = (i: number) =>
  toStore({ id: randomUUID(), timestamp: new Date(Date.UTC(2026, 0, 2) + i * 1000).toISOString(), source: "user", kind: "MessageEvent", llm_message: { role: "user", content: [] } });

/** How many event-loop turns `work` spanned. */
async function turnsOf<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let counting = true;
  const count = () => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  const result = await work();
  counting = false;
  return { result, turns };
}

it("the first read walks the state updates one page per task, the next one the new events", async () => {
  const id = randomUUID();
  // 3,000 state updates and no full_state: the first read walks all of them (pages of 100).
  await store.createConversation({ id, status: "STOPPED" }, Array.from({ length: 3_000 }, (_, i) => update(i, i === 2_999 ? "finished" : "running")));
  const states = new RecordedStates(store);
  const first = await turnsOf(async () => states.of((await store.getConversation(id))!));
  expect(first.result.execution_status).toBe("finished");
  expect(first.turns).toBeGreaterThanOrEqual(29);

  // 2,500 events later (pages of 500), one of them a state update.
  await store.appendEvents(id, [...Array.from({ length: 2_499 }, (_, i) => message(i)), update(4_000, "paused")]);
  const next = await turnsOf(async () => states.of((await store.getConversation(id))!));
  expect(next.result.execution_status).toBe("paused");
  expect(next.turns).toBeGreaterThanOrEqual(4);
});
