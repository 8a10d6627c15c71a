/**
 * @packageDocumentation
 * The storage contract of the reference server (`EventStore` and its types and errors) and
 * `MemoryEventStore`, its implementation in memory: `@acs-toolkit/server/store`. Nothing here
 * imports a Node built-in or a native module, so a browser bundle (a mock in a Service Worker) can
 * use it; the SQLite store is in the package's main entry.
 *
 * ```ts
 * import { openMemoryStore } from "@acs-toolkit/server/store";
 * const store = openMemoryStore();
 * await store.createConversation({ id: crypto.randomUUID(), status: "RUNNING" }, []);
 * ```
 */
export * from "./types.js";
export { MemoryEventStore, openMemoryStore, type MemoryStoreOptions } from "./memory.js";
export { prepareEvent, type PreparedEvent } from "./prepare.js";
export { eventTimeMicros, recordedTimestamp } from "./time.js";
