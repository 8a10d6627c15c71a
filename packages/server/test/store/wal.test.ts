/**
 * The WAL stays short under a stream of small appends (one event per commit, as live messages
 * come). Each such commit writes about ten 8 KiB pages; when background checkpoints were asked for
 * by event bytes only, the WAL grew by ~85 KB per commit to the 1 GB backstop, and then the
 * writer checkpointed and cut the file back on the request thread: 200–500 ms with the event loop
 * held, every ~12,500 messages (found by the fuzzer's WebSocket floods).
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { setImmediate as tick } from "node:timers/promises";
import { afterEach, expect, it } from "vitest";
import type { Event } from "@acs-toolkit/schema";
import { openSqliteStore } from "../../src/store/sqlite/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const MB = 1024 * 1024;

it("stays far below the backstop while 8,000 one-event commits come in", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "acs-wal-"));
  dirs.push(dir);
  const file = path.join(dir, "acs.sqlite");
  const store = openSqliteStore({ file });
  const id = randomUUID();
  await store.createConversation({ id, status: "STOPPED" }, []);
  let largest = 0;
  for (let i = 0; i < 8_000; i++) {
    const event = { id: randomUUID(), timestamp: new Date().toISOString(), source: "user", kind: "MessageEvent", llm_message: { role: "user", content: [{ type: "text", text: `message ${i}` }] } } as unknown as Event;
    await store.appendEvents(id, [{ event, json: JSON.stringify(event) }]);
    await tick(); // each message is a request of its own
    if (i % 50 === 49) largest = Math.max(largest, statSync(`${file}-wal`).size);
  }
  await store.close();
  // Without restarts 8,000 commits make a WAL of ~800 MB. The checkpointer starts it over past
  // 16 MB; how far past depends on when its thread gets a CPU (40–110 MB seen on a busy machine).
  expect(largest, `largest WAL ${(largest / MB).toFixed(0)} MB`).toBeLessThan(320 * MB);
});
