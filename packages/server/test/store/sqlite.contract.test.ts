/**
 * The EventStore contract (contract/index.ts) on the SQLite store: real database files in a fresh
 * temporary directory, each variant with other body-search thresholds (so that every plan runs:
 * FTS sorted or in append order, the ordered walk, a walk whose scan budget ends pages short, the
 * short walk of a 1–2 character body before FTS) and every other one reading
 * searchJson pages through the sorted statement (the out-of-order fallback) and every other one
 * writing staged imports on the import writer thread; plus one in memory.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { openSqliteStore, type SqliteEventStore, type SqliteStoreOptions } from "../../src/store/sqlite/index.js";
import { describeEventStoreContract } from "./contract/index.js";

const TUNINGS: SqliteStoreOptions["bodySearch"][] = [
  undefined,
  { ftsCandidates: 0, scanBudget: 1 },
  { ftsCandidates: 2, scanBudget: 3 },
  { ftsCandidates: 10_000, scanBudget: 2 },
  { ftsCandidates: 5, scanBudget: 40, shortWalk: 3 },
  { ftsCandidates: 0, scanBudget: 2 },
  { shortWalk: 1 },
];

let dir: string;
let files = 0;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "acs-contract-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeEventStoreContract(
  "sqlite",
    // Every other variant writes staged imports on the import writer thread (the server's setting).
  (variant) => openSqliteStore({ file: path.join(dir, `store-${files++}.db`), bodySearch: TUNINGS[variant], sortedJsonPages: variant % 2 === 1, importThread: variant % 2 === 0 }),
  {
    variants: TUNINGS.length,
    scanBudget: true,
    // The fast searchJson read never came back out of order (it would be read again, sorted).
    afterEachStore: (store) => expect((store as SqliteEventStore).unsortedPages).toBe(0),
  },
);

describeEventStoreContract("sqlite in memory", () => openSqliteStore({ file: ":memory:" }));
