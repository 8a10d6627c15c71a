/**
 * A scratch PostgreSQL database for a test file: `acs_test_<random>`, created in beforeAll and
 * dropped (with its connections) in afterAll, on the server of ACS_TEST_PG_URL (default: the local
 * one, trust auth). Each store a test opens gets its own schema in it (`schemaName`).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

/** The admin connection URL: a database that exists, on the server the tests use. */
const PG_ADMIN_URL = process.env.ACS_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface ScratchDatabase {
  name: string;
  /** Connection URL of the scratch database. */
  url: string;
  drop(): Promise<void>;
}

/** Creates a fresh, empty database; drop() removes it, ending whatever is still connected. */
export async function createScratchDatabase(): Promise<ScratchDatabase> {
  const name = `acs_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

/** Runs one statement on a connection of its own to `url` (default: the admin database). */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[], url = PG_ADMIN_URL): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

let schemas = 0;
/** A schema name not used before in this process. */
export const schemaName = () => `s${process.pid}_${schemas++}`;
