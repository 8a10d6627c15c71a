/**
 * Versioned schema migrations of the embedded SQLite store.
 *
 * - `schema_migrations` records every applied version (one row each).
 * - Each migration is an ordered step, applied at open in its own IMMEDIATE transaction: a crash
 *   leaves it either applied and recorded or not at all, and two processes opening the same file
 *   cannot both apply it (the second sees the version recorded and skips). Its statements are
 *   idempotent too (`IF NOT EXISTS`), so re-running a step over objects that already exist (a
 *   database restored from a hand-patched copy) is harmless.
 * - A database whose recorded version is newer than the newest this code knows is refused before
 *   anything is written to it: an older server must never write into a schema it does not understand.
 *
 * To change the schema, append a migration with the next version number; never edit an applied one.
 */
import type Database from "better-sqlite3";

export interface Migration {
  /** 1, 2, 3, ... in order, no gaps. */
  readonly version: number;
  readonly name: string;
  /** SQL script; every statement idempotent. */
  readonly sql: string;
}

/**
 * Version 1, the initial schema.
 *
 * `events.key` is `(conversation << 32) | seq`: the table is clustered by conversation and append
 * order, and the same integer is the rowid of the message text and of its FTS5 entry, so an FTS
 * query restricts itself to one conversation with a rowid range inside the full-text index (see
 * sqlite.ts, "body search"). `conversations.pk` < 2^31 and `seq` < 2^32 keep it in 63 bits.
 * Event ids are random (UUID v4), so inserts into an index on them land on a random page each:
 * that index is the most expensive part of ingest (one dirty page per event per commit). It holds
 * a 48-bit hash of the id (`id_hash`), not the 36-character text, which makes it ~2.3x smaller;
 * it is not UNIQUE (hashes may collide): sqlite.ts checks uniqueness exactly, one statement per
 * batch (the stored ids sharing a hash with the batch, compared as text).
 * `message_texts` repeats a message's seq, ts and source so that a query driven by FTS never
 * reads the (large) events rows of its candidates.
 */
const V1_INITIAL = `
CREATE TABLE IF NOT EXISTS conversations (
  pk INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  event_count INTEGER NOT NULL DEFAULT 0,
  repository TEXT,
  selected_branch TEXT,
  git_provider TEXT,
  next_seq INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE IF NOT EXISTS events (
  key INTEGER PRIMARY KEY,
  conversation INTEGER NOT NULL REFERENCES conversations (pk),
  seq INTEGER NOT NULL,
  ts INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  id_hash INTEGER NOT NULL,
  kind TEXT NOT NULL,
  source TEXT NOT NULL,
  json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_event_id ON events (conversation, id_hash);
CREATE INDEX IF NOT EXISTS events_by_time ON events (conversation, ts, seq);
CREATE INDEX IF NOT EXISTS events_by_kind ON events (conversation, kind, ts, seq);
CREATE INDEX IF NOT EXISTS events_by_source ON events (conversation, source, ts, seq);
CREATE INDEX IF NOT EXISTS events_by_kind_source ON events (conversation, kind, source, ts, seq);

CREATE TABLE IF NOT EXISTS message_texts (
  key INTEGER PRIMARY KEY REFERENCES events (key),
  seq INTEGER NOT NULL,
  ts INTEGER NOT NULL,
  source TEXT NOT NULL,
  text TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS message_fts USING fts5 (
  text,
  content = 'message_texts',
  content_rowid = 'key',
  tokenize = 'trigram'
);
CREATE TRIGGER IF NOT EXISTS message_texts_to_fts AFTER INSERT ON message_texts BEGIN
  INSERT INTO message_fts (rowid, text) VALUES (new.key, new.text);
END;

CREATE TABLE IF NOT EXISTS documents (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`;

export const MIGRATIONS: readonly Migration[] = [{ version: 1, name: "initial", sql: V1_INITIAL }];

export const LATEST_SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export class SchemaTooNewError extends Error {
  constructor(
    readonly found: number,
    readonly supported: number,
  ) {
    super(
      `database schema version ${found} is newer than this server supports (${supported}); ` +
        `upgrade the server, or open a copy made before the upgrade`,
    );
    this.name = "SchemaTooNewError";
  }
}

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

/** The highest applied version, 0 for a new database; reads only. */
export function schemaVersion(db: Database.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!table) return 0;
  const row = db.prepare("SELECT max(version) AS version FROM schema_migrations").get() as { version: number | null };
  return row.version ?? 0;
}

/** Throws SchemaTooNewError when the database was written by a newer schema; writes nothing. */
export function assertSchemaSupported(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): void {
  const latest = migrations.length ? migrations[migrations.length - 1]!.version : 0;
  const found = schemaVersion(db);
  if (found > latest) throw new SchemaTooNewError(found, latest);
}

/**
 * Applies the pending migrations in order; a no-op when the database is current.
 * @returns the versions before and after.
 * @throws SchemaTooNewError
 */
export function migrate(
  db: Database.Database,
  migrations: readonly Migration[] = MIGRATIONS,
): { from: number; to: number } {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${m.name} has version ${m.version}, expected ${i + 1}`);
  });
  assertSchemaSupported(db, migrations);
  const from = schemaVersion(db);
  const record = () => db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  let to = from;
  for (const migration of migrations) {
    if (migration.version <= to) continue;
    db.transaction(() => {
      db.exec(CREATE_MIGRATIONS_TABLE);
      // Another process may have applied it between our read and this (exclusive) transaction.
      const current = schemaVersion(db);
      const latest = migrations[migrations.length - 1]!.version;
      if (current > latest) throw new SchemaTooNewError(current, latest);
      if (current >= migration.version) return;
      db.exec(migration.sql);
      record().run(migration.version, migration.name, new Date().toISOString());
    }).immediate();
    to = migration.version;
  }
  return { from, to };
}
