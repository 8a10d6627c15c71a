/**
 * The import writer: the rows of staged imports (a large `POST /api/conversations`), written on
 * a connection of their own, off the request thread. At 1M stored events a commit of a few
 * hundred rows usually takes 3–5 ms but now and then 30–80 ms (its WAL writes wait on the disk
 * behind the checkpointer's), which on the request thread was a stall of every other request
 * (past the 50 ms event-loop budget). SqliteStore (store/sqlite/store.ts) holds its own writes while
 * one of these runs, so neither connection ever waits in SQLite's busy handler for the other.
 */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import type { RowsInTransaction } from "./database.js";
import { openSqliteImportWriter } from "./open.js";
import type { PreparedEvent, RowBatch } from "../prepare.js";
import { decodeRows } from "../row-batch.js";
import { ConversationNotFoundError, DuplicateEventIdError } from "../types.js";
import { serveJobs } from "../../threads/pool.js";

const { file } = workerData as { file: string };
const database = openSqliteImportWriter({ file });

type Post = (message: Record<string, unknown>, last: boolean) => void;

/**
 * An event batch whose rows come on `port` as the import thread parses them (SqliteStore.streamBatch):
 * one transaction, begun now (the request's body has arrived whole), each chunk written as it
 * comes, committed at `{ end: count }`, rolled back at `{ abort }`, on a failure, or when the
 * request thread closes the port. What is answered: as for "append", or `{ aborted: true }`.
 */
function appendStream(conversationId: string, port: MessagePort, post: Post): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let rows: RowsInTransaction | undefined;
    let settled = false;
    const settle = (answer: Record<string, unknown> | Error) => {
      if (settled) return;
      settled = true;
      rows?.rollback(); // a no-op after the commit
      port.close();
      if (answer instanceof Error) return reject(answer);
      post(answer, true);
      resolve();
    };
    try {
      rows = database.openRows(conversationId);
    } catch (error) {
      return settle(error instanceof ConversationNotFoundError ? { notFound: true } : (error as Error));
    }
    let added = 0;
    port.on("message", (message: Uint8Array | { end: number } | { abort: true }) => {
      if (settled) return;
      try {
        if (message instanceof Uint8Array) {
          const chunk = decodeRows({ count: 0, chunks: [message] });
          rows!.add(chunk);
          added += chunk.length;
        } else if ("end" in message) {
          if (message.end !== added) throw new Error(`an event batch of ${message.end} rows ended after ${added}`);
          settle(rows!.commit());
        } else settle({ aborted: true });
      } catch (error) {
        if (error instanceof DuplicateEventIdError) settle({ duplicate: { eventId: error.eventId, index: error.index } });
        else settle(error as Error);
      }
    });
    port.on("close", () => settle({ aborted: true }));
  });
}

function handle(message: Record<string, unknown>, post: Post): void | Promise<void> {
  if (message.op === "appendStream") return appendStream(message.conversationId as string, message.rows as MessagePort, post);
  if (message.op === "append") {
    // An event batch: every row in one transaction (SqliteDatabase.appendRows).
    try {
      return post(database.appendRows(message.conversationId as string, decodeRows(message.batch as RowBatch)), true);
    } catch (error) {
      if (error instanceof ConversationNotFoundError) return post({ notFound: true }, true);
      if (!(error instanceof DuplicateEventIdError)) throw error;
      return post({ duplicate: { eventId: error.eventId, index: error.index } }, true);
    }
  }
  const pk = message.pk as number;
  if (message.op === "discard") return post({ gone: database.discardStagedRows(pk, message.maxRows as number) }, true);
  try {
    post({ bytes: database.insertStagedRows(pk, message.firstSeq as number, message.rows as PreparedEvent[]) }, true);
  } catch (error) {
    if (!(error instanceof DuplicateEventIdError)) throw error;
    post({ duplicate: { eventId: error.eventId, index: error.index } }, true);
  }
}

// At the other workers' lower priority (pool.ts, yieldToRequestThread), though the thread holds
// the store's write lock while it writes: at the request thread's priority it took that thread's
// CPU under load (1M-event bench: the request thread's longest run between ticks 30 → 100–170 ms,
// nice 5: 77 ms). The writes waiting for it wait asynchronously, never on the request thread.
serveJobs(parentPort!, handle);
