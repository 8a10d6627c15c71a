/**
 * Bad input: every class of the reference server's tests ("bad input: 422 with the culprit's loc",
 * and the 401s) sent to the mock AND to a real reference server started next to it, with the same
 * conversation in both. The mock must answer the same status with the same `loc`s; Prism answers
 * most of them in front, the server's own validation the rest. (The rows are the server's
 * test/http/endpoints.test.ts table, copied: that table is not exported from the server's tests.)
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY as SERVER_KEY, startTestServer, type TestServer } from "../../server/test/support/harness.js";
import { startTestMock, type Reply, type TestMock } from "./support.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/openhands-recorded");
const recording = readFileSync(path.join(fixtures, "conversation-2026-02-05.jsonl"), "utf8");
const conversationId = "5b3f1c2e-8d4a-4f6b-9c0e-1a2b3c4d5e6f";

let mock: TestMock;
let server: TestServer;
beforeAll(async () => {
  [mock, server] = await Promise.all([startTestMock({ scenarios: ["happy"], publicRead: false, keys: [SERVER_KEY] }), startTestServer()]);
  for (const call of [mock.call, server.call]) {
    const created = await call("POST", "/api/conversations", { json: { conversation_id: conversationId, replay_json: recording, initial_user_msg: "And now?" } });
    expect(created.status, created.text).toBe(200);
  }
});
afterAll(async () => {
  await Promise.all([mock?.close(), server?.close()]);
});

type Call = TestServer["call"];
type Row = [name: string, method: string, route: string, options: Parameters<Call>[2]];

const search = `/api/conversations/${conversationId}/events/search`;
const rows: Row[] = [
  ["limit 0", "GET", search, { query: { limit: 0 } }],
  ["limit 101", "GET", search, { query: { limit: 101 } }],
  ["limit abc", "GET", search, { query: { limit: "abc" } }],
  ["limit 1.5", "GET", search, { query: { limit: "1.5" } }],
  ["limit twice", "GET", search, { query: { limit: ["1", "2"] } }],
  ["sort_order ASC", "GET", search, { query: { sort_order: "ASC" } }],
  ["unknown kind", "GET", search, { query: { kind: "FooEvent" } }],
  ["unknown source", "GET", search, { query: { source: "robot" } }],
  ["timestamp__gte not a date-time", "GET", search, { query: { timestamp__gte: "yesterday" } }],
  ["timestamp__lt with month 13", "GET", search, { query: { timestamp__lt: "2026-13-01T00:00:00" } }],
  ["page_id that is no cursor", "GET", search, { query: { page_id: "974caa29-4f4b-4c30-b4e1-5169f41e6d3d" } }],
  ["body longer than 1000 characters", "GET", search, { query: { body: "x".repeat(1001) } }],
  ["non-UUID conversation id (search)", "GET", "/api/conversations/not-a-uuid/events/search", {}],
  ["non-UUID conversation id (count)", "GET", "/api/conversations/12345/events/count", {}],
  ["non-UUID conversation id (get)", "GET", "/api/conversations/xyz", {}],
  ["non-UUID conversation id (upload)", "POST", "/api/conversations/xyz/upload-files", {}],
  ["malformed JSON", "POST", "/api/conversations", { body: '{"initial_user_msg": ', headers: { "Content-Type": "application/json" } }],
  ["a JSON array body", "POST", "/api/conversations", { json: [] }],
  ["a null body", "POST", "/api/conversations", { json: null }],
  ["no body at all", "POST", "/api/conversations", {}],
  ["a text/plain body", "POST", "/api/conversations", { body: "hello", headers: { "Content-Type": "text/plain" } }],
  ["unknown field", "POST", "/api/conversations", { json: { title: "x" } }],
  ["wrong type", "POST", "/api/conversations", { json: { initial_user_msg: 42 } }],
  ["git_provider outside the enum", "POST", "/api/conversations", { json: { git_provider: "sourcehut" } }],
  ["bad conversation_id", "POST", "/api/conversations", { json: { conversation_id: "abc" } }],
  ["suggested_task without repo", "POST", "/api/conversations", { json: { suggested_task: { issue_number: 1, title: "x" } } }],
  ["replay_json that is not JSON", "POST", "/api/conversations", { json: { replay_json: "hello\nworld" } }],
  ["replay_json with a bad action kind", "POST", "/api/conversations", { json: { replay_json: replayWithBadKind() } }],
  ["replay_json with a duplicate id", "POST", "/api/conversations", { json: { replay_json: replayWithDuplicateId() } }],
  ["a repeated conversation id (409)", "POST", "/api/conversations", { json: { conversation_id: conversationId.replace(/-/g, "") } }],
  ["settings with a wrong type", "POST", "/api/settings", { json: { max_iterations: "many" } }],
  ["settings with a bad mcp server", "POST", "/api/settings", { json: { mcp_config: { stdio_servers: [{ name: "x" }] } } }],
  ["secret with a wrong type", "POST", "/api/settings", { json: { llm_api_key: 1234567890123 } }],
  ["unknown git provider", "POST", "/api/add-git-providers", { json: { provider_tokens: { sourcehut: { token: "x" } } } }],
  ["upload without files", "POST", `/api/conversations/${conversationId}/upload-files`, { body: formWithout() }],
  ["upload that is not multipart", "POST", `/api/conversations/${conversationId}/upload-files`, { json: { files: [] } }],
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

function replayWithBadKind(): string {
  const events = recording.trim().split("\n").map((line) => JSON.parse(line));
  events[3] = { ...events[2], id: "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", action: { ...events[2].action, kind: "TerminalActon" } };
  return events.map((e) => JSON.stringify(e)).join("\n");
}

function replayWithDuplicateId(): string {
  const events = recording.trim().split("\n").map((line) => JSON.parse(line));
  events[2] = { ...events[2], id: events[1].id };
  return JSON.stringify(events);
}

function formWithout(): FormData {
  const form = new FormData();
  form.append("other", new Blob(["x"]), "x.txt");
  return form;
}
