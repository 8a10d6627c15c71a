/**
 * The fence of an agent's writes on a PostgreSQL store shared by two instances (two stores on one
 * schema, as two server processes): once another instance has taken a conversation's lease over,
 * the old owner's appends and status changes are refused (LeaseLostError) and store nothing, while
 * the new owner writes; a lease taken over while the old owner's append holds it waits for that
 * append to commit.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { LeaseLostError, type FencedPostgresStore } from "../../src/store/postgres/fenced-store.js";
import { openPostgresStore } from "../../src/store/postgres/index.js";
import { acquireLease } from "../../src/store/postgres/leases.js";
import type { EventToStore } from "../../src/store/types.js";
import { createScratchDatabase, schemaName, type ScratchDatabase } from "../support/postgres.js";

let db: ScratchDatabase;
const stores: FencedPostgresStore[] = [];
beforeAll(async () => {
  db = await createScratchDatabase();
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await db?.drop();
});

const CONVERSATION = "5b1c0a7e-8f3d-4e2a-9c6b-1d2e3f4a5b6c";
let n = 0;
function pause(): EventToStore {
  const event = { kind: "PauseEvent", id: `pause-${++n}`, timestamp: `2026-02-05T11:00:0${n}`, source: "user" } as const;
  return { event, json: JSON.stringify(event) };
}

it("an old owner's appends and status changes are refused once another instance took the lease; the new owner's are stored", async () => {
  const schema = schemaName();
  const [a, b] = (await Promise.all([0, 1].map(() => openPostgresStore({ url: db.url, schema, maxConnections: 3 })))) as [FencedPostgresStore, FencedPostgresStore];
  stores.push(a, b);
  await a.createConversation({ id: CONVERSATION, status: "RUNNING" }, []);

  const taken = await acquireLease(a.pool, CONVERSATION, "instance-a", 300);
  expect(taken).toEqual({ generation: 1 });
  a.fence(CONVERSATION, { owner: "instance-a", generation: 1 });
  const first = pause();
  await a.appendEvents(CONVERSATION, [first]);

  // While A's lease is live, B cannot take it; once it expires (A stopped renewing), B does.
  expect(await acquireLease(b.pool, CONVERSATION, "instance-b", 60_000)).toMatchObject({ owner: "instance-a", live: true });
  await vi.waitFor(async () => expect(await acquireLease(b.pool, CONVERSATION, "instance-b", 60_000)).toEqual({ generation: 2 }), { timeout: 10_000, interval: 50 });
  b.fence(CONVERSATION, { owner: "instance-b", generation: 2 });

  await expect(a.appendEvents(CONVERSATION, [pause()])).rejects.toBeInstanceOf(LeaseLostError);
  await expect(a.setStatus(CONVERSATION, "STOPPED")).rejects.toBeInstanceOf(LeaseLostError);
  const third = pause();
  await b.appendEvents(CONVERSATION, [third]);
  expect((await b.readAfter(CONVERSATION, 0, 10)).map((event) => event.id)).toEqual([first.event.id, third.event.id]);
  expect((await b.getConversation(CONVERSATION))?.status).toBe("RUNNING");
  expect(await b.setStatus(CONVERSATION, "ERROR")).toMatchObject({ status: "ERROR" });

  // An append of the owner in flight (its transaction read the lease FOR SHARE, then waits for the
  // conversation's row, held here) makes a takeover of its expired lease wait until it commits.
  await b.pool.query("update agent_leases set expires_at = clock_timestamp() - interval '1 second' where conversation_id = $1", [CONVERSATION]);
  const blocker = new pg.Client({ connectionString: db.url });
  await blocker.connect();
  const lockWaiters = async () => (await blocker.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows[0]!.n;
  try {
    await blocker.query("begin");
    await blocker.query(`select 1 from "${schema}".conversations where id = $1 for update`, [CONVERSATION]);
    const inFlight = pause();
    const append = b.appendEvents(CONVERSATION, [inFlight]);
    await vi.waitFor(async () => expect(await lockWaiters()).toBe(1), { timeout: 10_000, interval: 20 });
    let settled = false;
    const takeover = acquireLease(a.pool, CONVERSATION, "instance-a", 60_000).finally(() => (settled = true));
    await vi.waitFor(async () => expect(await lockWaiters()).toBe(2), { timeout: 10_000, interval: 20 });
    expect(settled).toBe(false);
    await blocker.query("commit");
    await append;
    expect(await takeover).toEqual({ generation: 3 });
    expect((await a.readAfter(CONVERSATION, 0, 10)).map((event) => event.id)).toEqual([first.event.id, third.event.id, inFlight.event.id]);
  } finally {
    await blocker.end();
  }
  await expect(b.appendEvents(CONVERSATION, [pause()])).rejects.toBeInstanceOf(LeaseLostError);
});
