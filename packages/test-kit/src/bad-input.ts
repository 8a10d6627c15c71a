/**
 * The bad-input classes of the reference server's black-box tests: each request, the operation it
 * calls and the `loc` its 422 names. The server's tests assert those; the mock's send each row to the
 * mock and to a real server and compare.
 */
import type { CallOptions } from "./http.js";

export type BadInputRow = [
  name: string,
  operationId: string,
  method: string,
  route: () => string,
  options: CallOptions,
  loc: Array<string | number>,
];

/**
 * @param conversationId the id of a conversation holding `recording` (read when a row runs)
 * @param recording JSONL of a recorded conversation, to break in replay_json rows
 */
export function badInputRows(conversationId: () => string, recording: string): BadInputRow[] {
  const search = () => `/api/conversations/${conversationId()}/events/search`;
  return [
    ["limit 0", "searchEvents", "GET", search, { query: { limit: 0 } }, ["query", "limit"]],
    ["limit 101", "searchEvents", "GET", search, { query: { limit: 101 } }, ["query", "limit"]],
    ["limit abc", "searchEvents", "GET", search, { query: { limit: "abc" } }, ["query", "limit"]],
    ["limit 1.5", "searchEvents", "GET", search, { query: { limit: "1.5" } }, ["query", "limit"]],
    ["limit twice", "searchEvents", "GET", search, { query: { limit: ["1", "2"] } }, ["query", "limit"]],
    ["sort_order ASC", "searchEvents", "GET", search, { query: { sort_order: "ASC" } }, ["query", "sort_order"]],
    ["a kind that is no kind name", "searchEvents", "GET", search, { query: { kind: "Message Event" } }, ["query", "kind"]],
    ["a kind path ending in a dot", "searchEvents", "GET", search, { query: { kind: "openhands.sdk.event." } }, ["query", "kind"]],
    ["unknown source", "searchEvents", "GET", search, { query: { source: "robot" } }, ["query", "source"]],
    ["timestamp__gte not a date-time", "searchEvents", "GET", search, { query: { timestamp__gte: "yesterday" } }, ["query", "timestamp__gte"]],
    ["timestamp__lt with month 13", "searchEvents", "GET", search, { query: { timestamp__lt: "2026-13-01T00:00:00" } }, ["query", "timestamp__lt"]],
    ["timestamp__gte of eight bare digits (ambiguous)", "searchEvents", "GET", search, { query: { timestamp__gte: "20260205" } }, ["query", "timestamp__gte"]],
    ["timestamp__lt on February 30", "searchEvents", "GET", search, { query: { timestamp__lt: "2026-02-30" } }, ["query", "timestamp__lt"]],
    ["page_id that is neither a cursor nor an event id", "searchEvents", "GET", search, { query: { page_id: "00000000-0000-4000-8000-00000000c0fe" } }, ["query", "page_id"]],
    ["non-UUID conversation id (search)", "searchEvents", "GET", () => "/api/conversations/not-a-uuid/events/search", {}, ["path", "conversation_id"]],
    ["non-UUID conversation id (count)", "countEvents", "GET", () => "/api/conversations/12345/events/count", {}, ["path", "conversation_id"]],
    ["non-UUID conversation id (get)", "getConversation", "GET", () => "/api/conversations/xyz", {}, ["path", "conversation_id"]],
    ["non-UUID conversation id (upload)", "uploadFiles", "POST", () => "/api/conversations/xyz/upload-files", {}, ["path", "conversation_id"]],
    ["malformed JSON", "createConversation", "POST", () => "/api/conversations", { body: '{"initial_user_msg": ', headers: { "Content-Type": "application/json" } }, ["body", 21]],
    ["a JSON array body", "createConversation", "POST", () => "/api/conversations", { json: [] }, ["body"]],
    ["a null body", "createConversation", "POST", () => "/api/conversations", { json: null }, ["body"]],
    ["no body at all", "createConversation", "POST", () => "/api/conversations", {}, ["body"]],
    ["a text/plain body", "createConversation", "POST", () => "/api/conversations", { body: "hello", headers: { "Content-Type": "text/plain" } }, ["body"]],
    ["unknown field", "createConversation", "POST", () => "/api/conversations", { json: { title: "x" } }, ["body", "title"]],
    ["wrong type", "createConversation", "POST", () => "/api/conversations", { json: { initial_user_msg: 42 } }, ["body", "initial_user_msg"]],
    ["git_provider outside the enum", "createConversation", "POST", () => "/api/conversations", { json: { git_provider: "sourcehut" } }, ["body", "git_provider"]],
    ["bad conversation_id", "createConversation", "POST", () => "/api/conversations", { json: { conversation_id: "abc" } }, ["body", "conversation_id"]],
    ["suggested_task without repo", "createConversation", "POST", () => "/api/conversations", { json: { suggested_task: { issue_number: 1, title: "x" } } }, ["body", "suggested_task", "repo"]],
    ["replay_json that is not JSON", "createConversation", "POST", () => "/api/conversations", { json: { replay_json: "hello\nworld" } }, ["body", "replay_json", 0]],
    ["replay_json with a bad action kind", "createConversation", "POST", () => "/api/conversations", { json: { replay_json: replayWithBadKind(recording) } }, ["body", "replay_json", 3, "action", "kind"]],
    ["replay_json with a duplicate id", "createConversation", "POST", () => "/api/conversations", { json: { replay_json: replayWithDuplicateId(recording) } }, ["body", "replay_json", 2, "id"]],
    ["settings with a wrong type", "storeSettings", "POST", () => "/api/settings", { json: { max_iterations: "many" } }, ["body", "max_iterations"]],
    ["settings with a bad mcp server", "storeSettings", "POST", () => "/api/settings", { json: { mcp_config: { stdio_servers: [{ name: "x" }] } } }, ["body", "mcp_config", "stdio_servers", 0, "command"]],
    ["unknown git provider", "addGitProviders", "POST", () => "/api/add-git-providers", { json: { provider_tokens: { sourcehut: { token: "x" } } } }, ["body", "provider_tokens", "sourcehut"]],
    ["upload without files", "uploadFiles", "POST", () => `/api/conversations/${conversationId()}/upload-files`, { body: formWithout() }, ["body", "files"]],
    ["upload that is not multipart", "uploadFiles", "POST", () => `/api/conversations/${conversationId()}/upload-files`, { json: { files: [] } }, ["body"]],
  ];
}

/** The recording with its 4th event an action of a misspelt kind. */
export function replayWithBadKind(recording: string): string {
  const events = recording.trim().split("\n").map((line) => JSON.parse(line));
  events[3] = { ...events[2], id: "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", action: { ...events[2].action, kind: "TerminalActon" } };
  return events.map((e) => JSON.stringify(e)).join("\n");
}

/** The recording (as a JSON array) with its 3rd event reusing the 2nd one's id. */
export function replayWithDuplicateId(recording: string): string {
  const events = recording.trim().split("\n").map((line) => JSON.parse(line));
  events[2] = { ...events[2], id: events[1].id };
  return JSON.stringify(events);
}

/** A multipart form without the `files` field. */
export function formWithout(): FormData {
  const form = new FormData();
  form.append("other", new Blob(["x"]), "x.txt");
  return form;
}
