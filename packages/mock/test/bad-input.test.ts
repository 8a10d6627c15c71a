/**
 * Bad input: every class of the reference server's tests ("bad input: 422 with the culprit's loc",
 * and the 401s) sent to the mock AND to a real reference server started next to it, with the same
 * conversation in both. The mock must answer the same status with the same `loc`s; Prism answers
 * most of them in front, the server's own validation the rest. (The rows are the server's table,
 * @acs-toolkit/test-kit/bad-input, plus the cases only a side-by-side comparison needs.)
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { badInputRows, formWithout } from "@acs-toolkit/test-kit/bad-input";
import type { Call } from "@acs-toolkit/test-kit/http";
import { SERVER_KEY, startReferenceServer, startTestMock, type Reply, type TestMock } from "./support.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/openhands-recorded");
const recording = readFileSync(path.join(fixtures, "conversation-2026-02-05.jsonl"), "utf8");
const conversationId = "5b3f1c2e-8d4a-4f6b-9c0e-1a2b3c4d5e6f";

let mock: TestMock;
let server: Awaited<ReturnType<typeof startReferenceServer>>;
beforeAll(async () => {
  [mock, server] = await Promise.all([startTestMock({ scenarios: ["happy"], publicRead: false, keys: [SERVER_KEY] }), startReferenceServer()]);
  for (const call of [mock.call, server.call]) {
    const created = await call("POST", "/api/conversations", { json: { conversation_id: conversationId, replay_json: recording, initial_user_msg: "And now?" } });
    expect(created.status, created.text).toBe(200);
  }
});
afterAll(async () => {
  await Promise.all([mock?.close(), server?.close()]);
});

type Row = [name: string, method: string, route: string, options: Parameters<Call>[2]];

const search = `/api/conversations/${conversationId}/events/search`;
const rows: Row[] = [
  // The server's own table, then what only this comparison adds.
  ...badInputRows(() => conversationId, recording).map(([name, , method, route, options]): Row => [name, method, route(), options]),
  ["body longer than 1000 characters", "GET", search, { query: { body: "x".repeat(1001) } }],
  ["a repeated conversation id (409)", "POST", "/api/conversations", { json: { conversation_id: conversationId.replace(/-/g, "") } }],
  ["secret with a wrong type", "POST", "/api/settings", { json: { llm_api_key: 1234567890123 } }],
  ["upload to an unknown conversation", "POST", "/api/conversations/00000000-0000-4000-8000-00000000beef/upload-files", { body: formWithout() }],
  ["message with role assistant", "POST", `/api/conversations/${conversationId}/events`, { json: { role: "assistant", content: [] } }],
  ["message content without text", "POST", `/api/conversations/${conversationId}/events`, { json: { role: "user", content: [{ type: "text" }] } }],
  ["search of an unknown conversation (404)", "GET", "/api/conversations/00000000-0000-4000-8000-00000000beef/events/search", {}],
  ["unknown route (404)", "GET", "/api/nothing-here", {}],
  ["missing key", "POST", "/api/conversations", { key: null, json: {} }],
  ["wrong key", "POST", "/api/conversations", { key: "wrong-key", json: {} }],
  ["empty key", "POST", "/api/settings", { key: "", json: {} }],
  ["wrong key with a bad body (401 first)", "POST", "/api/conversations", { key: "wrong-key", json: { title: 1 } }],
  ["missing key on search (without public read)", "GET", search, { key: null }],
  ["missing key on upload", "POST", `/api/conversations/${conversationId}/upload-files`, { key: null, body: formWithout() }],
];

const locs = (reply: Reply) => (reply.status === 422 ? (reply.body.detail as Array<{ loc: unknown[] }>).map((d) => JSON.stringify(d.loc)).sort() : []);

describe("the same status and loc as the reference server", () => {
  it.each(rows)("%s", async (_name, method, route, options) => {
    const [fromMock, fromServer] = [await mock.call(method, route, options), await server.call(method, route, options)];
    expect(fromMock.status, `mock: ${fromMock.text}\nserver: ${fromServer.text}`).toBe(fromServer.status);
    expect(locs(fromMock), `mock: ${fromMock.text}\nserver: ${fromServer.text}`).toEqual(locs(fromServer));
    if (fromServer.status === 401 || fromServer.status === 404 || fromServer.status === 409) expect(fromMock.body).toEqual(fromServer.body);
    expect(fromMock.text).not.toContain("1234567890123"); // secrets are never echoed
    expect(fromMock.headers.get("content-type")).not.toMatch(/problem\+json/);
  });

  it("nothing of the above changed the mock's conversation (beyond its agent's answer to the first message)", async () => {
    const page = (await mock.call("GET", search, { query: { limit: 100 } })).body.items as Array<{ id: string; kind: string; source: string }>;
    const reference = (await server.call("GET", search, { query: { limit: 100 } })).body.items as Array<{ id: string }>;
    // The replayed events, then the initial message (its id is the server's random one on each side).
    expect(page.slice(0, reference.length - 1).map((e) => e.id)).toEqual(reference.slice(0, -1).map((e) => e.id));
    expect(page[reference.length - 1]).toMatchObject({ kind: "MessageEvent", source: "user", llm_message: { content: [{ text: "And now?" }] } });
    // The scripted agent's turn (status, action, observation, reply): no user event was added.
    expect(page.slice(reference.length).map((e) => e.kind)).toEqual([
      "ConversationStateUpdateEvent", "ConversationStateUpdateEvent", "ActionEvent", "ObservationEvent", "MessageEvent", "ConversationStateUpdateEvent",
    ]);
    expect(page.slice(reference.length).every((e) => e.source !== "user")).toBe(true);
  });
});
