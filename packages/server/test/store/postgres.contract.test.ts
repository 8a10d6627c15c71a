/**
 * The EventStore contract (contract/index.ts) on the PostgreSQL store: a scratch database for the
 * file, a fresh schema for every store the suite opens.
 */
import { afterAll, beforeAll } from "vitest";
import { openPostgresStore } from "../../src/store/postgres/index.js";
import { createScratchDatabase, schemaName, type ScratchDatabase } from "../support/postgres.js";
import { describeEventStoreContract } from "./contract/index.js";

let db: ScratchDatabase;
beforeAll(async () => {
  db = await createScratchDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describeEventStoreContract("postgres", () => openPostgresStore({ url: db.url, schema: schemaName(), maxConnections: 4 }));
