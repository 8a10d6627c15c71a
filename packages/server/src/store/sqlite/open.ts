/** Opening the SQLite store: the file, its pragmas and migrations, the checkpointer and the reader threads. */
import path from "node:path";
import Database from "better-sqlite3";
import { privateFileSync, privateIfExistsSync } from "../../private-files.js";
import { WorkerPool } from "../../threads/pool.js";
import { assertSchemaSupported, migrate } from "../migrations.js";
import type { BodySearchTuning } from "./body-search.js";
import { BackgroundCheckpointer, WAL_AUTOCHECKPOINT_BYTES, WAL_BACKSTOP_BYTES } from "./checkpointer.js";
import { SqliteDatabase } from "./database.js";
import { SqliteStore, type SqliteEventStore } from "./store.js";

/** New databases: fewer, larger pages (fewer WAL frames, shallower trees; ingest +10% at 1M). */
const PAGE_SIZE = 8192;

/**
 * message_fts's FTS5 settings (kept in its config table, so one write at open serves every
 * connection). Each commit flushes a new FTS segment that merges move up level by level: with the
 * default automerge (4) the trigram index was ~40% of an event batch's write at 1M events; merging
 * 8 segments at a time rewrites each posting fewer times (the index's ingest of the bench's texts,
 * 1M events, interleaved: 7.9 and 8.1 s against 10.2 and 10.9 s), and body-search pages measured the
 * same (search bench, 1M: body rare p50 0.075 ms against 0.079–0.083). Leaves of 8,000 bytes
 * (pgsz) saved more on ingest but made rare-body pages ~25% slower: not set. Applies to segments
 * written from then on: no rebuild.
 */
const FTS_SETTINGS: Record<string, number> = { automerge: 8 };

function tuneFts(db: Database.Database): void {
  const current = new Map((db.prepare("SELECT k, v FROM message_fts_config").all() as { k: string; v: unknown }[]).map((row) => [row.k, row.v]));
  for (const [key, value] of Object.entries(FTS_SETTINGS)) {
    // The value inline: FTS5 takes only an integer, which a bound JS number is not (a REAL).
    if (current.get(key) !== value) db.exec(`INSERT INTO message_fts (message_fts, rank) VALUES ('${key}', ${Math.floor(value)})`);
  }
}

/** What every connection that writes sets: the store's own and the import writer's. */
function writerPragmas(db: Database.Database): void {
  // Durable across a process crash (a commit is in the WAL, which the OS has); a power loss may
  // lose the last commits, never consistency. Only checkpoints fsync.
  db.pragma("synchronous = NORMAL");
  db.pragma("temp_store = MEMORY");
  db.pragma("cache_size = -65536"); // 64 MiB per connection
  db.pragma("mmap_size = 268435456"); // reads through a memory map: no read() call per page on large stores
  db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`); // the WAL file is cut back to this
}

/** Options of openSqliteStore. */
export interface SqliteStoreOptions {
  /** Database file path; ":memory:" for a private in-memory database. */
  file: string;
  /** How long a writer waits for a lock held by another connection, ms. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * The two thresholds of the body-search plan (see body-search.ts). The defaults suit every
   * size; tests lower them to reach each branch with a few events.
   */
  bodySearch?: BodySearchTuning;
  /**
   * Read every searchJson page with its order stated in the aggregates (the path taken when the
   * fast read comes back out of order); for tests. Default false.
   */
  sortedJsonPages?: boolean;
  /**
   * Reader threads (read-worker.ts, each with its own read-only connection) that run
   * body and time-range `count`s and body-filtered `searchJson`s, so that they never hold the calling thread;
   * 0 runs them in place. File stores only (an in-memory database has one connection). Default 0.
   */
  readThreads?: number;
  /**
   * Write the rows of staged imports (importRows, discardImport) on a thread of their own
   * (import-writer.ts, with its own connection), so that a large replay's commits never
   * hold the calling thread; other writes wait their turn behind one in flight. File stores only.
   * Default false.
   */
  importThread?: boolean;
}

/**
 * Opens (creating it if needed) and migrates a store.
 * @throws SchemaTooNewError when the file was written by a newer schema version.
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteEventStore {
  if (options.file !== ":memory:" && options.file !== "") {
    // 0600 before SQLite opens it: SQLite gives the -wal and -shm files the database's own mode.
    privateFileSync(options.file);
    for (const suffix of ["-wal", "-shm", "-journal"]) privateIfExistsSync(options.file + suffix);
  }
  const db = new Database(options.file);
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    db.pragma("foreign_keys = ON");
    assertSchemaSupported(db); // before the first write
    db.pragma(`page_size = ${PAGE_SIZE}`); // a new database only: an existing one keeps its own
    db.pragma("journal_mode = WAL");
    writerPragmas(db);
    // A large WAL between the writer's own checkpoints: event ids are random, so each commit
    // dirties pages all over event_ids, and a rarer checkpoint writes each of them once for many
    // commits. The background checkpointer copies it as it grows (see WAL_BACKSTOP_BYTES).
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    const autocheckpoint = (bytes: number) => db.pragma(`wal_autocheckpoint = ${Math.floor(bytes / pageSize)}`);
    autocheckpoint(db.memory ? WAL_AUTOCHECKPOINT_BYTES : WAL_BACKSTOP_BYTES);
    migrate(db);
    tuneFts(db);
    if (!db.memory) {
      // A WAL left by the last run is copied now, before any request could wait on it.
      try {
        db.pragma("wal_checkpoint(TRUNCATE)");
      } catch {
        // Another connection is busy with it: the background checkpointer will be.
      }
    }
    const inFile = db.memory ? undefined : new BackgroundCheckpointer(path.resolve(db.name), () => db.open && autocheckpoint(WAL_AUTOCHECKPOINT_BYTES));
    const threads = db.memory ? 0 : Math.max(0, Math.floor(options.readThreads ?? 0));
    const reads = threads > 0 ? new WorkerPool({ name: "read-worker", source: new URL("./read-worker.ts", import.meta.url) }, threads, { file: path.resolve(db.name), bodySearch: options.bodySearch }) : undefined;
    const database = new SqliteDatabase(db, options.bodySearch, inFile, options.sortedJsonPages);
    database.removeStagedImports();
    const importWriter = !db.memory && options.importThread ? new WorkerPool({ name: "import-writer", source: new URL("./import-writer.ts", import.meta.url) }, 1, { file: path.resolve(db.name) }) : undefined;
    return new SqliteStore(database, reads, importWriter);
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * A second read-write connection to an existing, current store (the import writer's:
 * import-writer.ts), synchronous. It writes what the store's own connection does (same
 * pragmas) but runs no migration and no checkpointer: the store's connection owns those.
 */
export function openSqliteImportWriter(options: Pick<SqliteStoreOptions, "file" | "busyTimeoutMs">): SqliteDatabase {
  const db = new Database(options.file, { fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    db.pragma("foreign_keys = ON");
    assertSchemaSupported(db);
    writerPragmas(db);
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    db.pragma(`wal_autocheckpoint = ${Math.floor(WAL_BACKSTOP_BYTES / pageSize)}`);
    return new SqliteDatabase(db);
  } catch (err) {
    db.close();
    throw err;
  }
}

/** A read-only connection to an existing, current store (a reader thread's), synchronous. */
export function openSqliteReader(options: Pick<SqliteStoreOptions, "file" | "busyTimeoutMs" | "bodySearch" | "sortedJsonPages">): SqliteDatabase {
  const db = new Database(options.file, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    assertSchemaSupported(db);
    db.pragma("temp_store = MEMORY");
    db.pragma("cache_size = -65536");
    db.pragma("mmap_size = 268435456");
    return new SqliteDatabase(db, options.bodySearch, undefined, options.sortedJsonPages);
  } catch (err) {
    db.close();
    throw err;
  }
}

