/** Opening a PostgreSQL store: its options, its pools' settings, the migrations (migrations.ts). */
import type pg from "pg";
import { ANALYZE_AFTER_ROWS } from "./analyze-schedule.js";
import { unavailable } from "./connection.js";
import { loadPostgresDriver, postgresDriver } from "./driver.js";
import { migratePostgres, quoteIdent } from "./migrations.js";
import { BODY_SCAN_BUDGET } from "./search.js";
import { FencedPostgresStore } from "./fenced-store.js";
import type { PostgresEventStore } from "./store.js";

/** The trigram index's pending list bound on the store's connections, kB: what a body search reads of it at most (migrations 5 and 8). */
const GIN_PENDING_LIST_KB = 128;

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions {
  /** A connection URL (`postgres://user@host:5432/db`). */
  url: string;
  /** The schema holding the store's tables, created when missing. Default `acs`. */
  schema?: string;
  /** Most connections in the pool. Default 10. A replay's batches use one more, of their own (PostgresEventStore.idCheckPool). */
  maxConnections?: number;
  /** Longest a statement may run, in ms, before it fails with StoreUnavailableError. Default 10,000; 0 for none. */
  statementTimeoutMs?: number;
  /** Longest to wait for a connection, in ms. Default 5,000. */
  connectTimeoutMs?: number;
  /** Messages a body search that pg_trgm cannot serve tests for one page (see BODY_SCAN_BUDGET); tests lower it. */
  bodyScanBudget?: number;
  /** Rows written before the first ANALYZE this instance runs itself (see ANALYZE_AFTER_ROWS); tests lower it. */
  analyzeAfterRows?: number;
  /** Rows from which an append uses COPY (see COPY_MIN_ROWS in store.ts); Infinity never does (benchmarks compare). */
  copyMinRows?: number;
}

// int8 as numbers: seq and counts are far below 2^53; ts past it rounds as the events' own did.
// Per pool, not pg.types.setTypeParser, which would change every other pg user in the process.
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === 20 ? Number : postgresDriver().pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
};

/** The pool settings of a store (also used by the agents' command traffic, agent-cluster.ts). */
export function poolConfig(options: PostgresStoreOptions): pg.PoolConfig {
  const schema = options.schema ?? "acs";
  return {
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    statement_timeout: options.statementTimeoutMs ?? 10_000,
    application_name: "acs-server",
    // gin_pending_list_limit: what a body search reads of the trigram index's pending list at most (migrations 5 and 8).
    options: `-c search_path=${quoteIdent(schema).replaceAll(" ", "\\ ")},public -c gin_pending_list_limit=${GIN_PENDING_LIST_KB}`,
    types,
  };
}

/**
 * Opens (and migrates) a PostgreSQL store. Safe to call from several processes at once.
 * @throws StoreUnavailableError when the database does not answer
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresEventStore> {
  const schema = options.schema ?? "acs";
  const { pg } = await loadPostgresDriver();
  const pool = new pg.Pool(poolConfig(options));
  // An idle connection that dies (a restart) is reported here; without a listener it would end the
  // process. The pool drops it and opens another on the next query.
  pool.on("error", () => undefined);
  try {
    await migratePostgres(pool, schema);
    // Fenced: an agent runtime on a cluster fences its conversations' writes (fenced-store.ts); unfenced, the same store.
    const store = new FencedPostgresStore(pool, schema, options.url, Math.max(1, Math.floor(options.bodyScanBudget ?? BODY_SCAN_BUDGET)), Math.max(1, options.analyzeAfterRows ?? ANALYZE_AFTER_ROWS));
    if (options.copyMinRows !== undefined) store.copyMinRows = options.copyMinRows;
    const { rows: [owner] } = await pool.query<{ owns: boolean }>("select pg_has_role(current_user, relowner, 'USAGE') as owns from pg_class where oid = 'message_texts_body'::regclass");
    store.ownsBodyIndex = owner?.owns === true;
    // One more connection than maxConnections, used by replays only (insertChecked).
    store.idCheckPool = new pg.Pool({ ...poolConfig(options), max: 1, application_name: "acs-server id check" });
    store.idCheckPool.on("error", () => undefined); // as the pool's, above
    await store.removeStaleImports();
    return store;
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw unavailable(error) ?? error;
  }
}
