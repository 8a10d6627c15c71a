/**
 * The side routes OpenHands' web UI reads when it loads, and events read by id, over HTTP on a real
 * server: each answer in the agent server's shape and conforming to the spec, bad input a 422 with
 * its loc, every route behind the key. The agent server takes the ids of a batch read in the body
 * of a GET, which fetch cannot send: those requests go through node:http.
 */
import { request as httpRequest } from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expect422, expectConforms, KEY, startTestServer, type TestServer } from "../support/harness.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  const events = [E1, E2].map((id, n) => ({ id, timestamp: `2026-02-05T11:2${n}:00.000000`, source: "user", kind: "MessageEvent", llm_message: { role: "user", content: [{ type: "text", text: `message ${n}` }] }, activated_skills: [], extended_content: [], sender: null, llm_response_id: null, critic_result: null }));
  const created = await t.call("POST", "/api/conversations", { json: { conversation_id: ID, replay_json: events.map((e) => JSON.stringify(e)).join("\n") } });
  expect(created.status, created.text).toBe(200);
});
afterAll(() => t.close());

const ID = "5d1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b";
const MISSING = "00000000-0000-4000-8000-000000000000";
const E1 = "00000000-0000-4000-8000-0000000000e1";
const E2 = "01J8Z3N5Q2W7XK4T9B6C1D0E2F";
const UNKNOWN_EVENT = "00000000-0000-4000-8000-0000000000ff";

/** A GET with a JSON body, as the agent server's clients send its batch read. */
function getWithBody(route: string, body: string, key: string | null = KEY): Promise<{ status: number; body: unknown }> {
  const url = new URL(route, t.url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) };
    if (key !== null) headers["X-Session-API-Key"] = key;
    const req = httpRequest(url, { method: "GET", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const ids = (body: unknown) => (body as Array<{ id: string } | null>).map((event) => event?.id ?? null);

describe("the UI's side routes answer in the agent server's shapes", () => {
  it.each([
    ["listWorkspaces", "GET", "/api/workspaces", undefined, { workspaces: [], workspaceParents: [] }],
    ["listProviderConnections", "GET", "/api/llm/provider-connections", undefined, []],
    ["listInstalledCanvasExtensions", "GET", "/api/canvas-extensions/installed", undefined, { canvas_extensions: [] }],
    ["listInstalledPlugins", "GET", "/api/plugins/installed", undefined, { plugins: [] }],
    [
      "loadSkills",
      "POST",
      "/api/skills",
      { load_public: false, load_user: true, load_project: true, load_org: false, project_dir: "workspace/project" },
      { skills: [], sources: { sandbox: 0, registered_marketplaces: 0, sdk_base: 0, org: 0, project: 0 } },
    ],
    ["loadSkills", "POST", "/api/skills", {}, { skills: [], sources: { sandbox: 0, registered_marketplaces: 0, sdk_base: 0, org: 0, project: 0 } }],
  ])("%s: %s %s", async (operationId, method, route, json, expected) => {
    const reply = await t.call(method, route, json === undefined ? {} : { json });
    expectConforms(operationId, reply, 200);
    expect(reply.body).toEqual(expected);
  });

  it("GET /api/file/home names the folder of the conversations' workspaces, inside the data dir, and nothing else", async () => {
    for (const query of [{}, { include_hidden: "true" }] as Array<Record<string, string>>) {
      const reply = await t.call("GET", "/api/file/home", { query });
      expectConforms("getHomeDirectory", reply, 200);
      expect(reply.body).toEqual({ home: path.resolve(t.dataDir, "uploads"), favorites: [], locations: [] });
    }
  });

  it("POST /api/auth/workspace-session is an empty 204 and sets no cookie", async () => {
    const reply = await t.call("POST", "/api/auth/workspace-session");
    expect(reply.status).toBe(204);
    expect(reply.text).toBe("");
    expect(reply.headers.get("set-cookie")).toBeNull();
    expect(reply.headers.get("content-length")).toBeNull();
  });
});

describe("events by id", () => {
  it("GET …/events/{event_id} answers the event as stored, 404 for an unknown one", async () => {
    for (const id of [E1, E2]) {
      const reply = await t.call("GET", `/api/conversations/${ID}/events/${id}`);
      expectConforms("getEvent", reply, 200);
      expect((reply.body as { id: string }).id).toBe(id);
    }
    const unknown = await t.call("GET", `/api/conversations/${ID}/events/${UNKNOWN_EVENT}`);
    expectConforms("getEvent", unknown, 404);
    expect(unknown.body).toEqual({ detail: `Event not found: ${UNKNOWN_EVENT}` });
    const noConversation = await t.call("GET", `/api/conversations/${MISSING}/events/${E1}`);
    expectConforms("getEvent", noConversation, 404);
    expect(noConversation.body).toEqual({ detail: `Conversation not found: ${MISSING}` });
  });

  it("the search and count paths still reach search and count", async () => {
    expectConforms("searchEvents", await t.call("GET", `/api/conversations/${ID}/events/search`), 200);
    expectConforms("countEvents", await t.call("GET", `/api/conversations/${ID}/events/count`), 200);
  });

  it("GET …/events answers one event or null per id, in order, from event_ids or from the body", async () => {
    const fromQuery = await t.call("GET", `/api/conversations/${ID}/events`, { query: { event_ids: [E2, UNKNOWN_EVENT, E1] } });
    expectConforms("batchGetEvents", fromQuery, 200);
    expect(ids(fromQuery.body)).toEqual([E2, null, E1]);
    const fromBody = await getWithBody(`/api/conversations/${ID}/events`, JSON.stringify([E1, UNKNOWN_EVENT, E2]));
    expect(fromBody.status).toBe(200);
    expect(ids(fromBody.body)).toEqual([E1, null, E2]);
    expect(await getWithBody(`/api/conversations/${ID}/events`, "[]")).toEqual({ status: 200, body: [] });
  });

  it.each([
    ["getEvent", "an event id that is no UUID nor ULID", `/api/conversations/${ID}/events/nope`, {}, ["path", "event_id"]],
    ["getEvent", "a conversation id that is no UUID", `/api/conversations/nope/events/${E1}`, {}, ["path", "conversation_id"]],
    ["batchGetEvents", "an event id that is no UUID nor ULID", `/api/conversations/${ID}/events`, { event_ids: [E1, "nope"] }, ["query", "event_ids", 1]],
    ["batchGetEvents", "more than 100 ids", `/api/conversations/${ID}/events`, { event_ids: Array.from({ length: 101 }, () => E1) }, ["query", "event_ids"]],
    ["batchGetEvents", "no ids", `/api/conversations/${ID}/events`, {}, ["body"]],
    ["getHomeDirectory", "include_hidden that is no boolean", "/api/file/home", { include_hidden: "maybe" }, ["query", "include_hidden"]],
  ])("%s refuses %s with a 422 naming it", async (operationId, _name, route, query, loc) => {
    expect422(operationId, await t.call("GET", route, { query: query as Record<string, string | string[]> }), loc);
  });

  it.each([
    ["ids that are not an array", '{"ids": []}', ["body"]],
    ["an id that is no UUID nor ULID", `["${E1}", 7]`, ["body", 1]],
    ["ids given twice", `["${E1}"]`, ["query", "event_ids"], `?event_ids=${E1}`],
  ])("batchGetEvents refuses a body of %s with a 422 naming it", async (_name, body, loc, query = "") => {
    const reply = await getWithBody(`/api/conversations/${ID}/events${query}`, body);
    expect(reply.status).toBe(422);
    expect((reply.body as { detail: Array<{ loc: unknown[] }> }).detail.map((d) => d.loc)).toContainEqual(loc);
  });

  it("an unknown conversation is a 404 to a batch read", async () => {
    const reply = await t.call("GET", `/api/conversations/${MISSING}/events`, { query: { event_ids: E1 } });
    expectConforms("batchGetEvents", reply, 404);
  });
});

describe("bad bodies of POST /api/skills", () => {
  it.each([
    ["a flag that is no boolean", { load_user: "yes" }, ["body", "load_user"]],
    ["an org_configs entry without its provider", { org_configs: [{ repository: "a/b" }] }, ["body", "org_configs", 0, "provider"]],
    ["a body that is no object", [true], ["body"]],
  ])("%s is a 422 naming it", async (_name, json, loc) => {
    expect422("loadSkills", await t.call("POST", "/api/skills", { json }), loc);
  });

  it("no body is a 422 at body", async () => {
    expect422("loadSkills", await t.call("POST", "/api/skills"), ["body"]);
  });

  it("an org repository URL, which may hold credentials, is never echoed", async () => {
    const reply = await t.call("POST", "/api/skills", { json: { org_configs: [{ repository: "a/b", provider: "github", org_repo_url: 12345, org_name: "a" }] } });
    expect(reply.status).toBe(422);
    expect(reply.text).not.toContain("12345");
  });
});

describe("every route asks for the key", () => {
  it.each([
    ["GET", "/api/workspaces"],
    ["GET", "/api/file/home"],
    ["GET", "/api/llm/provider-connections"],
    ["GET", "/api/canvas-extensions/installed"],
    ["POST", "/api/skills"],
    ["POST", "/api/auth/workspace-session"],
    ["GET", `/api/conversations/${ID}/events/${E1}`],
    ["GET", `/api/conversations/${ID}/events?event_ids=${E1}`],
  ])("%s %s without it is a 401", async (method, route) => {
    for (const key of [null, "wrong"]) {
      const reply = await t.call(method, route, { key, ...(method === "POST" && { json: {} }) });
      expect(reply.status, `${method} ${route} key=${key}`).toBe(401);
      expect(reply.body).toEqual({ detail: "Unauthorized" });
    }
  });

  it("a batch read with its ids in the body asks for it too", async () => {
    expect((await getWithBody(`/api/conversations/${ID}/events`, `["${E1}"]`, null)).status).toBe(401);
  });
});
