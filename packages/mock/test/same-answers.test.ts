/**
 * The browser mock and the reference server answer through the same code (`@acs-toolkit/server/api`):
 * one table of requests goes to the server over HTTP and to the browser handlers (MSW's
 * `getResponse`, no network), and the answers are compared byte for byte: status, media type and
 * body. Both start empty with the same keys and unsigned cursors, so that a cursor and every stored
 * answer are the same. Only the two instants a conversation records about itself (`created_at`,
 * `updated_at`: the moment of each process's own write) are set aside. Event batches are parsed on
 * the server's import threads and in the page's own; files go to the server's disk and to the
 * page's memory: the answers are the same all the same.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { getResponse, type HttpHandler } from "msw";
import { createApp, createCipher, createLogger, decodeRows, EventBus, openMemoryStore, parseConfig, recordingRuntime } from "@acs-toolkit/server";
import { ConversationCore, cursorCodec, UNSIGNED_CURSORS } from "@acs-toolkit/server/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { browserHttpHandlers } from "../src/browser/http.js";
import { MOCK_TITLE } from "../src/defaults.js";
import { createBrowserWorld, type BrowserWorld } from "../src/browser/world.js";

const KEY = "same-answers-key";
const BROWSER = "http://browser.test";
const A = "6c2b1f0e-1d2a-4c3b-9e4f-5a6b7c8d9e0f";
const B = "0b1c2d3e-4f50-4617-8899-aabbccddeeff";
const MISSING = "00000000-0000-4000-8000-000000000000";

const event = (n: number, kind: "MessageEvent" | "AgentErrorEvent" = "MessageEvent") =>
  kind === "MessageEvent"
    ? { id: `00000000-0000-4000-8000-00000000000${n}`, timestamp: `2026-02-05T11:2${n}:00.000000`, source: n % 2 ? "agent" : "user", kind, llm_message: { role: n % 2 ? "assistant" : "user", content: [{ type: "text", text: `message ${n} about tests` }] }, activated_skills: [], extended_content: [], sender: null, llm_response_id: null, critic_result: null }
    : { id: `00000000-0000-4000-8000-00000000000${n}`, timestamp: `2026-02-05T11:2${n}:00.000000`, source: "agent", kind, tool_name: "terminal", tool_call_id: "call_1", error: "it failed" };
const replay = [0, 1, 2, 3, 4].map((n) => JSON.stringify(n === 3 ? event(n, "AgentErrorEvent") : event(n))).join("\n");

interface Row {
  method: string;
  path: string;
  key?: boolean;
  json?: unknown;
  text?: string;
  contentType?: string;
  /** A multipart form: [field, file name, content] per part. */
  form?: Array<[string, string, string]>;
}

const ndjson = (...lines: unknown[]) => lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n");

/** The table, in order: writes first make the state the reads after them see. */
const table: Row[] = [
  { method: "GET", path: "/health" },
  { method: "GET", path: "/openapi.json" },
  { method: "GET", path: "/asyncapi.json" },
  { method: "GET", path: "/docs" },
  { method: "GET", path: "/docs/init.js" },
  { method: "GET", path: "/api/nowhere" },
  { method: "GET", path: "/api/conversations/%E0%A4%A/events/search" },
  // Creating
  { method: "POST", path: "/api/conversations", key: true, json: { conversation_id: A, replay_json: replay } },
  { method: "POST", path: "/api/conversations", key: true, json: { conversation_id: B } },
  { method: "POST", path: "/api/conversations", key: true, json: { conversation_id: A } },
  { method: "POST", path: "/api/conversations", json: { conversation_id: MISSING } },
  { method: "POST", path: "/api/conversations", key: true, json: { initial_user_msg: 42, conversation_id: "nope" } },
  { method: "POST", path: "/api/conversations", key: true, text: '{"replay_json": "x",}' },
  { method: "POST", path: "/api/conversations", key: true, json: { replay_json: '[{"kind":"MessageEvent"}]' } },
  { method: "POST", path: "/api/conversations", key: true, text: '{"a":1}', contentType: "application/json; charset=latin1" },
  // Reading
  { method: "GET", path: `/api/conversations/${A}`, key: true },
  { method: "GET", path: `/api/conversations/${A}` },
  { method: "GET", path: `/api/conversations/${MISSING}`, key: true },
  { method: "GET", path: "/api/conversations/not-a-uuid", key: true },
  { method: "GET", path: `/api/conversations/${A}/events/search` },
  { method: "GET", path: `/api/conversations/${A}/events/search?limit=2` },
  { method: "GET", path: `/api/conversations/${A}/events/search?limit=2&sort_order=TIMESTAMP_DESC&kind=MessageEvent` },
  { method: "GET", path: `/api/conversations/${A}/events/search?body=tests&source=agent` },
  { method: "GET", path: `/api/conversations/${A}/events/search?timestamp__gte=2026-02-05T11:21:00&timestamp__lt=2026-02-05T11:23` },
  { method: "GET", path: `/api/conversations/${A}/events/search?limit=0&sort_order=NEWEST` },
  { method: "GET", path: `/api/conversations/${A}/events/search?page_id=not-a-cursor` },
  { method: "GET", path: `/api/conversations/${A}/events/search?limit=1&limit=2` },
  { method: "GET", path: `/api/conversations/${MISSING}/events/search` },
  { method: "GET", path: `/api/conversations/${A}/events/count` },
  { method: "GET", path: `/api/conversations/${A}/events/count?kind=openhands.sdk.event.conversation_error.AgentErrorEvent` },
  { method: "GET", path: `/api/conversations/${A}/events/count?timestamp__gte=yesterday&source=robot` },
  { method: "GET", path: `/api/conversations/${B}/events/count` },
  { method: "GET", path: `/api/conversations?ids=${A}&ids=${MISSING}&ids=${B}`, key: true },
  { method: "GET", path: `/api/conversations?ids=${A}`, key: true },
  { method: "GET", path: "/api/conversations?ids=nope", key: true },
  { method: "GET", path: "/api/conversations", key: true },
  { method: "GET", path: `/api/conversations?ids=${A}` },
  { method: "GET", path: "/server_info" },
  { method: "GET", path: `/api/conversations/${A}/events/00000000-0000-4000-8000-000000000001`, key: true },
  { method: "GET", path: `/api/conversations/${A}/events/00000000-0000-4000-8000-0000000000ff`, key: true },
  { method: "GET", path: `/api/conversations/${A}/events/nope`, key: true },
  { method: "GET", path: `/api/conversations/${MISSING}/events/00000000-0000-4000-8000-000000000001`, key: true },
  { method: "GET", path: `/api/conversations/${A}/events/00000000-0000-4000-8000-000000000001` },
  { method: "GET", path: `/api/conversations/${A}/events?event_ids=00000000-0000-4000-8000-000000000003&event_ids=00000000-0000-4000-8000-0000000000ff&event_ids=00000000-0000-4000-8000-000000000000`, key: true },
  { method: "GET", path: `/api/conversations/${A}/events?event_ids=nope`, key: true },
  { method: "GET", path: `/api/conversations/${A}/events`, key: true },
  { method: "GET", path: `/api/conversations/${MISSING}/events?event_ids=00000000-0000-4000-8000-000000000001`, key: true },
  // The web UI's side routes
  { method: "GET", path: "/api/workspaces", key: true },
  { method: "GET", path: "/api/workspaces" },
  { method: "GET", path: "/api/file/home", key: true },
  { method: "GET", path: "/api/file/home?include_hidden=maybe", key: true },
  { method: "GET", path: "/api/llm/provider-connections", key: true },
  { method: "GET", path: "/api/canvas-extensions/installed", key: true },
  { method: "GET", path: "/api/plugins/installed", key: true },
  { method: "POST", path: "/api/skills", key: true, json: { load_public: false, load_user: true, load_project: true, load_org: false, project_dir: "workspace/project" } },
  { method: "POST", path: "/api/skills", key: true, json: { load_user: "yes" } },
  { method: "POST", path: "/api/skills", key: true },
  { method: "POST", path: "/api/auth/workspace-session", key: true },
  { method: "POST", path: "/api/auth/workspace-session" },
  // The bash routes' refusals (an answer that ran nothing carries fresh ids)
  { method: "POST", path: "/api/bash/execute_bash_command", key: true, json: { cwd: "/workspace" } },
  { method: "POST", path: "/api/bash/execute_bash_command", key: true, json: { command: "true", timeout: 0, cwd: 5 } },
  { method: "POST", path: "/api/bash/execute_bash_command", key: true, json: { command: "a\u0000b", timeout: 3601 } },
  { method: "POST", path: "/api/bash/execute_bash_command", key: true, text: "[" },
  { method: "POST", path: "/api/bash/execute_bash_command", json: { command: "true" } },
  // Sending
  { method: "POST", path: `/api/conversations/${A}/events`, key: true, json: { role: "user", content: [{ type: "text" }] } },
  { method: "POST", path: `/api/conversations/${MISSING}/events`, key: true, json: { role: "user", content: [{ type: "text", text: "hi" }] } },
  { method: "POST", path: `/api/conversations/${A}/events`, json: { role: "user", content: [] } },
  { method: "POST", path: `/api/conversations/${A}/events`, key: true, text: "[1, 2" },
  // Controls (no agent runs either conversation)
  { method: "POST", path: `/api/conversations/${A}/run`, key: true },
  { method: "POST", path: `/api/conversations/${A}/pause`, key: true },
  { method: "POST", path: `/api/conversations/${MISSING}/interrupt`, key: true },
  { method: "POST", path: `/api/conversations/${A}/confirmation_policy`, key: true, json: { policy: { kind: "Nope" } } },
  { method: "POST", path: `/api/conversations/${MISSING}/security_analyzer`, key: true, json: { security_analyzer: null } },
  { method: "POST", path: `/api/conversations/${A}/events/respond_to_confirmation`, key: true, json: { accept: "yes" } },
  // Settings
  { method: "GET", path: "/api/settings", key: true },
  { method: "POST", path: "/api/settings", key: true, json: { llm_model: "gpt-4o", llm_api_key: "sk-secret", max_iterations: 20 } },
  { method: "POST", path: "/api/settings", key: true, json: { llm_model: 42, max_iterations: "many" } },
  { method: "POST", path: "/api/add-git-providers", key: true, json: { provider_tokens: { github: { token: "ghp_x", host: "github.com" } } } },
  { method: "POST", path: "/api/add-git-providers", key: true, json: { provider_tokens: { svn: { token: "x" } } } },
  { method: "GET", path: "/api/settings", key: true },
  { method: "GET", path: "/api/settings" },
  { method: "GET", path: "/api/profiles", key: true },
  { method: "PATCH", path: "/api/settings", key: true, json: { agent_settings_diff: { llm: { model: "openai/gpt-4o-mini", api_key: "sk-patched" } }, misc_settings_diff: { app_preferences: { user_consents_to_analytics: true } } } },
  { method: "PATCH", path: "/api/settings", key: true, json: {} },
  { method: "PATCH", path: "/api/settings", key: true, json: { conversation_settings_diff: { max_iterations: null }, misc_settings_diff: 5 } },
  { method: "PATCH", path: "/api/settings", key: true, json: { agent_settings_diff: { condenser: { enabled: true } } } },
  { method: "PATCH", path: "/api/settings", key: true, json: { active_profile: "fast" } },
  { method: "GET", path: "/api/settings/agent-schema", key: true },
  { method: "GET", path: "/api/settings/conversation-schema", key: true },
  { method: "GET", path: "/api/profiles", key: true },
  { method: "GET", path: "/api/agent-profiles", key: true },
  { method: "GET", path: "/api/agent-profiles" },
  { method: "GET", path: "/api/settings/secrets", key: true },
  // The agent server's start request, beside the interface's body
  { method: "POST", path: "/api/conversations", key: true, json: { workspace: { working_dir: "/w" }, agent_settings: {}, conversation_id: A } },
  { method: "POST", path: "/api/conversations", key: true, json: { workspace: {}, agent_settings: {} } },
  { method: "POST", path: "/api/conversations", key: true, json: { workspace: { working_dir: "/w" } } },
  // Event batches
  { method: "POST", path: `/api/conversations/${B}/events/batch`, key: true, text: ndjson(event(5), event(6, "AgentErrorEvent")), contentType: "application/x-ndjson" },
  { method: "POST", path: `/api/conversations/${B}/events/batch`, key: true, text: ndjson(event(7), '{"kind":"MessageEvent"}', "", "not json"), contentType: "application/x-ndjson" },
  { method: "POST", path: `/api/conversations/${B}/events/batch`, key: true, text: ndjson(event(8), event(5)), contentType: "application/x-ndjson" },
  { method: "POST", path: `/api/conversations/${B}/events/batch`, key: true, text: ndjson(event(8), event(8)), contentType: "application/x-ndjson" },
  { method: "POST", path: `/api/conversations/${B}/events/batch`, key: true, text: "", contentType: "application/x-ndjson" },
  { method: "POST", path: `/api/conversations/${B}/events/batch`, key: true, json: event(9) },
  { method: "POST", path: `/api/conversations/${MISSING}/events/batch`, key: true, text: ndjson(event(9)), contentType: "application/x-ndjson" },
  { method: "POST", path: `/api/conversations/${B}/events/batch`, text: ndjson(event(9)), contentType: "application/x-ndjson" },
  { method: "GET", path: `/api/conversations/${B}/events/search` },
  // Files
  { method: "POST", path: `/api/conversations/${A}/upload-files`, key: true, form: [["files", "notes.txt", "hello"], ["files", "NOTES.txt", "x"], ["files", "../evil", "x"], ["files", "CON.txt", "x"], ["other", "a.txt", "x"], ["files", "data.bin", "\u0000\u00ff"]] },
  { method: "POST", path: `/api/conversations/${A}/upload-files`, key: true, form: [["files", "Notes.TXT", "again"], ["files", "more.md", "# more"]] },
  { method: "POST", path: `/api/conversations/${A}/upload-files`, key: true, form: [["other", "a.txt", "x"]] },
  { method: "POST", path: `/api/conversations/${A}/upload-files`, key: true, json: { files: [] } },
  { method: "POST", path: `/api/conversations/${MISSING}/upload-files`, key: true, form: [["files", "a.txt", "x"]] },
  { method: "POST", path: `/api/conversations/${A}/upload-files`, form: [["files", "a.txt", "x"]] },
  { method: "GET", path: `/api/conversations/${A}/files/notes.txt`, key: true },
  { method: "GET", path: `/api/conversations/${A}/files/data.bin`, key: true },
  { method: "GET", path: `/api/conversations/${A}/files/more.md`, key: true },
  { method: "GET", path: `/api/conversations/${A}/files/NOTES.txt`, key: true },
  { method: "GET", path: `/api/conversations/${A}/files/..%2Fevil`, key: true },
  { method: "GET", path: `/api/conversations/${B}/files/notes.txt`, key: true },
  { method: "GET", path: `/api/conversations/${A}/files/notes.txt` },
  // Listing, updating and deleting conversations
  { method: "GET", path: "/api/conversations/search", key: true },
  { method: "GET", path: "/api/conversations/search?limit=1&sort_order=CREATED_AT", key: true },
  { method: "GET", path: `/api/conversations/search?sort_order=CREATED_AT&page_id=${B.replaceAll("-", "")}`, key: true },
  { method: "GET", path: "/api/conversations/search?status=idle&include_skills=true", key: true },
  { method: "GET", path: "/api/conversations/search?limit=0&sort_order=bogus", key: true },
  { method: "GET", path: `/api/conversations/search?page_id=${MISSING.replaceAll("-", "")}`, key: true },
  { method: "GET", path: "/api/conversations/search" },
  { method: "GET", path: "/api/conversations/count", key: true },
  { method: "GET", path: "/api/conversations/count?status=finished", key: true },
  { method: "GET", path: "/api/conversations/count?status=busy", key: true },
  { method: "PATCH", path: `/api/conversations/${A}`, key: true, json: { title: " Same answers ", tags: { suite: "same" } } },
  { method: "PATCH", path: `/api/conversations/${A}`, key: true, json: { title: "", tags: { Suite: "x" } } },
  { method: "PATCH", path: `/api/conversations/${MISSING}`, key: true, json: { title: "x" } },
  { method: "GET", path: `/api/conversations/${A}`, key: true },
  { method: "DELETE", path: `/api/conversations/${B}`, key: true },
  { method: "DELETE", path: `/api/conversations/${B}`, key: true },
  { method: "DELETE", path: "/api/conversations/not-a-uuid", key: true },
  { method: "DELETE", path: `/api/conversations/${A}` },
  { method: "GET", path: `/api/conversations/${B}`, key: true },
  { method: "GET", path: "/api/conversations/search", key: true },
  { method: "GET", path: "/api/conversations/count", key: true },
];

interface Answer {
  status: number;
  type: string | null;
  body: string;
}

const request = (base: string, row: Row, paging: string) => {
  const headers: Record<string, string> = {};
  if (row.key) headers["X-Session-API-Key"] = KEY;
  if (row.form) {
    const form = new FormData();
    for (const [field, name, content] of row.form) form.append(field, new Blob([content]), name);
    return new Request(base + row.path + paging, { method: row.method, headers, body: form });
  }
  const body = row.text ?? (row.json === undefined ? undefined : JSON.stringify(row.json));
  if (body !== undefined) headers["Content-Type"] = row.contentType ?? "application/json";
  return new Request(base + row.path + paging, { method: row.method, headers, body });
};

const read = async (response: Response | undefined): Promise<Answer> => {
  if (!response) throw new Error("no handler answered");
  return { status: response.status, type: response.headers.get("content-type"), body: await response.text() };
};

/** The instants each process records of its own writes, its own uptime and its workspace folder, set aside. */
const withoutOwnInstants = (answer: Answer): Answer => ({
  ...answer,
  body: answer.body.replace(/"(created_at|updated_at)":"[^"]*"/g, '"$1":"…"').replace(/"(uptime|idle_time)":[\d.e+-]+/g, '"$1":0').replace(/"home":"[^"]*"/g, '"home":"…"'),
});

let server: Server;
let serverUrl: string;
let dataDir: string;
let close: () => Promise<void>;
let world: BrowserWorld;
let handlers: HttpHandler[];
const httpHandlers = () => handlers;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "acs-same-answers-"));
  const config = { ...parseConfig(["--data-dir", dataDir], {}), publicRead: true, corsOrigins: [] };
  const app = createApp({
    config,
    store: openMemoryStore({ decodeRows }),
    bus: new EventBus(),
    runtime: recordingRuntime,
    log: createLogger("silent"),
    keys: [KEY],
    cipher: createCipher(randomBytes(32)),
    cursorSecret: randomBytes(32),
    cursors: cursorCodec(UNSIGNED_CURSORS),
    version: `${packageJson.version}-mock`,
    title: MOCK_TITLE,
  });
  server = createServer(app.app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = async () => {
    await new Promise((resolve) => server.close(resolve));
    await app.close();
  };
  // The browser world with the server's recording runtime in place of the scripted agent (whose
  // turns carry their own ids and instants): what differs is then only the host.
  world = createBrowserWorld({ scenarios: [], keys: [KEY], publicRead: true });
  await world.ready;
  handlers = browserHttpHandlers({ ...world, agent: recordingRuntime as unknown as BrowserWorld["agent"], conversations: new ConversationCore(world.store, world.bus, recordingRuntime) }, BROWSER);
});
afterAll(async () => {
  world?.close();
  await close?.();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the browser mock and the reference server", () => {
  it("answer one table of requests byte for byte", async () => {
    for (const row of table) {
      const fromServer = withoutOwnInstants(await read(await fetch(request(serverUrl, row, ""))));
      const fromBrowser = withoutOwnInstants(await read(await getResponse(httpHandlers(), request(BROWSER, row, ""))));
      expect(fromBrowser, `${row.method} ${row.path}`).toEqual(fromServer);
    }
  });

  it("page with the same cursors to the end", async () => {
    const pages = async (answer: (paging: string) => Promise<Answer>) => {
      const bodies: string[] = [];
      for (let cursor: string | null = ""; cursor !== null && bodies.length < 10; ) {
        const page = await answer(cursor ? `&page_id=${encodeURIComponent(cursor)}` : "");
        bodies.push(page.body);
        cursor = (JSON.parse(page.body) as { next_page_id: string | null }).next_page_id;
      }
      return bodies;
    };
    const row: Row = { method: "GET", path: `/api/conversations/${A}/events/search?limit=2` };
    const fromServer = await pages(async (paging) => read(await fetch(request(serverUrl, row, paging))));
    const fromBrowser = await pages(async (paging) => read(await getResponse(httpHandlers(), request(BROWSER, row, paging))));
    expect(fromServer).toHaveLength(3);
    expect(fromBrowser).toEqual(fromServer);
  });
});
