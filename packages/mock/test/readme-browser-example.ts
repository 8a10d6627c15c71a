import { setupWorker } from "msw/browser";
import { createBrowserMockHandlers } from "@acs-toolkit/mock/msw-browser";

// The mock's world in the page, every scenario stored at once; mockServiceWorker.js served at the site's root.
const mock = await createBrowserMockHandlers({ baseUrl: "http://localhost:4010", scenarios: ["happy"] });
await setupWorker(...mock.handlers).start({ onUnhandledRequest: "bypass" });
const id = mock.world.scenarios[0]!.conversationId;

// HTTP, answered by the handlers through MSW's Service Worker (nothing listens on port 4010).
const page = await (await fetch(`http://localhost:4010/api/conversations/${id}/events/search?limit=2`)).json();
console.log(page.items.map((e: { kind: string }) => e.kind).join(" ")); // SystemPromptEvent MessageEvent

// The live channel, through MSW's WebSocket API: the conversation's state, then every new event.
const socket = new WebSocket(`ws://localhost:4010/sockets/events/${id}`);
socket.onopen = () => {
  socket.send(JSON.stringify({ type: "auth", session_api_key: "mock-session-key" })); // lets this client send messages
  socket.send(JSON.stringify({ role: "user", content: [{ type: "text", text: "Hi" }] }));
};
socket.onmessage = (message) => {
  const event = JSON.parse(message.data);
  console.log(event.kind, event.source); // the full state, your MessageEvent, then the scripted agent's turn
};
