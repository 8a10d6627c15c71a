/** The conversation import thread's entry (workers/import-worker.ts): large replays and event batches are parsed there. */
import type { WorkerEntry } from "../threads/pool.js";

export const IMPORT_WORKER: WorkerEntry = { name: "import-worker", source: new URL("./import-worker.ts", import.meta.url) };
