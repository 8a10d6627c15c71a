/**
 * The import thread (workers/import-worker.ts) parses no further ahead of the writes than a few
 * chunks of rows: each chunk it posts waits on the request thread's heap until written, and a whole
 * 65 MB replay parked there was collected in pauses of 150–180 ms at 1M events (past the 50 ms
 * event-loop budget). Driven through the real pool and thread, by its protocol: the body on a port,
 * `{ written }` credits back.
 */
import { MessageChannel } from "node:worker_threads";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerPool } from "../../src/threads/pool.js";
import { IMPORT_WORKER } from "../../src/workers/entries.js";

let pool: WorkerPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

/** A replay of `copies` copies of the example trajectory, with unique ids. */
function replayBody(copies: number): Buffer {
  const template = exampleEvents();
  const events = Array.from({ length: copies }, (_, copy) => template.map((e) => ({ ...e, id: e.id.replace(/^.{8}/, copy.toString(16).padStart(8, "0")) }))).flat();
  return Buffer.from(JSON.stringify({ replay_json: events.map((e) => JSON.stringify(e)).join("\n") }));
}

describe("the import thread", () => {
  it("posts at most 8 chunks of rows ahead of the writes, one more per chunk written, and all of them in the end", async () => {
    pool = new WorkerPool(IMPORT_WORKER, 1, {});
    const { port1, port2 } = new MessageChannel();
    const chunks: number[] = [];
    // Credits sent back, and how far ahead of them the chunks received ever were: the thread posts
    // a chunk only past a credit it got, so no chunk can arrive more than 8 ahead of those sent.
    let credits = 0;
    let ahead = 0;
    const credit = (written: number) => {
      credits += written;
      port1.postMessage({ written });
    };
    const done = pool.run({ body: port2 }, (message) => {
      if (message.rows) chunks.push((message.rows as unknown[]).length);
      ahead = Math.max(ahead, chunks.length - credits);
    }, [port2]);
    const body = replayBody(120); // thousands of events: dozens of chunks of 250 rows
    for (let at = 0; at < body.length; at += 64 * 1024) port1.postMessage(body.subarray(at, at + 64 * 1024));
    port1.postMessage({ end: true });

    await expect.poll(() => chunks.length, { timeout: 20_000 }).toBe(8);
    credit(3);
    await expect.poll(() => chunks.length, { timeout: 20_000 }).toBe(11);

    // Written as they come: every chunk arrives, and the job ends.
    const crediting = setInterval(() => credit(1), 1);
    await done;
    clearInterval(crediting);
    expect(chunks.reduce((a, b) => a + b, 0)).toBe(exampleEvents().length * 120);
    // Nothing came ahead of the credits, first of all while none had been sent (the job's end is
    // after its last message: this covers every chunk).
    expect(ahead).toBe(8);
    port1.close();
  });

  it("gives up, and frees its thread, when the request thread closes the port while it waits", async () => {
    pool = new WorkerPool(IMPORT_WORKER, 1, {});
    const { port1, port2 } = new MessageChannel();
    let chunks = 0;
    const done = pool.run({ body: port2 }, (message) => void (message.rows && chunks++), [port2]);
    port1.postMessage(replayBody(120));
    port1.postMessage({ end: true });
    await expect.poll(() => chunks, { timeout: 20_000 }).toBe(8);
    port1.close();
    await expect(done).rejects.toThrow(/gave up/);
    // The thread serves the next job.
    const next = new MessageChannel();
    const answered = pool.run({ body: next.port2 }, () => {}, [next.port2]);
    next.port1.postMessage(Buffer.from(JSON.stringify({})));
    next.port1.postMessage({ end: true });
    await answered;
    next.port1.close();
  });

  it("reads a replay's events as it writes them, not all before: a bad last event is found once the rows before it are written", async () => {
    pool = new WorkerPool(IMPORT_WORKER, 1, {});
    const { port1, port2 } = new MessageChannel();
    let chunks = 0;
    let rows = 0;
    let request = false;
    const done = pool.run({ body: port2 }, (message) => {
      if (message.request) request = true;
      if (message.rows) {
        chunks++;
        rows += (message.rows as unknown[]).length;
      }
    }, [port2]);
    done.catch(() => {});
    const events = JSON.parse(replayBody(120).toString()).replay_json.split("\n") as string[];
    events[events.length - 1] = JSON.stringify({ ...JSON.parse(events.at(-1)!), kind: "NoSuchEvent" });
    port1.postMessage(Buffer.from(JSON.stringify({ replay_json: events.join("\n") })));
    port1.postMessage({ end: true });
    // No credit back: it waits after 8 chunks, the bad event not read yet (it used to parse and
    // check every event first, holding them all, and fail here without a row).
    await expect.poll(() => chunks, { timeout: 20_000 }).toBe(8);
    expect(request).toBe(true);
    // Where it was when it failed (its last message: nothing comes after it): past the rows before
    // the bad event, more than the 8 chunks it posts before any is written.
    let failedAt: { rows: number; chunks: number } | undefined;
    done.catch(() => (failedAt = { rows, chunks }));
    const credit = setInterval(() => port1.postMessage({ written: 1 }), 1);
    await expect(done).rejects.toMatchObject({ name: "RequestValidationError", detail: [expect.objectContaining({ loc: ["body", "replay_json", events.length - 1, "kind"] })] });
    clearInterval(credit);
    // Every chunk before the bad event's (the chunk it is in is dropped with it): 250 rows a chunk.
    expect(failedAt!.rows).toBe(Math.floor((events.length - 1) / 250) * 250);
    expect(failedAt!.chunks).toBeGreaterThan(8);
    port1.close();
  });
});
