/**
 * Loaded into an `acs-server` child with `--import` (see spawnServer's `nodeArgs`): SIGKILLs the
 * process from inside a write transaction of a staged import, as test/store/crash-writer.ts does
 * for the store alone. It prints `inside write: …` first, so the test knows where the kill landed.
 *
 * ACS_TEST_KILL_IN_WRITE:
 * - `import`: at an insert of event rows into a conversation that has committed rows already
 *   (an earlier transaction of the import wrote them: the conversation is neither untouched nor whole);
 * - `finish`: at the statement that gives the staged conversation its real id (every event is in).
 *
 * A getter cannot be planted in events that arrive over HTTP, so this wraps better-sqlite3's
 * `Statement#run`, which the server's store shares (one module instance per process). Plain
 * JavaScript: Node loads `--import` modules into the server's worker threads too, where no
 * TypeScript loader is registered.
 */
import { writeSync } from "node:fs";
import Database from "better-sqlite3";

const mode = process.env.ACS_TEST_KILL_IN_WRITE;

/** Rows of conversation `pk` that a reader outside the transaction sees: committed ones only. */
function committedRows(/** @type {string} */ file, /** @type {number} */ pk) {
  const reader = new Database(file, { readonly: true });
  try {
    return reader.prepare("SELECT count(*) AS n FROM events WHERE conversation = ?").get(pk).n;
  } finally {
    reader.close();
  }
}

function die(/** @type {string} */ where) {
  writeSync(1, `inside write: ${where}\n`);
  process.kill(process.pid, "SIGKILL");
  throw new Error("unreachable: SIGKILL was sent");
}

// The store writes on the main thread and on the import writer thread (a staged import's rows);
// the other threads only parse and read (read-only connections: they never run these statements).
if (mode === "import" || mode === "finish") {
  const probe = new Database(":memory:");
  const statement = Object.getPrototypeOf(probe.prepare("SELECT 1"));
  probe.close();
  const run = statement.run;
  statement.run = function (...params) {
    // Not only inside a transaction: a store that writes without one must be caught too (the test
    // reads where the kill landed from the line printed).
    const where = this.database.inTransaction ? "in a transaction" : "outside any transaction";
    if (mode === "finish" && this.source.startsWith("UPDATE conversations SET id =")) die(`finishing the import, ${where}`);
    if (mode === "import" && this.source.startsWith("INSERT OR FAIL INTO events ")) {
      // The store binds one array of values; the first is the conversation's pk.
      const committed = committedRows(this.database.name, params[0][0]);
      if (committed > 0) die(`importing, ${committed} rows committed, ${where}`);
    }
    return run.apply(this, params);
  };
}
