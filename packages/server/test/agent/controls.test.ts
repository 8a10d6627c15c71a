/**
 * The agent server's controls (`…/run`, `…/pause`, `…/interrupt`, `…/events/respond_to_confirmation`,
 * `…/confirmation_policy`, `…/security_analyzer`):
 * their answers for unknown, malformed and recorded conversations, and their 422s, on a server
 * with the agent runtime and on one without.
 */
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expect422, expectConforms, startTestServer, type TestServer } from "../support/harness.js";
import { startAgentServer, type AgentServer } from "./support.js";

const UNKNOWN = "7ea7bae6-2fc3-4561-8668-0da6177eb32b";
const OPERATIONS = [
  ["runConversation", "run"],
  ["pauseConversation", "pause"],
  ["interruptConversation", "interrupt"],
  ["respondToConfirmation", "events/respond_to_confirmation"],
  ["setConfirmationPolicy", "confirmation_policy"],
  ["setSecurityAnalyzer", "security_analyzer"],
] as const;

describe("with the agent runtime", () => {
  let s: AgentServer;
  beforeAll(async () => {
    s = await startAgentServer();
    await s.settings();
  });
  afterAll(() => s.close());

  it("an unknown conversation: run 404 Not Found, pause and interrupt 400 Bad Request, respond_to_confirmation 404, as the agent server", async () => {
    const run = await s.t.call("POST", `/api/conversations/${UNKNOWN}/run`);
    expectConforms("runConversation", run, 404);
    expect(run.body).toEqual({ detail: "Not Found" });
    for (const [operation, name] of [["pauseConversation", "pause"], ["interruptConversation", "interrupt"]] as const) {
      const reply = await s.t.call("POST", `/api/conversations/${UNKNOWN}/${name}`);
      expectConforms(operation, reply, 400);
      expect(reply.body).toEqual({ detail: "Bad Request" });
    }
    const respond = await s.t.call("POST", `/api/conversations/${UNKNOWN}/events/respond_to_confirmation`, { json: { accept: true } });
    expectConforms("respondToConfirmation", respond, 404);
    expect(respond.body).toEqual({ detail: `Conversation not found: ${UNKNOWN}` });
    const policy = await s.t.call("POST", `/api/conversations/${UNKNOWN}/confirmation_policy`, { json: { policy: { kind: "AlwaysConfirm" } } });
    expectConforms("setConfirmationPolicy", policy, 404);
    expect(policy.body).toEqual({ detail: "Not Found" });
    const analyzer = await s.t.call("POST", `/api/conversations/${UNKNOWN}/security_analyzer`, { json: { security_analyzer: null } });
    expectConforms("setSecurityAnalyzer", analyzer, 404);
    expect(analyzer.body).toEqual({ detail: "Not Found" });
  });

  it.each(OPERATIONS)("%s: a conversation id that is not a UUID is a 422 at [path, conversation_id]", async (operation, name) => {
    expect422(operation, await s.t.call("POST", `/api/conversations/not-a-uuid/${name}`, { json: { accept: true } }), ["path", "conversation_id"]);
  });

  it.each(OPERATIONS)("%s: no key is a 401", async (operation, name) => {
    expectConforms(operation, await s.t.call("POST", `/api/conversations/${UNKNOWN}/${name}`, { key: null, json: { accept: true } }), 401);
  });

  it.each([
    ["no body", undefined, ["body"]],
    ["no accept", { reason: "x" }, ["body", "accept"]],
    ["accept not a boolean", { accept: "yes" }, ["body", "accept"]],
    ["reason not a string", { accept: false, reason: 7 }, ["body", "reason"]],
    ["not an object", [true], ["body"]],
  ] as const)("respond_to_confirmation with %s is a 422 naming it", async (_what, json, loc) => {
    const { id } = await s.create();
    expect422("respondToConfirmation", await s.t.call("POST", `/api/conversations/${id}/events/respond_to_confirmation`, json === undefined ? {} : { json }), [...loc]);
  });

  it.each([
    ["no body", undefined, ["body"]],
    ["no policy", { kind: "AlwaysConfirm" }, ["body", "policy"]],
    ["a policy without kind", { policy: {} }, ["body", "policy", "kind"]],
    ["an unknown kind", { policy: { kind: "SometimesConfirm" } }, ["body", "policy", "kind"]],
    ["threshold UNKNOWN", { policy: { kind: "ConfirmRisky", threshold: "UNKNOWN" } }, ["body", "policy", "threshold"]],
    ["confirm_unknown not a boolean", { policy: { kind: "ConfirmRisky", confirm_unknown: "yes" } }, ["body", "policy", "confirm_unknown"]],
  ] as const)("confirmation_policy with %s is a 422 naming it", async (_what, json, loc) => {
    const { id } = await s.create();
    expect422("setConfirmationPolicy", await s.t.call("POST", `/api/conversations/${id}/confirmation_policy`, json === undefined ? {} : { json }), [...loc]);
  });

  it.each([
    ["no body", undefined, ["body"]],
    ["no security_analyzer", {}, ["body", "security_analyzer"]],
    ["an unknown kind", { security_analyzer: { kind: "GraySwanAnalyzer" } }, ["body", "security_analyzer", "kind"]],
    ["a string", { security_analyzer: "llm" }, ["body", "security_analyzer"]],
  ] as const)("security_analyzer with %s is a 422 naming it", async (_what, json, loc) => {
    const { id } = await s.create();
    expect422("setSecurityAnalyzer", await s.t.call("POST", `/api/conversations/${id}/security_analyzer`, json === undefined ? {} : { json }), [...loc]);
  });

  it("security_analyzer sets the conversation's analyzer: recorded, in its state", async () => {
    s.llm.play({ text: "Hello!" });
    const { id } = await s.create();
    const reply = await s.t.call("POST", `/api/conversations/${id}/security_analyzer`, { json: { security_analyzer: { kind: "LLMSecurityAnalyzer" } } });
    expectConforms("setSecurityAnalyzer", reply, 200);
    expect((await s.t.call("GET", `/api/conversations/${id}`)).body.security_analyzer).toEqual({ kind: "LLMSecurityAnalyzer" });
    expectConforms("setSecurityAnalyzer", await s.t.call("POST", `/api/conversations/${id}/security_analyzer`, { json: { security_analyzer: null } }), 200);
    expect((await s.t.call("GET", `/api/conversations/${id}`)).body.security_analyzer).toBeNull();
  });

  it("run, pause and interrupt ignore a body, as the agent server (whose clients send {} or nothing)", async () => {
    s.llm.play({ text: "Hello!" });
    const { id } = await s.create();
    expectConforms("pauseConversation", await s.t.call("POST", `/api/conversations/${id}/pause`, { body: "not json", headers: { "Content-Type": "application/json" } }), 200);
    expectConforms("interruptConversation", await s.t.call("POST", `/api/conversations/${id}/interrupt`, { json: { anything: 1 } }), 200);
    expectConforms("runConversation", await s.t.call("POST", `/api/conversations/${id}/run`, { headers: { "Content-Type": "application/json" } }), 200);
  });

  it("a replayed conversation is a record: created STOPPED; run, respond_to_confirmation and confirmation_policy 400, pause and interrupt change nothing", async () => {
    const replay = exampleEvents({ seed: 3 }).filter((event) => event.kind !== "ServerErrorEvent" && event.kind !== "StreamingDeltaEvent");
    const created = await s.t.call("POST", "/api/conversations", { json: { replay_json: JSON.stringify(replay) } });
    expect(created.body.conversation_status).toBe("STOPPED");
    const id = created.body.conversation_id as string;
    const run = await s.t.call("POST", `/api/conversations/${id}/run`);
    expectConforms("runConversation", run, 400);
    expect(run.body.detail).toContain("No agent runs this conversation");
    expectConforms("respondToConfirmation", await s.t.call("POST", `/api/conversations/${id}/events/respond_to_confirmation`, { json: { accept: true } }), 400);
    expectConforms("setConfirmationPolicy", await s.t.call("POST", `/api/conversations/${id}/confirmation_policy`, { json: { policy: { kind: "AlwaysConfirm" } } }), 400);
    expectConforms("setSecurityAnalyzer", await s.t.call("POST", `/api/conversations/${id}/security_analyzer`, { json: { security_analyzer: null } }), 400);
    expectConforms("pauseConversation", await s.t.call("POST", `/api/conversations/${id}/pause`), 200);
    expectConforms("interruptConversation", await s.t.call("POST", `/api/conversations/${id}/interrupt`), 200);
    const count = await s.t.call("GET", `/api/conversations/${id}/events/count`);
    expect(count.body).toBe(replay.length);
  });
});

describe("without the agent runtime (the default)", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("run, respond_to_confirmation and confirmation_policy answer 400; pause and interrupt 200 and record nothing", async () => {
    const created = await t.call("POST", "/api/conversations", { json: { initial_user_msg: "Hi" } });
    expect(created.body.conversation_status).toBe("STOPPED");
    const id = created.body.conversation_id as string;
    const run = await t.call("POST", `/api/conversations/${id}/run`);
    expectConforms("runConversation", run, 400);
    expect(run.body.detail).toContain("--runtime agent");
    expectConforms("respondToConfirmation", await t.call("POST", `/api/conversations/${id}/events/respond_to_confirmation`, { json: { accept: false } }), 400);
    expectConforms("setConfirmationPolicy", await t.call("POST", `/api/conversations/${id}/confirmation_policy`, { json: { policy: { kind: "NeverConfirm" } } }), 400);
    expectConforms("setSecurityAnalyzer", await t.call("POST", `/api/conversations/${id}/security_analyzer`, { json: { security_analyzer: null } }), 400);
    expectConforms("pauseConversation", await t.call("POST", `/api/conversations/${id}/pause`), 200);
    expectConforms("interruptConversation", await t.call("POST", `/api/conversations/${id}/interrupt`), 200);
    expect((await t.call("GET", `/api/conversations/${id}/events/count`)).body).toBe(1);
  });
});
