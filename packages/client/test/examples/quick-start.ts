import { createClient } from "@acs-toolkit/client";
import { exampleEvents } from "@acs-toolkit/schema/examples";

const client = createClient({
  baseUrl: process.env.ACS_URL ?? "http://127.0.0.1:3000",
  apiKey: process.env.SESSION_API_KEY, // sent as X-Session-API-Key on every request
  validate: true, // check every received event against the spec
});

// Create a conversation from a recorded trajectory (JSONL; here the spec's example events).
const replay = exampleEvents().map((event) => JSON.stringify(event)).join("\n");
const { conversation_id } = await client.createConversation({ replay_json: replay });

// One page of events, typed from the spec: `kind` narrows each event to its own fields.
const page = await client.searchEvents(conversation_id, { kind: "ActionEvent", limit: 5 });
console.log(page.items.map((event) => (event.kind === "ActionEvent" ? event.tool_name : event.kind)));
// [ 'mcptool', 'finish', 'think', 'browser', 'browser_click' ]

// Every event of the conversation, fetched page by page as the loop asks for them.
const kinds = new Set<string>();
for await (const event of client.iterateEvents(conversation_id, { limit: 20 })) kinds.add(event.kind);
console.log(kinds.size); // 19

// The server's extensions: counts and conversation info.
console.log(await client.countEvents(conversation_id, { source: "user" })); // 3
const info = await client.getConversation(conversation_id);
console.log(info.status, info.event_count); // STOPPED 80

export { conversation_id };
