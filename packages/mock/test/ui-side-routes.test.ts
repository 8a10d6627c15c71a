/**
 * The web UI's side routes and events by id on the Node mock (Prism in front of the reference
 * server's API): one request per operation, each answer checked against the spec by `call`, with
 * the front's 422 and 401 in the server's shapes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY, startTestMock, type TestMock } from "./support.js";

let t: TestMock;
let conversationId: string;
let eventIds: string[];
beforeAll(async () => {
  t = await startTestMock({ scenarios: ["happy"] });
  conversationId = t.mock.world.scenarios[0]!.conversationId;
  for (let n = 0; n < 100 && ((await t.call("GET", `/api/conversations/${conversationId}/events/count`)).body as number) < 2; n++) await new Promise((resolve) => setTimeout(resolve, 20));
  const page = await t.call("GET", `/api/conversations/${conversationId}/events/search`, { query: { limit: 2 } });
  eventIds = (page.body.items as Array<{ id: string }>).map((event) => event.id);
});
afterAll(() => t.close());

const UNKNOWN_EVENT = "00000000-0000-4000-8000-0000000000ff";

describe("one request per operation", () => {
  it("getEvent: the event, 404 for an unknown one, 422 for an id that is none", async () => {
    const reply = await t.call("GET", `/api/conversations/${conversationId}/events/${eventIds[0]}`);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.id).toBe(eventIds[0]);
    expect((await t.call("GET", `/api/conversations/${conversationId}/events/${UNKNOWN_EVENT}`)).body).toEqual({ detail: `Event not found: ${UNKNOWN_EVENT}` });
    const invalid = await t.call("GET", `/api/conversations/${conversationId}/events/nope`);
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail[0].loc).toEqual(["path", "event_id"]);
  });

  it("batchGetEvents: one event or null per id, in order; 422 naming a bad id", async () => {
    const reply = await t.call("GET", `/api/conversations/${conversationId}/events`, { query: { event_ids: [eventIds[1]!, UNKNOWN_EVENT, eventIds[0]!] } });
    expect(reply.status, reply.text).toBe(200);
    expect((reply.body as Array<{ id: string } | null>).map((event) => event?.id ?? null)).toEqual([eventIds[1], null, eventIds[0]]);
    const invalid = await t.call("GET", `/api/conversations/${conversationId}/events`, { query: { event_ids: [eventIds[0]!, "nope"] } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail[0].loc).toEqual(["query", "event_ids", 1]);
  });

  it.each([
    ["GET", "/api/workspaces", undefined, { workspaces: [], workspaceParents: [] }],
    ["GET", "/api/llm/provider-connections", undefined, []],
    ["GET", "/api/canvas-extensions/installed", undefined, { canvas_extensions: [] }],
    ["POST", "/api/skills", { load_public: false, load_user: true, load_project: true, load_org: false, project_dir: "workspace/project" }, { skills: [], sources: { sandbox: 0, registered_marketplaces: 0, sdk_base: 0, org: 0, project: 0 } }],
  ])("%s %s answers the honest empty value", async (method, route, json, expected) => {
    const reply = await t.call(method, route, json === undefined ? {} : { json });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual(expected);
  });

  it("getHomeDirectory: the mock's own workspace folder, absolute; 422 for a flag that is no boolean", async () => {
    const reply = await t.call("GET", "/api/file/home");
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ home: expect.stringMatching(/^\/.*uploads$/), favorites: [], locations: [] });
    const invalid = await t.call("GET", "/api/file/home", { query: { include_hidden: "maybe" } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail[0].loc).toEqual(["query", "include_hidden"]);
  });

  it("loadSkills: 422 naming a flag that is no boolean", async () => {
    const invalid = await t.call("POST", "/api/skills", { json: { load_user: "yes" } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail[0].loc).toEqual(["body", "load_user"]);
  });

  it("createWorkspaceSession: an empty 204, no cookie; 401 without the key", async () => {
    const reply = await t.call("POST", "/api/auth/workspace-session");
    expect(reply.status).toBe(204);
    expect(reply.headers.get("set-cookie")).toBeNull();
    expect((await t.call("POST", "/api/auth/workspace-session", { key: null })).body).toEqual({ detail: "Unauthorized" });
    expect((await t.call("POST", "/api/auth/workspace-session", { key: `${KEY}-wrong` })).status).toBe(401);
  });
});
