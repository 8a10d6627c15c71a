import { startMock } from "@acs-toolkit/mock";

// The mock on a free port, every scenario stored at once (no streaming), deterministic ids.
const mock = await startMock({ port: 0, speed: "instant", seed: 1, scenarios: ["happy"], logLevel: "silent" });
const { conversationId } = mock.world.scenarios[0]!;

// Event search, exactly as the reference server answers it.
const page = await (await fetch(`${mock.url}/api/conversations/${conversationId}/events/search?limit=2`)).json();
console.log(page.items.map((e: { kind: string }) => e.kind)); // [ 'SystemPromptEvent', 'MessageEvent' ]

// A failure on request, in the interface's error shape.
const failed = await fetch(`${mock.url}/api/conversations/${conversationId}/events/search`, { headers: { Prefer: "code=500" } });
console.log(failed.status, await failed.json()); // 500 { detail: 'Internal Server Error' }

await mock.close();
export { conversationId };
