/**
 * The conversation listing, count, update and delete on a real server (an ephemeral port): the
 * agent server's shapes, pages that follow next_page_id, the status filter, 422s with their loc,
 * 404s, route precedence over /api/conversations/{conversation_id}, and what a delete takes with it
 * (events, files, live connections, late writes).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectLive, livePath } from "@acs-toolkit/test-kit/live";
import { LIVE_CLOSE } from "../../src/live/channel.js";
import { pathTemplates, matchRoute } from "../../src/api/routes.js";
import { KEY, expect422, expectConforms, startTestServer, type TestServer } from "../support/harness.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const message = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
/** A new conversation (a recording: STOPPED, execution_status idle unless `status` is recorded). */
async function create(status?: string): Promise<string> {
  const replay = status ? [{ id: randomUUID(), timestamp: "2026-02-05T11:24:45.305360", source: "environment", key: "execution_status", value: status, kind: "ConversationStateUpdateEvent" }] : [];
  const reply = await t.call("POST", "/api/conversations", { json: { replay_json: JSON.stringify(replay), initial_user_msg: "hello" } });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.conversation_id as string;
}
const hex = (id: string) => id.replaceAll("-", "");

/** Every page of a search, following next_page_id; the ids in order. */
async function allPages(query: Record<string, string | number>): Promise<string[]> {
  const ids: string[] = [];
  let pageId: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const reply = await t.call("GET", "/api/conversations/search", { query: { ...query, ...(pageId && { page_id: pageId }) } });
    expectConforms("searchConversations", reply, 200);
    ids.push(...(reply.body.items as Array<{ id: string }>).map((info) => info.id));
    pageId = reply.body.next_page_id ?? undefined;
    if (!pageId) return ids;
    expect(pageId).toMatch(/^[0-9a-f]{32}$/);
  }
  throw new Error("the pages do not end");
}

describe("route precedence", () => {
  it("a literal segment wins over a parameter, whatever the order of the spec's paths", () => {
    const document = {
      paths: {
        "/api/conversations/{conversation_id}": { get: { operationId: "getConversation" }, delete: { operationId: "deleteConversation" } },
        "/api/conversations/search": { get: { operationId: "searchConversations" } },
        "/api/conversations/count": { get: { operationId: "countConversations" } },
      },
    };
    const templates = pathTemplates(document);
    expect(matchRoute(templates, "GET", "/api/conversations/search")?.template.operationId).toBe("searchConversations");
    expect(matchRoute(templates, "GET", "/api/conversations/count/")?.template.operationId).toBe("countConversations");
    expect(matchRoute([...templates].reverse(), "GET", "/api/conversations/search")?.template.operationId).toBe("searchConversations");
    expect(matchRoute(templates, "GET", `/api/conversations/${randomUUID()}`)?.template.operationId).toBe("getConversation");
    // No DELETE on /search: the parameter's route answers (and refuses "search" as an id).
    expect(matchRoute(templates, "DELETE", "/api/conversations/search")?.template.operationId).toBe("deleteConversation");
  });

  it("GET /api/conversations/search and /count are the listing, not a conversation named so", async () => {
    expectConforms("searchConversations", await t.call("GET", "/api/conversations/search"), 200);
    expectConforms("countConversations", await t.call("GET", "/api/conversations/count"), 200);
  });
});

describe("GET /api/conversations/search and /count", () => {
  it("pages through every conversation in each order, next_page_id the next page's first", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await create());
    // Last changes in another order: a message to the second, then to the fourth.
    for (const id of [ids[1]!, ids[3]!]) expect((await t.call("POST", `/api/conversations/${id}/events`, { json: message("again") })).status).toBe(200);
    const mine = (listed: string[]) => listed.filter((id) => ids.includes(id));
    expect(mine(await allPages({ sort_order: "CREATED_AT", limit: 2 }))).toEqual(ids);
    expect(mine(await allPages({ sort_order: "CREATED_AT_DESC", limit: 3 }))).toEqual([...ids].reverse());
    expect(mine(await allPages({ limit: 1 }))).toEqual([...ids].reverse()); // CREATED_AT_DESC by default
    expect(mine(await allPages({ sort_order: "UPDATED_AT_DESC", limit: 20 })).slice(0, 2)).toEqual([ids[3], ids[1]]);
    expect(mine(await allPages({ sort_order: "UPDATED_AT", limit: 2 })).slice(-2)).toEqual([ids[1], ids[3]]);

    const first = await t.call("GET", "/api/conversations/search", { query: { sort_order: "CREATED_AT", limit: 1, include_skills: "true" } });
    expectConforms("searchConversations", first, 200);
    expect(first.body.items[0]).toMatchObject({ conversation_id: expect.any(String), execution_status: "idle", event_count: 1 });
    // A page_id may be hyphenated too, and starts the page AT that conversation.
    const from = await t.call("GET", "/api/conversations/search", { query: { sort_order: "CREATED_AT", limit: 2, page_id: ids[2]! } });
    expect(from.body.items.map((info: { id: string }) => info.id)).toEqual([ids[2], ids[3]]);
    expect(from.body.next_page_id).toBe(hex(ids[4]!));

    const count = await t.call("GET", "/api/conversations/count");
    expectConforms("countConversations", count, 200);
    expect(count.body).toBe((await allPages({})).length);
  });

  it("filters by execution_status, filling each page from the conversations after it", async () => {
    const finished = [await create("finished"), await create(), await create("finished"), await create("paused"), await create("finished")].filter((_, i) => [0, 2, 4].includes(i));
    const listed = await allPages({ status: "finished", sort_order: "CREATED_AT", limit: 1 });
    expect(listed.filter((id) => finished.includes(id))).toEqual(finished);
    for (const id of listed) expect((await t.call("GET", `/api/conversations/${id}`)).body.execution_status).toBe("finished");
    const counted = await t.call("GET", "/api/conversations/count", { query: { status: "finished" } });
    expectConforms("countConversations", counted, 200);
    expect(counted.body).toBe(listed.length);
    expect((await t.call("GET", "/api/conversations/count", { query: { status: "deleting" } })).body).toBe(0);
  });

  it.each([
    ["limit 0", { limit: 0 }, ["query", "limit"]],
    ["limit 101", { limit: 101 }, ["query", "limit"]],
    ["limit x", { limit: "x" }, ["query", "limit"]],
    ["sort_order bogus", { sort_order: "bogus" }, ["query", "sort_order"]],
    ["status busy", { status: "busy" }, ["query", "status"]],
    ["a malformed page_id", { page_id: "not-an-id" }, ["query", "page_id"]],
    ["the page_id of no conversation", { page_id: hex(randomUUID()) }, ["query", "page_id"]],
    ["include_skills maybe", { include_skills: "maybe" }, ["query", "include_skills"]],
  ])("search refuses %s with a 422 naming it", async (_name, query, loc) => {
    expect422("searchConversations", await t.call("GET", "/api/conversations/search", { query }), loc);
  });

  it("count refuses a status that is none with a 422 naming it; both ask for the key", async () => {
    expect422("countConversations", await t.call("GET", "/api/conversations/count", { query: { status: "busy" } }), ["query", "status"]);
    expect((await t.call("GET", "/api/conversations/search", { key: null })).status).toBe(401);
    expect((await t.call("GET", "/api/conversations/count", { key: null })).status).toBe(401);
  });
});

describe("PATCH /api/conversations/{conversation_id}", () => {
  it("stores the title (trimmed) and the tags (all of them), shown by ConversationInfo and the search", async () => {
    const id = await create();
    const before = (await t.call("GET", `/api/conversations/${id}`)).body;
    expect(before).toMatchObject({ title: null, tags: {} });
    const reply = await t.call("PATCH", `/api/conversations/${id}`, { json: { title: "  Fix the build  ", tags: { team: "infra", n1: "x" } } });
    expectConforms("updateConversation", reply, 200);
    expect(reply.body).toEqual({ success: true });
    const after = (await t.call("GET", `/api/conversations/${id}`)).body;
    expect(after).toMatchObject({ title: "Fix the build", tags: { team: "infra", n1: "x" } });
    expect(after.updated_at > before.updated_at).toBe(true);
    // Absent or null: kept; tags given: replaced.
    expectConforms("updateConversation", await t.call("PATCH", `/api/conversations/${id}`, { json: { title: null, tags: { only: "one" } } }), 200);
    expect((await t.call("GET", `/api/conversations/${id}`)).body).toMatchObject({ title: "Fix the build", tags: { only: "one" } });
    const listed = await t.call("GET", "/api/conversations/search", { query: { sort_order: "UPDATED_AT_DESC", limit: 1 } });
    expect(listed.body.items[0]).toMatchObject({ id, title: "Fix the build", tags: { only: "one" } });
  });

  it.each([
    ["an empty title", { title: "" }, ["body", "title"]],
    ["a title of 201 characters", { title: "x".repeat(201) }, ["body", "title"]],
    ["a title of whitespace alone", { title: "   " }, ["body", "title"]],
    ["a title that is no string", { title: 7 }, ["body", "title"]],
    ["a tag key in upper case", { tags: { Team: "infra" } }, ["body", "tags", "Team"]],
    ["a tag value of 257 characters", { tags: { team: "x".repeat(257) } }, ["body", "tags", "team"]],
    ["tags that are no object", { tags: ["a"] }, ["body", "tags"]],
  ])("refuses %s with a 422 naming it, and stores nothing", async (_name, json, loc) => {
    const id = await create();
    expect422("updateConversation", await t.call("PATCH", `/api/conversations/${id}`, { json }), loc);
    expect((await t.call("GET", `/api/conversations/${id}`)).body).toMatchObject({ title: null, tags: {} });
  });

  it("answers 404 for an unknown conversation, 422 for an id that is none, 401 without the key", async () => {
    const unknown = randomUUID();
    const reply = await t.call("PATCH", `/api/conversations/${unknown}`, { json: { title: "x" } });
    expectConforms("updateConversation", reply, 404);
    expect(reply.body).toEqual({ detail: `Conversation not found: ${unknown}` });
    expect422("updateConversation", await t.call("PATCH", "/api/conversations/nope", { json: { title: "x" } }), ["path", "conversation_id"]);
    expect((await t.call("PATCH", `/api/conversations/${unknown}`, { json: { title: "x" }, key: null })).status).toBe(401);
  });
});

describe("DELETE /api/conversations/{conversation_id}", () => {
  it("removes the conversation, its events and files, closes its live connections (4004), refuses late writes", async () => {
    const id = await create();
    const other = await create();
    const form = new FormData();
    form.append("files", new Blob(["kept?"]), "notes.txt");
    expect((await t.call("POST", `/api/conversations/${id}/upload-files`, { body: form })).status).toBe(200);
    expect(existsSync(path.join(t.dataDir, "uploads", id, "notes.txt"))).toBe(true);
    const peer = connectLive(t.url, livePath(id), { headers: { "X-Session-API-Key": KEY } });
    await peer.waitFor(1); // full_state: the connection is open
    const countBefore = (await t.call("GET", "/api/conversations/count")).body as number;

    const reply = await t.call("DELETE", `/api/conversations/${id}`);
    expectConforms("deleteConversation", reply, 200);
    expect(reply.body).toEqual({ success: true });
    expect(await peer.closed).toEqual({ code: LIVE_CLOSE.notFound, reason: `Conversation deleted: ${id}` });

    expectConforms("getConversation", await t.call("GET", `/api/conversations/${id}`), 404);
    expect((await t.call("GET", `/api/conversations/${id}/events/search`)).status).toBe(404);
    expect((await t.call("GET", `/api/conversations/${id}/files/notes.txt`)).status).toBe(404);
    expect(existsSync(path.join(t.dataDir, "uploads", id))).toBe(false);
    expect((await t.call("GET", "/api/conversations/count")).body).toBe(countBefore - 1);
    expect(await allPages({})).not.toContain(id);
    expect((await t.call("GET", "/api/conversations", { query: { ids: [id, other] } })).body.map((info: { id: string } | null) => info?.id ?? null)).toEqual([null, other]);
    // Late writes: the answers of an unknown conversation, never a 500.
    expect((await t.call("POST", `/api/conversations/${id}/events`, { json: message("late") })).status).toBe(404);
    expect((await t.call("POST", `/api/conversations/${id}/events/batch`, { body: "", headers: { "Content-Type": "application/x-ndjson" } })).status).toBe(404);
    expect((await t.call("PATCH", `/api/conversations/${id}`, { json: { title: "x" } })).status).toBe(404);
    const again = await t.call("DELETE", `/api/conversations/${id}`);
    expectConforms("deleteConversation", again, 404);
    expect(again.body).toEqual({ detail: `Conversation not found: ${id}` });
    // The other conversation is untouched, and the id can be created again.
    expect((await t.call("GET", `/api/conversations/${other}`)).body).toMatchObject({ event_count: 1 });
    const recreated = await t.call("POST", "/api/conversations", { json: { conversation_id: id } });
    expect(recreated.status, recreated.text).toBe(200);
    expect((await t.call("GET", `/api/conversations/${id}`)).body).toMatchObject({ event_count: 0, title: null });
  });

  it("a message sent while the conversation is deleted is recorded before it or refused as unknown, never a 500", async () => {
    const id = await create();
    const sends = Array.from({ length: 20 }, (_, i) => t.call("POST", `/api/conversations/${id}/events`, { json: message(`m${i}`) }));
    const deleted = t.call("DELETE", `/api/conversations/${id}`);
    const statuses = (await Promise.all(sends)).map((reply) => reply.status);
    expect((await deleted).status).toBe(200);
    for (const status of statuses) expect([200, 404]).toContain(status);
    expect((await t.call("GET", `/api/conversations/${id}`)).status).toBe(404);
    expect((await t.call("GET", `/api/conversations/${id}/events/count`)).status).toBe(404);
  });

  it("answers 422 for an id that is none and 401 without the key", async () => {
    expect422("deleteConversation", await t.call("DELETE", "/api/conversations/nope"), ["path", "conversation_id"]);
    expect((await t.call("DELETE", `/api/conversations/${randomUUID()}`, { key: null })).status).toBe(401);
  });
});
