import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseConfig, startServer } from "@acs-toolkit/server";

// A server on a free port with its own data directory; keys from SESSION_API_KEY.
const dataDir = mkdtempSync(path.join(tmpdir(), "acs-"));
const server = await startServer(parseConfig(["--port", "0", "--data-dir", dataDir, "--log-level", "silent"]), {
  env: { SESSION_API_KEY: "my-key" },
});
const headers = { "X-Session-API-Key": "my-key", "Content-Type": "application/json" };

// Create a conversation from a recorded trajectory (JSONL) and read its events back.
const replay = [
  '{"id":"5df490d1-98e8-4dea-9ae7-7f36c59f8ed5","timestamp":"2026-02-05T11:24:45.29","source":"user","kind":"PauseEvent"}',
].join("\n");
const created = await fetch(`${server.url}/api/conversations`, { method: "POST", headers, body: JSON.stringify({ replay_json: replay }) });
const { conversation_id } = await created.json();
const page = await fetch(`${server.url}/api/conversations/${conversation_id}/events/search?limit=10`, { headers });
console.log(await page.json()); // { items: [ { id: '5df490d1-…', kind: 'PauseEvent', … } ], next_page_id: null }

await server.close();
export { conversation_id };
