/**
 * The driver, `pg` and `pg-copy-streams`: loaded by the first open, not by an import of the server
 * (~45 ms of every start, the mock's too).
 */
import type pg from "pg";
import type { from as CopyFrom } from "pg-copy-streams";

interface PostgresDriver {
  pg: typeof pg;
  copyFrom: typeof CopyFrom;
}
let driver: PostgresDriver | undefined;

/** Loads the driver (once). */
export async function loadPostgresDriver(): Promise<PostgresDriver> {
  if (!driver) {
    const [pgModule, copyStreams] = await Promise.all([import("pg"), import("pg-copy-streams")]);
    driver ??= { pg: pgModule.default, copyFrom: copyStreams.from };
  }
  return driver;
}

/** The driver, once a store has been opened (what a store and its live fan-out use). */
export function postgresDriver(): PostgresDriver {
  if (!driver) throw new Error("the PostgreSQL driver is loaded by openPostgresStore");
  return driver;
}
