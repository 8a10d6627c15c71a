/**
 * /server_info and the batch read of conversations, through the API without a transport: times on
 * a fake clock, the agent-server release from the spec (OPENHANDS_RELEASE), ids in order with null for the unknown.
 */
import { OPENHANDS_RELEASE } from "@acs-toolkit/schema";
import { openapiDocument, asyncapiDocument } from "@acs-toolkit/schema/documents";
import { describe, expect, it } from "vitest";
import { createApi, noBody, type ApiDeps, type ApiReply } from "../../src/api/index.js";
import { ConversationCore, EventBus, PLAIN_SECRETS, recordingRuntime, UNSIGNED_CURSORS, cursorCodec } from "../../src/core/index.js";
import { openMemoryStore } from "../../src/store/memory.js";
import { sharedRequestValidators } from "../../src/validation/precompiled-validators.js";

const KEY = "k";

function setUp() {
  let now = 1_000_000;
  const store = openMemoryStore();
  const conversations = new ConversationCore(store, new EventBus(), recordingRuntime);
  const deps: ApiDeps = {
    store,
    conversations,
    controls: undefined,
    validators: sharedRequestValidators(openapiDocument),
    cursors: cursorCodec(UNSIGNED_CURSORS),
    settings: { sealer: PLAIN_SECRETS, read: (text) => ({ settings: JSON.parse(text), upgraded: false }) },
    health: async () => ({ status: "ok", store: "memory" }),
    openapi: openapiDocument,
    asyncapi: asyncapiDocument,
    keyAccepted: (key) => key === KEY,
    publicRead: false,
    server: { version: "9.9.9", tools: ["terminal"] },
    clock: () => now,
  };
  const api = createApi(deps);
  const get = (path: string, query: Record<string, unknown> = {}, key = true) =>
    api.handle("GET", path, { query, headers: key ? { "x-session-api-key": KEY } : {}, body: noBody });
  return { api, conversations, get, advance: (ms: number) => (now += ms) };
}

const json = (reply: ApiReply) => JSON.parse(Buffer.concat(reply.body.map((part) => Buffer.from(part))).toString("utf8"));

describe("GET /server_info", () => {
  it("the release it says is the one constant of the spec's release (ServerInfo.version's default)", () => {
    const release = (openapiDocument as { components: { schemas: { ServerInfo: { properties: { version: { default: string } } } } } }).components.schemas.ServerInfo.properties.version.default;
    expect(OPENHANDS_RELEASE).toMatch(/^\d+\.\d+\.\d+$/);
    expect(OPENHANDS_RELEASE).toBe(release);
  });

  it("says the agent-server release of the spec, the server's own version, and its times", async () => {
    const { get, advance } = setUp();
    advance(5_000);
    await get("/api/conversations", { ids: "00000000-0000-4000-8000-000000000000" }); // activity
    advance(2_500);
    const reply = await get("/server_info", {}, false);
    expect(reply.status).toBe(200);
    expect(json(reply)).toEqual({ uptime: 7.5, idle_time: 2.5, title: "Agent Conversation Service reference server", version: OPENHANDS_RELEASE, server_version: "9.9.9", usable_tools: ["terminal"], docs: "/docs" });
    // Probes are not activity.
    advance(1_000);
    await get("/health", {}, false);
    expect(json(await get("/server_info", {}, false))).toMatchObject({ uptime: 8.5, idle_time: 3.5 });
  });
});

describe("GET /api/conversations?ids=", () => {
  it("answers each id in order, null for an unknown one", async () => {
    const { get, conversations } = setUp();
    const a = await conversations.create({ initial_user_msg: "first" });
    const b = await conversations.create({});
    const unknown = "00000000-0000-4000-8000-000000000000";
    const reply = await get("/api/conversations", { ids: [b.id, unknown, a.id.toUpperCase()] });
    expect(reply.status).toBe(200);
    const infos = json(reply) as Array<{ id: string } | null>;
    expect(infos.map((info) => info?.id ?? null)).toEqual([b.id, null, a.id]);
    expect(json(await get("/api/conversations", { ids: a.id }))).toHaveLength(1);
  });

  it.each([
    ["no ids", {}, ["query", "ids"]],
    ["an id that is no UUID", { ids: ["00000000-0000-4000-8000-000000000000", "nope"] }, ["query", "ids", 1]],
    ["more than 100 ids", { ids: Array.from({ length: 101 }, () => "00000000-0000-4000-8000-000000000000") }, ["query", "ids"]],
  ])("refuses %s with a 422 naming it", async (_name, query, loc) => {
    const reply = await setUp().get("/api/conversations", query);
    expect(reply.status).toBe(422);
    expect(json(reply).detail[0].loc).toEqual(loc);
  });

  it("asks for the key", async () => {
    expect((await setUp().get("/api/conversations", { ids: "00000000-0000-4000-8000-000000000000" }, false)).status).toBe(401);
  });
});
