import { createClient, isApiError } from "@acs-toolkit/client";
import { exampleEvents } from "@acs-toolkit/schema/examples";

const client = createClient({ baseUrl: process.env.ACS_URL ?? "http://127.0.0.1:3000", apiKey: process.env.SESSION_API_KEY });
const { conversation_id } = await client.createConversation();

// A long recording, produced lazily: any iterable or async iterable of events (or of their JSON
// lines, read from a file say). Here 25 copies of the spec's example trajectory, fresh ids each.
async function* recording() {
  for (let copy = 0; copy < 25; copy++) yield* exampleEvents({ seed: copy + 1, start: new Date(Date.UTC(2026, 0, 1 + copy)) });
}

// Streamed as JSONL, 1,000 events a request; each request is stored whole or not at all, in order.
const counts: number[] = [];
const result = await client.appendEventBatch(conversation_id, recording(), { batchSize: 1000, onBatch: (batch) => counts.push(batch.event_count) });
console.log(result); // { appended: 2000, event_count: 2000, batches: 2 }
console.log(counts); // [ 1000, 2000 ]

// A bad event refuses its whole batch: `loc` names the line (from 1) and the field.
const [first] = exampleEvents({ seed: 99 });
try {
  await client.appendEventBatch(conversation_id, [first!, { ...first!, id: crypto.randomUUID(), timestamp: "yesterday" }]);
} catch (error) {
  if (isApiError(error, "appendEventBatch") && error.is(422)) console.log(error.detail[0]?.loc); // [ 'body', 2, 'timestamp' ]
}
console.log((await client.getConversation(conversation_id)).event_count); // 2000
