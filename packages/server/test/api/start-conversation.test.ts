/**
 * The agent server's StartConversationRequest on `POST /api/conversations`, beside the interface's
 * body, over HTTP on a real server: 201 and a ConversationInfo, 200 for an id that exists, the
 * initial message delivered (and run by the agent runtime), mistakes reported against the body that
 * was meant.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectLive, livePath } from "@acs-toolkit/test-kit/live";
import { expect422, expectConforms, KEY, startTestServer, type TestServer } from "../support/harness.js";
import { startAgentServer, waitForStatus, type AgentServer } from "../agent/support.js";

const ID = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
const start = (extra: Record<string, unknown> = {}) => ({
  workspace: { working_dir: "/workspace/project", kind: "LocalWorkspace" },
  agent_settings: { agent_kind: "openhands", llm: { model: "openai/gpt-4o" } },
  ...extra,
});

describe("StartConversationRequest on the recording runtime", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("creates the conversation: 201 and its ConversationInfo, with the initial message recorded", async () => {
    const message = { role: "user", content: [{ type: "text", text: "Fix the failing test." }], run: false };
    const reply = await t.call("POST", "/api/conversations", { json: start({ conversation_id: ID.replaceAll("-", ""), initial_message: message, tags: { team: "ui" } }) });
    expectConforms("createConversation", reply, 201);
    expect(reply.body).toMatchObject({ id: ID, conversation_id: ID, event_count: 1, tags: { team: "ui" } });
    const events = await t.call("GET", `/api/conversations/${ID}/events/search`);
    expect(events.body.items).toMatchObject([{ kind: "MessageEvent", source: "user", llm_message: { role: "user", content: [{ type: "text", text: "Fix the failing test." }] } }]);
    expect(events.body.items[0].llm_message).not.toHaveProperty("run");
  });

  it("answers the existing conversation with 200 when its id is started again, and records nothing", async () => {
    const reply = await t.call("POST", "/api/conversations", { json: start({ conversation_id: ID, initial_message: { role: "user", content: [{ type: "text", text: "again" }] } }) });
    expectConforms("createConversation", reply, 200);
    expect(reply.body).toMatchObject({ id: ID, event_count: 1 });
  });

  it("takes an agent_profile_id or an agent instead of agent_settings, and a fresh id without conversation_id", async () => {
    for (const json of [{ workspace: { working_dir: "/w" }, agent_profile_id: "1b4e28ba-2fa1-4d2b-883f-0016d3cca427" }, { workspace: { working_dir: "/w" }, agent: { kind: "Agent", llm: { model: "m" } } }]) {
      const reply = await t.call("POST", "/api/conversations", { json });
      expectConforms("createConversation", reply, 201);
      expect(reply.body.id).not.toBe(ID);
    }
  });

  it("keeps the interface's body and its answer", async () => {
    const reply = await t.call("POST", "/api/conversations", { json: { initial_user_msg: "hello" } });
    expectConforms("createConversation", reply, 200);
    expect(reply.body).toMatchObject({ status: "ok", message: null });
  });

  it.each<[string, Record<string, unknown>, Array<string | number>]>([
    ["no workspace", { agent_settings: {} }, ["body", "workspace"]],
    ["a workspace without working_dir", { workspace: {}, agent_settings: {} }, ["body", "workspace", "working_dir"]],
    ["no agent, agent_settings nor agent_profile_id", { workspace: { working_dir: "/w" } }, ["body", "agent"]],
    ["a conversation_id that is no UUID", start({ conversation_id: "nope" }), ["body", "conversation_id"]],
    ["an initial message of another role", start({ initial_message: { role: "agent", content: [] } }), ["body", "initial_message", "role"]],
    ["max_iterations 0", start({ max_iterations: 0 }), ["body", "max_iterations"]],
    ["a tag key in upper case", start({ tags: { Team: "x" } }), ["body", "tags", "Team"]],
  ])("a start request with %s is a 422 naming it", async (_name, json, loc) => {
    expect422("createConversation", await t.call("POST", "/api/conversations", { json }), loc);
  });

  it("reports a mistake in the interface's body against the interface's fields, not the start request's", async () => {
    const reply = await t.call("POST", "/api/conversations", { json: { initial_user_msg: 5 } });
    expect422("createConversation", reply, ["body", "initial_user_msg"]);
    expect(JSON.stringify(reply.body)).not.toContain("workspace");
  });
});

describe("StartConversationRequest on the agent runtime", () => {
  let s: AgentServer;
  beforeAll(async () => {
    s = await startAgentServer();
    await s.settings();
  });
  afterAll(() => s.close());

  it("runs the agent on an initial message with run: true", async () => {
    s.llm.play({ text: "Hello from the start request!" });
    const reply = await s.t.call("POST", "/api/conversations", { json: start({ initial_message: { role: "user", content: [{ type: "text", text: "Say hello." }], run: true } }) });
    expectConforms("createConversation", reply, 201);
    const id = reply.body.id as string;
    const peer = connectLive(s.t.url, livePath(id, { resend_all: "true" }), { headers: { "X-Session-API-Key": KEY } });
    s.peers.push(peer);
    await waitForStatus(peer, "finished");
    const said = peer.events().filter((event: { kind: string; source: string }) => event.kind === "MessageEvent" && event.source === "agent");
    expect(JSON.stringify(said)).toContain("Hello from the start request!");
  });

  it("runs the conversation with its own max_iterations and stuck_detection, and its ConversationInfo says so", async () => {
    // Without stuck detection the same thought four times is no loop; the conversation's limit of 5 steps ends the run.
    s.llm.play(...Array.from({ length: 8 }, () => ({ toolCalls: [{ name: "think", arguments: { thought: "again" } }] })));
    const message = { role: "user", content: [{ type: "text", text: "Think." }], run: true };
    const reply = await s.t.call("POST", "/api/conversations", { json: start({ initial_message: message, max_iterations: 5, stuck_detection: false }) });
    expectConforms("createConversation", reply, 201);
    expect(reply.body).toMatchObject({ max_iterations: 5, stuck_detection: false });
    const id = reply.body.id as string;
    const peer = connectLive(s.t.url, livePath(id, { resend_all: "true" }), { headers: { "X-Session-API-Key": KEY } });
    s.peers.push(peer);
    await waitForStatus(peer, "error");
    const errors = peer.events().filter((event: { kind: string }) => event.kind === "ConversationErrorEvent");
    expect(errors).toMatchObject([{ code: "MaxIterationsReached" }]);
    const info = await s.t.call("GET", `/api/conversations/${id}`);
    expect(info.body).toMatchObject({ max_iterations: 5, stuck_detection: false, execution_status: "error" });
    // HEAD of the conversation tree: the last event that is not a state update.
    const events = (await s.t.call("GET", `/api/conversations/${id}/events/search`, { query: { limit: 100 } })).body.items as Array<{ id: string; kind: string }>;
    expect(info.body.leaf_event_id).toBe(events.filter((event) => event.kind !== "ConversationStateUpdateEvent").at(-1)!.id);
  });

  it("records nothing of its own for a request at the defaults (what OpenHands' web UI sends)", async () => {
    const reply = await s.t.call("POST", "/api/conversations", { json: start({ max_iterations: 500, stuck_detection: true }) });
    expectConforms("createConversation", reply, 201);
    expect(reply.body).toMatchObject({ event_count: 0, max_iterations: 500, stuck_detection: true, leaf_event_id: null });
  });
});
