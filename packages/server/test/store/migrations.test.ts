/** Versioned schema migrations on real database files. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  SchemaTooNewError,
  migrate,
  schemaVersion,
  type Migration,
} from "../../src/store/migrations.js";
import { openSqliteStore } from "../../src/store/sqlite.js";

let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "acs-migrations-"));
  file = path.join(dir, "events.db");
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function applied(db: Database.Database) {
  return db.prepare("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").all() as {
    version: number;
    name: string;
    applied_at: string;
  }[];
}

const tables = (db: Database.Database) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index', 'trigger') ORDER BY name").all() as { name: string }[]).map(
    (r) => r.name,
  );

describe("migrations", () => {
  it("numbers the migrations 1, 2, 3, ... and knows the latest", () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(LATEST_SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  it("brings a fresh database to the latest version", () => {
    openSqliteStore({ file }).close();
    const db = new Database(file, { readonly: true });
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    expect(applied(db).map((m) => [m.version, m.name])).toEqual(MIGRATIONS.map((m) => [m.version, m.name]));
    expect(tables(db)).toEqual(
      expect.arrayContaining([
        "conversations",
        "documents",
        "events",
        "events_by_event_id",
        "events_by_kind",
        "events_by_kind_source",
        "events_by_source",
        "events_by_time",
        "message_fts",
        "message_texts",
        "message_texts_to_fts",
        "schema_migrations",
      ]),
    );
    db.close();
  });

  it("reopening a current database changes nothing", () => {
    openSqliteStore({ file }).close();
    const db1 = new Database(file);
    const before = { applied: applied(db1), schema: tables(db1) };
    expect(migrate(db1)).toEqual({ from: LATEST_SCHEMA_VERSION, to: LATEST_SCHEMA_VERSION });
    db1.close();
    openSqliteStore({ file }).close();
    const db2 = new Database(file, { readonly: true });
    expect({ applied: applied(db2), schema: tables(db2) }).toEqual(before);
    db2.close();
  });

  it("refuses a database written by a newer schema, before writing anything", () => {
    openSqliteStore({ file }).close();
    const db = new Database(file);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', '2099-01-01T00:00:00Z')").run(
      LATEST_SCHEMA_VERSION + 1,
    );
    db.pragma("journal_mode = DELETE");
    db.close();
    const bytes = readFileSync(file);

    expect(() => openSqliteStore({ file })).toThrow(SchemaTooNewError);
    expect(() => openSqliteStore({ file })).toThrow(
      new RegExp(`schema version ${LATEST_SCHEMA_VERSION + 1} is newer than this server supports \\(${LATEST_SCHEMA_VERSION}\\)`),
    );
    expect(readFileSync(file).equals(bytes)).toBe(true);

    const again = new Database(file);
    expect(() => migrate(again)).toThrow(SchemaTooNewError);
    expect(schemaVersion(again)).toBe(LATEST_SCHEMA_VERSION + 1);
    again.close();
  });

  it("applies pending steps in order, each in its own transaction, and only once", () => {
    const db = new Database(file);
    const steps: Migration[] = [
      { version: 1, name: "a", sql: "CREATE TABLE IF NOT EXISTS a (x INTEGER)" },
      { version: 2, name: "b", sql: "CREATE TABLE IF NOT EXISTS b (y INTEGER); INSERT INTO a VALUES (2)" },
    ];
    expect(migrate(db, steps.slice(0, 1))).toEqual({ from: 0, to: 1 });
    expect(migrate(db, steps)).toEqual({ from: 1, to: 2 });
    expect(migrate(db, steps)).toEqual({ from: 2, to: 2 });
    expect(db.prepare("SELECT count(*) AS n FROM a").get()).toEqual({ n: 1 });
    expect(applied(db).map((m) => m.name)).toEqual(["a", "b"]);

    // A failing step rolls back entirely and is not recorded; the steps before it stay applied.
    const failing: Migration[] = [
      ...steps,
      { version: 3, name: "c", sql: "CREATE TABLE c (z INTEGER); INSERT INTO nowhere VALUES (1)" },
    ];
    expect(() => migrate(db, failing)).toThrow(/nowhere/);
    expect(schemaVersion(db)).toBe(2);
    expect(tables(db)).not.toContain("c");
    db.close();
  });

  it("re-applying the SQL of a step is harmless (idempotent steps)", () => {
    const db = new Database(file);
    migrate(db);
    for (const m of MIGRATIONS) db.exec(m.sql);
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    db.close();
  });

  it("rejects a migration list with gaps", () => {
    const db = new Database(":memory:");
    expect(() => migrate(db, [{ version: 2, name: "x", sql: "" }])).toThrow(/expected 1/);
    db.close();
  });
});
