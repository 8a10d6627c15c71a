/**
 * The child process of sqlite.test.ts's crash test (not a test file itself): writes complete
 * conversations into the store at argv[2], then SIGKILLs itself from inside a write transaction.
 *
 * The kill comes from a getter on the last message of the doomed batch, which the store reads
 * while it writes the message texts: by then the batch's event rows, id hashes and earlier
 * message texts are written (uncommitted). Mode "replay" dies inside createConversation, mode
 * "append" inside appendEvents on a conversation that already has events.
 *
 *   node --import tsx test/store/crash-writer.ts <file> replay|append
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Event, MessageEvent } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { EventToStore } from "../../src/store/types.js";

/** Conversation ids, in the order this child writes them. */
export const CRASH_CONVERSATIONS = [
  "0b8c1f5e-7d2a-4e6b-9c3f-1a2b3c4d5e01",
  "0b8c1f5e-7d2a-4e6b-9c3f-1a2b3c4d5e02",
  "0b8c1f5e-7d2a-4e6b-9c3f-1a2b3c4d5e03",
] as const;
/** Events per batch; every conversation that exists afterwards has a whole number of batches. */
export const CRASH_BATCH = 3_000;

/** A batch of CRASH_BATCH events; message texts say "crashword <seed>". */
export function crashBatch(seed: number): EventToStore[] {
  const templates = exampleEvents({ seed });
  return Array.from({ length: CRASH_BATCH }, (_, i) => {
    let event = { ...templates[i % templates.length]!, id: `${seed}-${i}` } as Event;
    if (event.kind === "MessageEvent") {
      const m = event as MessageEvent;
      event = { ...m, llm_message: { ...m.llm_message, content: [{ type: "text", text: `Crashword ${seed} ${i}` }] } } as Event;
    }
    return { event, json: JSON.stringify(event) };
  });
}

/** `batch` with a getter on its last message that kills this process when the store reads it. */
function doomed(batch: EventToStore[]): EventToStore[] {
  const last = batch.findLastIndex((e) => e.event.kind === "MessageEvent");
  const message = batch[last]!.event as MessageEvent;
  const { llm_message, ...rest } = message;
  const killer = Object.defineProperty({ ...rest }, "llm_message", {
    enumerable: true,
    get() {
      process.stdout.write("dying\n");
      process.kill(process.pid, "SIGKILL");
      return llm_message;
    },
  }) as MessageEvent;
  return batch.map((e, i) => (i === last ? { event: killer, json: e.json } : e));
}

const [file, mode] = process.argv.slice(2);
const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1]);
if (isMain && file && (mode === "replay" || mode === "append")) {
  const store = openSqliteStore({ file });
  const [first, second, third] = CRASH_CONVERSATIONS;
  await store.createConversation({ id: first, status: "RUNNING" }, crashBatch(1));
  await store.appendEvents(first, crashBatch(2));
  await store.createConversation({ id: second, status: "RUNNING" }, crashBatch(3));
  process.stdout.write("committed\n");
  if (mode === "replay") await store.createConversation({ id: third, status: "RUNNING" }, doomed(crashBatch(4)));
  else await store.appendEvents(second, doomed(crashBatch(4)));
  process.stdout.write("survived\n"); // never: the getter kills the process first
}
