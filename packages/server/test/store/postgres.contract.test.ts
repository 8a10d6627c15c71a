/**
 * The EventStore contract (contract/index.ts) on the PostgreSQL store: a scratch database for the
 * file, a fresh schema for every store the suite opens; each variant with another scan budget of
 * the body walk (1–2 character bodies), so that pages end short on it and resume.
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

const BUDGETS = [undefined, 1, 2, 40];

describeEventStoreContract("postgres", (variant) => openPostgresStore({ url: db.url, schema: schemaName(), maxConnections: 4, bodyScanBudget: BUDGETS[variant] }), {
  variants: BUDGETS.length,
  scanBudget: true,
});
