import { createClient } from "@acs-toolkit/client";

const client = createClient({ baseUrl: process.env.ACS_URL ?? "http://127.0.0.1:3000", apiKey: process.env.SESSION_API_KEY });
const { conversation_id } = await client.createConversation({ initial_user_msg: "Run the tests." });

// Every event once, in order: the stored ones, then live ones. After a transient close it
// reconnects (jittered exponential backoff) and resumes after the last event it delivered.
const kinds: string[] = [];
const statuses: string[] = [];
const controller = new AbortController();
const subscription = client.subscribe(conversation_id, {
  onEvent: (event) => kinds.push(`${event.kind} from ${event.source}`),
  onStatus: (status) => statuses.push(status),
  signal: controller.signal,
});
await subscription.sendMessage("Also update the changelog."); // over the same socket
while (kinds.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
controller.abort();
await subscription.done;
console.log(kinds); // [ 'MessageEvent from user', 'MessageEvent from user' ]
console.log(statuses); // [ 'open', 'closed' ]

// The same stream as an async iterator; `break` closes the socket.
let count = 0;
for await (const event of client.events(conversation_id)) {
  if (++count < 2) continue;
  console.log(event.id === subscription.lastEventId); // true
  break;
}
