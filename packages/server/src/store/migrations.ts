/**
 * Versioned schema migrations of the embedded SQLite store.
 *
 * - `schema_migrations` records every applied version (one row each).
 * - Each migration is an ordered step, applied at open in its own IMMEDIATE transaction: a crash
 *   leaves it either applied and recorded or not at all, and two processes opening the same file
 *   cannot both apply it (the second sees the version recorded and skips). A step is idempotent
 *   too, so re-running it over a database that already has its objects (one restored from a
 *   hand-patched copy) is harmless: SQL steps use `IF NOT EXISTS`, and a step SQL cannot make
 *   idempotent (a table rebuild) is a function that looks at the schema and does only what is
 *   missing.
 * - Foreign keys are not enforced while steps run (a rebuild drops a parent table and renames its
 *   copy: SQLite's documented procedure for changing a table), and each step ends with
 *   `PRAGMA foreign_key_check`: a step that would leave a dangling reference fails and rolls back.
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
  /**
   * The step: an SQL script whose every statement is idempotent, or a function (inside the step's
   * transaction) that inspects the schema and changes only what is not done yet.
   */
  readonly up: string | ((db: Database.Database) => void);
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
 * (Version 2 moves the id hash to its own table, interns kind and source, and drops the trigger.)
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

/**
 * Version 2, compact events: replay ingest at 1M events was bound by bytes written per event
 * (WAL frames, then the checkpoint copying them) and by per-statement work; this step cuts both.
 *
 * - `names` interns the kind and source strings: `events.kind`, `events.source` and
 *   `message_texts.source` hold its integer `code`. The indexes with kind or source shrink by
 *   18–40% and compare integers; the events rows by ~8%. Codes are assigned on first use and
 *   never change; sqlite.ts caches them.
 * - Event ids move from a (conversation, id_hash) index on `events` to `event_ids`, a WITHOUT
 *   ROWID table keyed by (conversation, id_hash) holding the seq, with a signed 32-bit hash (the
 *   high 32 bits of version 1's 48-bit one; signed so that SQLite stores it in 4 bytes): ~15
 *   bytes per event instead of ~22. Inserts into it are random (ids are UUID v4), so at 1M events
 *   every commit rewrites most of its pages: its size is what such a commit writes.
 *   The key is UNIQUE, so inserting an event's hash is its duplicate check (no separate probe of
 *   the batch's hashes, ~13% of ingest at 1M); an id whose hash another id of the conversation
 *   already holds (a collision: ~1 in 4 billion pairs, ~100 in a conversation of 1M events) goes
 *   to `event_id_collisions`, keyed by the id itself. sqlite.ts resolves both cases exactly.
 * - The trigger that fed `message_fts` is dropped; sqlite.ts inserts into `message_fts` itself, in
 *   the same transaction. A statement with a trigger that writes a virtual table runs under a
 *   statement journal, and FTS5 flushes its pending terms to a new segment at every statement
 *   savepoint: the trigger made one FTS segment per message (and merges to match), ~13% of ingest.
 *   Now one segment per transaction.
 * - Foreign keys are DEFERRABLE INITIALLY DEFERRED: sqlite.ts inserts many rows per statement,
 *   and such a statement opens a statement journal when an immediate foreign key, or ABORT on a
 *   constraint, could need to undo it halfway. Deferred keys and `INSERT OR FAIL` leave nothing to
 *   undo but the whole transaction, which a failure rolls back anyway.
 *
 * Existing rows are copied in key order; FTS rowids are the same keys, so `message_fts` is kept.
 * A database of 1M events upgrades in ~15 s; the old tables' pages stay in the file as free pages,
 * which later writes reuse (`VACUUM`, offline, returns them to the file system).
 */
const EVENT_IDS_TABLES = `
  CREATE TABLE IF NOT EXISTS event_ids (
    conversation INTEGER NOT NULL,
    id_hash INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (conversation, id_hash)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS event_id_collisions (
    conversation INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (conversation, event_id)
  ) WITHOUT ROWID;`;

/** Version 1's 48-bit `id_hash` to version 2's: its high 32 bits, as a signed integer. */
const V1_HASH_TO_V2 = "((id_hash >> 16) - ((id_hash >> 47) << 32))";

function v2CompactEvents(db: Database.Database): void {
  const columns = (table: string) =>
    new Map((db.prepare(`SELECT name, type FROM pragma_table_info(?)`).all(table) as { name: string; type: string }[]).map((c) => [c.name, c.type]));
  db.exec(`
    CREATE TABLE IF NOT EXISTS names (
      code INTEGER PRIMARY KEY,
      name TEXT NOT NULL UNIQUE
    );
    DROP TRIGGER IF EXISTS message_texts_to_fts;
  `);
  if (columns("events").get("kind") === "TEXT") {
    db.exec(`
      INSERT OR IGNORE INTO names (name)
        SELECT kind FROM events UNION SELECT source FROM events UNION SELECT source FROM message_texts;

      CREATE TABLE events_v2 (
        key INTEGER PRIMARY KEY,
        conversation INTEGER NOT NULL REFERENCES conversations (pk) DEFERRABLE INITIALLY DEFERRED,
        seq INTEGER NOT NULL,
        ts INTEGER NOT NULL,
        event_id TEXT NOT NULL,
        kind INTEGER NOT NULL,
        source INTEGER NOT NULL,
        json TEXT NOT NULL
      );
      INSERT INTO events_v2 (key, conversation, seq, ts, event_id, kind, source, json)
        SELECT e.key, e.conversation, e.seq, e.ts, e.event_id, k.code, s.code, e.json
        FROM events AS e JOIN names AS k ON k.name = e.kind JOIN names AS s ON s.name = e.source
        ORDER BY e.key;

      ${EVENT_IDS_TABLES}
      -- The first event with a hash holds it; the later ones are collisions.
      INSERT OR IGNORE INTO event_ids (conversation, id_hash, seq)
        SELECT conversation, ${V1_HASH_TO_V2}, seq FROM events ORDER BY key;
      INSERT INTO event_id_collisions (conversation, event_id, seq)
        SELECT e.conversation, e.event_id, e.seq FROM events AS e
        WHERE NOT EXISTS (SELECT 1 FROM event_ids AS i WHERE i.conversation = e.conversation AND i.id_hash = ${V1_HASH_TO_V2.replaceAll("id_hash", "e.id_hash")} AND i.seq = e.seq);

      CREATE TABLE message_texts_v2 (
        key INTEGER PRIMARY KEY REFERENCES events (key) DEFERRABLE INITIALLY DEFERRED,
        seq INTEGER NOT NULL,
        ts INTEGER NOT NULL,
        source INTEGER NOT NULL,
        text TEXT NOT NULL
      );
      INSERT INTO message_texts_v2 (key, seq, ts, source, text)
        SELECT m.key, m.seq, m.ts, s.code, m.text FROM message_texts AS m JOIN names AS s ON s.name = m.source
        ORDER BY m.key;

      DROP TABLE message_texts;
      DROP TABLE events;
      ALTER TABLE events_v2 RENAME TO events;
      ALTER TABLE message_texts_v2 RENAME TO message_texts;
    `);
  }
  db.exec(`
    ${EVENT_IDS_TABLES}
    CREATE INDEX IF NOT EXISTS events_by_time ON events (conversation, ts, seq);
    CREATE INDEX IF NOT EXISTS events_by_kind ON events (conversation, kind, ts, seq);
    CREATE INDEX IF NOT EXISTS events_by_source ON events (conversation, source, ts, seq);
    CREATE INDEX IF NOT EXISTS events_by_kind_source ON events (conversation, kind, source, ts, seq);
  `);
}

/**
 * Version 3, event counters: `count` without a body or time range scanned the conversation's
 * index (~900 ms at 1M events). `event_counts` holds one row per (conversation, kind code, source
 * code) with its number of events, kept in the same transaction as every write that adds or
 * removes events (ingest.ts, database.ts discardStaged), so such a count adds up a few rows.
 * Existing events are counted here, in the step's transaction.
 */
const V3_EVENT_COUNTS = `
CREATE TABLE IF NOT EXISTS event_counts (
  conversation INTEGER NOT NULL REFERENCES conversations (pk) DEFERRABLE INITIALLY DEFERRED,
  kind INTEGER NOT NULL,
  source INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (conversation, kind, source)
) WITHOUT ROWID;
INSERT OR IGNORE INTO event_counts (conversation, kind, source, n)
  SELECT conversation, kind, source, count(*) FROM events GROUP BY conversation, kind, source;
`;

/**
 * Version 4, body search whose page cost does not grow with the conversation:
 *
 * - `conversations.ts_ordered` is 1 while the conversation's timestamps never decrease in append
 *   order, and `last_ts` is its newest timestamp; both are kept by every insert (ingest.ts). In
 *   such a conversation (live recordings and recorded trajectories are) search order is append
 *   order, so a body page can read FTS matches in rowid order from its cursor and stop when it is
 *   full, instead of walking every message (body-search.ts).
 * - `message_fts` becomes contentless (`contentless_delete`) and indexes each text followed by two
 *   U+0001: every character of a text then begins a trigram, so a body of one or two characters is
 *   in a text exactly when an indexed trigram begins with it, and FTS can serve it too. The texts
 *   in `message_texts` are unchanged (a match is still confirmed on them).
 */
function v4OrderedSearch(db: Database.Database): void {
  const columns = new Set((db.prepare("SELECT name FROM pragma_table_info('conversations')").all() as { name: string }[]).map((c) => c.name));
  if (!columns.has("ts_ordered")) {
    db.exec(`
      ALTER TABLE conversations ADD COLUMN ts_ordered INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE conversations ADD COLUMN last_ts INTEGER;
      UPDATE conversations SET last_ts = (SELECT max(ts) FROM events WHERE conversation = conversations.pk);
      UPDATE conversations SET ts_ordered = 0 WHERE pk IN (
        SELECT DISTINCT conversation FROM (
          SELECT conversation, ts, lag(ts) OVER (PARTITION BY conversation ORDER BY key) AS previous FROM events
        ) WHERE ts < previous
      );
    `);
  }
  const fts = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'message_fts'").get() as { sql: string } | undefined;
  if (fts?.sql.includes("contentless_delete")) return;
  db.exec(`
    DROP TABLE IF EXISTS message_fts;
    CREATE VIRTUAL TABLE message_fts USING fts5 (text, content = '', contentless_delete = 1, tokenize = 'trigram');
    INSERT INTO message_fts (rowid, text) SELECT key, text || char(1, 1) FROM message_texts ORDER BY key;
    CREATE VIRTUAL TABLE IF NOT EXISTS message_fts_terms USING fts5vocab (message_fts, 'row');
  `);
}

/**
 * Version 5, the conversation listing (EventStore.listConversations) and updates:
 *
 * - `conversations.title` and `tags` (a JSON object's text), null until an update stores them;
 * - `conversations_by_created` and `conversations_by_updated`, on (created_at, id) and
 *   (updated_at, id): a page of conversations in either order, from any conversation on, is one
 *   range of an index (the instants are ISO-8601 texts of one format, so text order is time order).
 */
function v5ConversationListing(db: Database.Database): void {
  const columns = new Set((db.prepare("SELECT name FROM pragma_table_info('conversations')").all() as { name: string }[]).map((c) => c.name));
  if (!columns.has("title")) db.exec("ALTER TABLE conversations ADD COLUMN title TEXT");
  if (!columns.has("tags")) db.exec("ALTER TABLE conversations ADD COLUMN tags TEXT");
  db.exec(`
    CREATE INDEX IF NOT EXISTS conversations_by_created ON conversations (created_at, id);
    CREATE INDEX IF NOT EXISTS conversations_by_updated ON conversations (updated_at, id);
  `);
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "initial", up: V1_INITIAL },
  { version: 2, name: "compact events", up: v2CompactEvents },
  { version: 3, name: "event counts", up: V3_EVENT_COUNTS },
  { version: 4, name: "ordered body search", up: v4OrderedSearch },
  { version: 5, name: "conversation listing", up: v5ConversationListing },
];

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
  let to = from;
  if (migrations.every((m) => m.version <= from)) return { from, to };
  // Not enforced while steps run (a rebuild drops and renames tables); checked at the end of each.
  const enforcing = db.pragma("foreign_keys", { simple: true }) === 1;
  if (enforcing) db.pragma("foreign_keys = OFF");
  try {
    for (const migration of migrations) {
      if (migration.version <= to) continue;
      db.transaction(() => {
        db.exec(CREATE_MIGRATIONS_TABLE);
        // Another process may have applied it between our read and this (exclusive) transaction.
        const current = schemaVersion(db);
        const latest = migrations[migrations.length - 1]!.version;
        if (current > latest) throw new SchemaTooNewError(current, latest);
        if (current >= migration.version) return;
        applyStep(db, migration);
        const dangling = db.pragma("foreign_key_check") as { table: string; parent: string }[];
        if (dangling.length > 0) {
          const { table, parent } = dangling[0]!;
          throw new Error(`migration ${migration.name} leaves ${dangling.length} row(s) of ${table} without their ${parent}`);
        }
        db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
          migration.version,
          migration.name,
          new Date().toISOString(),
        );
      }).immediate();
      to = migration.version;
    }
  } finally {
    if (enforcing) db.pragma("foreign_keys = ON");
  }
  return { from, to };
}

/** Runs one step's changes (no bookkeeping); re-running a step is harmless (see Migration.up). */
export function applyStep(db: Database.Database, migration: Migration): void {
  if (typeof migration.up === "string") db.exec(migration.up);
  else migration.up(db);
}
