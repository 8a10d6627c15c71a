/**
 * The embedded SQLite EventStore (better-sqlite3, WAL), one concern per module:
 * - open.ts: opening a file (pragmas, migrations: ../migrations.ts), the checkpointer and reader threads;
 * - store.ts: SqliteStore, the async EventStore contract over the synchronous database;
 * - database.ts: SqliteDatabase: conversations, write transactions, staged imports, searches;
 * - statements.ts: every SQL statement; paging.ts: how filters and cursors become index ranges,
 *   and pages as bytes; body-search.ts: the body filter's plan (FTS or an ordered walk);
 * - ingest.ts: how a batch of events becomes rows; names.ts: kind and source codes;
 * - checkpointer.ts: WAL checkpoints on a worker thread.
 */
export { openSqliteStore, openSqliteReader, type SqliteStoreOptions } from "./open.js";
export type { SqliteEventStore } from "./store.js";
export type { BodySearchTuning } from "./body-search.js";
export { idHash } from "./ingest.js";
export { messageSearchText } from "../prepare.js";
