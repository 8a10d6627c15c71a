/**
 * A reader thread: its own read-only connection to the store's file (WAL lets it read while the
 * request thread writes, and see every committed write), answering `count` and body-filtered
 * `searchJson`, whose cost grows with the matches rather than the page (see read-pool.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { openSqliteReader, type SqliteStoreOptions } from "./index.js";
import type { SearchFilters, SearchQuery } from "../types.js";
import { serveJobs } from "../../threads/pool.js";

const options = workerData as Pick<SqliteStoreOptions, "file" | "bodySearch">;
const store = openSqliteReader({ file: options.file, bodySearch: options.bodySearch });

serveJobs(parentPort!, (message, post) => {
  const conversationId = message.conversationId as string;
  if (message.op === "count") return post({ count: store.count(conversationId, message.filters as SearchFilters) }, true);
  const page = store.searchJson(conversationId, message.query as SearchQuery);
  // Moved, not copied, when the bytes have an ArrayBuffer of their own.
  const own = page.json.byteOffset === 0 && page.json.byteLength === page.json.buffer.byteLength ? page.json : new Uint8Array(page.json);
  post({ page: { ...page, json: own } }, true, [own.buffer as ArrayBuffer]);
});
