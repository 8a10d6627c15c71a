/** What the PostgreSQL store's own tests share: a scratch database and its stores, another session's row lock, the store's statements as sent, and their plans. */
import pg from "pg";
import { afterAll, afterEach, beforeAll } from "vitest";
import { openPostgresStore, type PostgresEventStore } from "../../src/store/postgres/index.js";
import type { SearchPage, SearchQuery } from "../../src/store/types.js";
import { adminQuery, createScratchDatabase, type ScratchDatabase } from "../support/postgres.js";
import { CONV } from "./contract/fixtures.js";

/** A file's scratch database (created before its tests, dropped after) and the stores its tests open (closed after each). */
interface ScratchStores {
  readonly db: ScratchDatabase;
  /** Stores to close after the running test. */
  readonly opened: PostgresEventStore[];
  open(schema: string, options?: { statementTimeoutMs?: number }): Promise<PostgresEventStore>;
}

/** Registers the hooks of a test file's scratch database (see ScratchStores). */
export function useScratchStores(): ScratchStores {
  let db: ScratchDatabase | undefined;
  const opened: PostgresEventStore[] = [];
  beforeAll(async () => {
    db = await createScratchDatabase();
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  afterAll(async () => {
    await db?.drop();
  });
  return {
    get db() {
      if (!db) throw new Error("the scratch database is created in beforeAll");
      return db;
    },
    opened,
    async open(schema, options = {}) {
      const store = await openPostgresStore({ url: this.db.url, schema, maxConnections: 4, ...options });
      opened.push(store);
      return store;
    },
  };
}

/** Takes the conversation's row lock from another session, as another instance's long append would; `release` commits. */
export async function lockConversation(db: ScratchDatabase, store: PostgresEventStore): Promise<{ client: pg.Client; release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query("begin");
  await client.query(`select 1 from "${store.schema}".conversations where id = $1 for update`, [CONV]);
  return {
    client,
    async release() {
      await client.query("commit");
      await client.end();
    },
  };
}

/** Holds the conversation's row lock from another session for `ms` (pg_sleep: the stimulus), as another instance's long append would. */
export async function holdConversation(db: ScratchDatabase, store: PostgresEventStore, ms: number): Promise<{ released: Promise<void> }> {
  const { client, release } = await lockConversation(db, store);
  const released = (async () => {
    await client.query("select pg_sleep($1)", [ms / 1000]);
    await release();
  })();
  return { released };
}

/** Backends of the store's pools (application_name acs-server) in the scratch database now waiting on a lock. */
export async function waitingOnLock(db: ScratchDatabase): Promise<number> {
  const [row] = await adminQuery<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where application_name = 'acs-server' and datname = $1 and wait_event_type = 'Lock'",
    [db.name],
  );
  return row!.n;
}

/** Calls `seen` with each query's text and values that the clients of `store`'s pool (or of `pool`) send (a named statement comes as a config object). */
export function spyQueries(store: PostgresEventStore, seen: (text: string, values: unknown[]) => void, pool: pg.Pool = store.pool): void {
  pool.on("acquire", (client) => {
    if ((client as { spied?: boolean }).spied) return;
    (client as { spied?: boolean }).spied = true;
    const q = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const [text, values] = typeof args[0] === "string" ? [args[0], args[1]] : [(args[0] as { text?: unknown } | undefined)?.text, (args[0] as { values?: unknown } | undefined)?.values];
      if (typeof text === "string") seen(text, (values as unknown[] | undefined) ?? []);
      return q(...args);
    };
  });
}

/** The plan (EXPLAIN, costs off) of `text` with `values`, a line per node. */
export async function planOf(db: Pick<pg.Pool, "query">, text: string, values: unknown[] = []): Promise<string> {
  const { rows } = await db.query<{ "QUERY PLAN": string }>(`explain (costs off) ${text}`, values);
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}

/** A search through `store` that also answers the plan of the statement it read the page with. */
export function searchWithPlan(store: PostgresEventStore): (query: SearchQuery) => Promise<{ page: SearchPage; plan: string }> {
  const sent: { text: string; values: unknown[] }[] = [];
  spyQueries(store, (text, values) => void (text.includes("from events") && sent.push({ text, values })));
  return async (query) => {
    sent.length = 0;
    const page = await store.search(CONV, query);
    const [{ text, values }] = sent as [{ text: string; values: unknown[] }];
    return { page, plan: await planOf(store.pool, text, values) };
  };
}
