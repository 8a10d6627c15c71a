/**
 * Operations marked `x-acs-extension` in the spec, and the append route of the live-events
 * protocol: checked when the implementation has them, skipped with the reason when it has not.
 */
import { isDeepStrictEqual } from "node:util";
import { ensure, expect422, expectConforms, type Check } from "../check.js";
import { BODY_WORD, userMessage } from "../data.js";
import { describeReply } from "../http.js";

export const extensionChecks: Check[] = [
  {
    id: "ext.conversation-info",
    title: "GET /api/conversations/{id} gives the canonical id, the event count, and the agent server's id, execution_status and stats",
    spec: "getConversation 200 (ConversationInfo)",
    needs: ["extension:getConversation"],
    async run(ctx) {
      const { id } = await ctx.main();
      const { before, result: reply, after } = await ctx.between(id, () => ctx.request("GET", `/api/conversations/${id}`));
      expectConforms(ctx, "getConversation", reply, 200);
      ensure(reply.json.conversation_id === id, `conversation_id is ${JSON.stringify(reply.json.conversation_id)}, not ${id}`);
      ensure(reply.json.id === id, `id is ${JSON.stringify(reply.json.id)}, not ${id} (the agent server's clients read it)`);
      // The conversation may grow meanwhile: the count lies between the listings around it.
      const count = reply.json.event_count;
      ensure(count >= before.length && count <= after.length, `event_count is ${count}, search lists ${before.length} events before and ${after.length} after`);
    },
  },
  {
    id: "ext.batch-get",
    title: "GET /api/conversations?ids=… answers one ConversationInfo per id, in order, null for an unknown id",
    spec: "batchGetConversations 200",
    needs: ["extension:batchGetConversations"],
    async run(ctx) {
      const { id } = await ctx.main();
      const unknown = "00000000-0000-4000-8000-00000000c0f1";
      const reply = await ctx.request("GET", "/api/conversations", { query: { ids: [unknown, id] } });
      expectConforms(ctx, "batchGetConversations", reply, 200);
      const ids = Array.isArray(reply.json) ? reply.json.map((info: { id?: unknown } | null) => info?.id ?? null) : reply.json;
      ensure(isDeepStrictEqual(ids, [null, id]), `the ids answered are ${JSON.stringify(ids)}, not [null, ${JSON.stringify(id)}]`);
      expect422(ctx, "batchGetConversations", await ctx.request("GET", "/api/conversations", { query: { ids: "not-a-uuid" } }), { loc: ["query", "ids", 0] });
    },
  },
  {
    id: "ext.server-info",
    title: "GET /server_info answers without a key, with the agent-server release it speaks as MAJOR.MINOR.PATCH",
    spec: "getServerInfo 200 (ServerInfo)",
    needs: ["extension:getServerInfo"],
    async run(ctx) {
      const reply = await ctx.request("GET", "/server_info", { key: null });
      expectConforms(ctx, "getServerInfo", reply, 200);
      ensure(/^v?\d+\.\d+\.\d+(?:[-+].*)?$/.test(String(reply.json.version)), `version ${JSON.stringify(reply.json.version)} is not a semantic version (clients compare it with the release they need)`);
    },
  },
  {
    id: "ext.count",
    title: "GET …/events/count equals the number of events the same search lists",
    spec: "countEvents 200",
    needs: ["extension:countEvents"],
    async run(ctx) {
      const { id, events } = await ctx.main();
      for (const query of [{}, { kind: "ActionEvent" }, { source: "user" }, { body: BODY_WORD }, { kind: "ObservationEvent", timestamp__gte: events[30]!.timestamp }, { kind: "HookExecutionEvent" }]) {
        // Searches on either side of the count: on a conversation that does not grow they are equal, and so must the count be.
        const before = (await ctx.searchAll(id, { ...query, limit: 100 })).length;
        const reply = await ctx.request("GET", `/api/conversations/${id}/events/count`, { query });
        expectConforms(ctx, "countEvents", reply, 200);
        const after = (await ctx.searchAll(id, { ...query, limit: 100 })).length;
        ensure(reply.json >= before && reply.json <= after, `count ${JSON.stringify(query)} is ${reply.json}, search lists ${before === after ? before : `${before} before and ${after} after`}`);
      }
    },
  },
  {
    id: "ext.health",
    title: "GET /health answers a Health body without a key",
    spec: "getHealth 200 (Health)",
    needs: ["extension:getHealth"],
    async run(ctx) {
      const reply = await ctx.request("GET", "/health", { key: null });
      expectConforms(ctx, "getHealth", reply, reply.status === 503 ? 503 : 200);
    },
  },
  {
    id: "ext.append",
    title: "POST …/events records a user Message as a MessageEvent that search lists after the events already there; run is not recorded",
    spec: "sendMessage 200 (MessageEvent); SendMessageRequest.run",
    needs: ["append"],
    async run(ctx) {
      const id = await ctx.createConversation({ initial_user_msg: "first" });
      const before = new Set((await ctx.listing(id)).map((e) => e.id));
      const message = userMessage(`appended by acs-conformance ${ctx.runTag}`);
      const reply = await ctx.request("POST", `/api/conversations/${id}/events`, { json: { ...message, run: false } });
      expectConforms(ctx, "sendMessage", reply, 200);
      ensure(reply.json.source === "user", () => `expected a user MessageEvent: ${describeReply(reply)}`);
      ensure(reply.json.llm_message?.content?.[0]?.text === message.content[0]!.text, () => `the recorded message is not the one sent: ${describeReply(reply)}`);
      ensure(reply.json.llm_message && !("run" in reply.json.llm_message), () => `the request flag run was recorded in the message: ${describeReply(reply)}`);
      const listed = await ctx.listing(id);
      const at = listed.findIndex((e) => e.id === reply.json.id);
      ensure(at >= 0, `the appended event ${reply.json.id} is not listed`);
      ensure(isDeepStrictEqual(listed[at], reply.json), () => `search lists the appended event differently: ${JSON.stringify(listed[at]).slice(0, 200)}`);
      const earlier = listed.slice(at + 1).find((e) => before.has(e.id));
      ensure(!earlier, () => `the appended event is listed before ${earlier!.id}, which was there already`);
    },
  },
  {
    id: "ext.append-invalid",
    title: "POST …/events with a Message that is not a user's is 422 at its role; an unknown conversation is 404",
    spec: "sendMessage 422, 404",
    needs: ["append"],
    async run(ctx) {
      const id = await ctx.createConversation({});
      for (const role of ["robot", "assistant"]) {
        const bad = await ctx.request("POST", `/api/conversations/${id}/events`, { json: { role, content: [] } });
        expect422(ctx, "sendMessage", bad, { loc: ["body", "role"] });
      }
      const missing = await ctx.request("POST", "/api/conversations/00000000-0000-4000-8000-00000000c0f0/events", { json: userMessage("hi") });
      expectConforms(ctx, "sendMessage", missing, 404);
      const recorded = (await ctx.listing(id)).filter((e) => e.kind === "MessageEvent" && ["robot", "assistant"].includes(e.llm_message?.role) && e.source === "user");
      ensure(recorded.length === 0, `a refused message was recorded: ${JSON.stringify(recorded[0])?.slice(0, 200)}`);
    },
  },
];
