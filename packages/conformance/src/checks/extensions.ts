/**
 * Operations marked `x-acs-extension` in the spec, and the append route of the live-events
 * protocol: checked when the implementation has them, skipped with the reason when it has not.
 */
import { randomUUID } from "node:crypto";
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
    id: "ext.start-request",
    title: "POST /api/conversations takes the agent server's StartConversationRequest: 201 and a ConversationInfo, 200 for an id that exists; a mistake is a 422 at its place",
    spec: "createConversation 201/200 (ConversationInfo), 422",
    needs: ["extension:startConversationRequest"],
    async run(ctx) {
      const id = randomUUID();
      const start = { workspace: { working_dir: "/workspace/project" }, agent_settings: { agent_kind: "openhands" }, conversation_id: id };
      const created = await ctx.request("POST", "/api/conversations", { json: start });
      expectConforms(ctx, "createConversation", created, 201);
      ensure(created.json?.id === id, `the ConversationInfo's id is ${JSON.stringify(created.json?.id)}, not the requested ${id}`);
      const again = await ctx.request("POST", "/api/conversations", { json: start });
      expectConforms(ctx, "createConversation", again, 200);
      ensure(again.json?.id === id, `starting ${id} again answered the conversation ${JSON.stringify(again.json?.id)}`);
      expect422(ctx, "createConversation", await ctx.request("POST", "/api/conversations", { json: { ...start, conversation_id: undefined, workspace: {} } }), { loc: ["body", "workspace", "working_dir"] });
    },
  },
  {
    id: "ext.search-conversations",
    title: "GET /api/conversations/search lists conversations newest first by default, a page starting AT its page_id; bad limit, sort_order or page_id are 422s",
    spec: "searchConversations 200 (ConversationPage), 422",
    needs: ["extension:searchConversations"],
    async run(ctx) {
      const older = await ctx.createConversation({});
      const newer = await ctx.createConversation({});
      const hex = (id: string) => id.replaceAll("-", "");
      const reply = await ctx.request("GET", "/api/conversations/search", { query: { limit: 100 } });
      expectConforms(ctx, "searchConversations", reply, 200);
      const ids = (reply.json.items as Array<{ id?: unknown }>).map((info) => info.id);
      ensure(ids.indexOf(newer) !== -1 && ids.indexOf(newer) < ids.indexOf(older), `the first page (CREATED_AT_DESC) lists ${JSON.stringify(ids.slice(0, 5))}…, not ${newer} before ${older}`);
      const from = await ctx.request("GET", "/api/conversations/search", { query: { limit: 1, sort_order: "CREATED_AT", page_id: hex(older) } });
      expectConforms(ctx, "searchConversations", from, 200);
      ensure(from.json.items[0]?.id === older, `a page from page_id ${hex(older)} starts with ${JSON.stringify(from.json.items[0]?.id)}, not that conversation`);
      ensure(typeof from.json.next_page_id === "string", `next_page_id after ${older} (CREATED_AT, limit 1) is ${JSON.stringify(from.json.next_page_id)}: ${newer} comes after it`);
      for (const [query, loc] of [
        [{ limit: 0 }, ["query", "limit"]],
        [{ limit: 101 }, ["query", "limit"]],
        [{ sort_order: "bogus" }, ["query", "sort_order"]],
        [{ page_id: "not-an-id" }, ["query", "page_id"]],
      ] as const) {
        expect422(ctx, "searchConversations", await ctx.request("GET", "/api/conversations/search", { query }), { loc });
      }
    },
  },
  {
    id: "ext.count-conversations",
    title: "GET /api/conversations/count answers a bare integer; a status that is no execution status is a 422",
    spec: "countConversations 200, 422",
    needs: ["extension:countConversations"],
    async run(ctx) {
      await ctx.createConversation({});
      const reply = await ctx.request("GET", "/api/conversations/count");
      expectConforms(ctx, "countConversations", reply, 200);
      ensure(Number.isInteger(reply.json) && reply.json >= 1, `the count is ${JSON.stringify(reply.json)} after a conversation was created`);
      expectConforms(ctx, "countConversations", await ctx.request("GET", "/api/conversations/count", { query: { status: "idle" } }), 200);
      expect422(ctx, "countConversations", await ctx.request("GET", "/api/conversations/count", { query: { status: "busy" } }), { loc: ["query", "status"] });
    },
  },
  {
    id: "ext.update-conversation",
    title: "PATCH /api/conversations/{id} stores the title and tags that ConversationInfo then shows; a bad title or tag key is a 422 at its loc, an unknown id a 404",
    spec: "updateConversation 200 (Success), 404, 422",
    needs: ["extension:updateConversation", "extension:getConversation"],
    async run(ctx) {
      const id = await ctx.createConversation({});
      const reply = await ctx.request("PATCH", `/api/conversations/${id}`, { json: { title: "Conformance title", tags: { suite: "conformance" } } });
      expectConforms(ctx, "updateConversation", reply, 200);
      const info = await ctx.request("GET", `/api/conversations/${id}`);
      expectConforms(ctx, "getConversation", info, 200);
      ensure(info.json.title === "Conformance title", `title is ${JSON.stringify(info.json.title)} after the update`);
      ensure(isDeepStrictEqual(info.json.tags, { suite: "conformance" }), `tags are ${JSON.stringify(info.json.tags)} after the update`);
      expect422(ctx, "updateConversation", await ctx.request("PATCH", `/api/conversations/${id}`, { json: { title: "" } }), { loc: ["body", "title"] });
      expect422(ctx, "updateConversation", await ctx.request("PATCH", `/api/conversations/${id}`, { json: { title: "x".repeat(201) } }), { loc: ["body", "title"] });
      expect422(ctx, "updateConversation", await ctx.request("PATCH", `/api/conversations/${id}`, { json: { tags: { Suite: "x" } } }), { loc: ["body", "tags", "Suite"] });
      expectConforms(ctx, "updateConversation", await ctx.request("PATCH", "/api/conversations/00000000-0000-4000-8000-00000000c0f2", { json: { title: "x" } }), 404);
    },
  },
  {
    id: "ext.delete-conversation",
    title: "DELETE /api/conversations/{id} removes the conversation: then it is a 404 and a second delete too",
    spec: "deleteConversation 200 (Success), 404",
    needs: ["extension:deleteConversation", "extension:getConversation"],
    async run(ctx) {
      const id = await ctx.createConversation({ initial_user_msg: "to be deleted" });
      const reply = await ctx.request("DELETE", `/api/conversations/${id}`);
      expectConforms(ctx, "deleteConversation", reply, 200);
      expectConforms(ctx, "getConversation", await ctx.request("GET", `/api/conversations/${id}`), 404);
      expectConforms(ctx, "deleteConversation", await ctx.request("DELETE", `/api/conversations/${id}`), 404);
      expect422(ctx, "deleteConversation", await ctx.request("DELETE", "/api/conversations/not-a-uuid"), { loc: ["path", "conversation_id"] });
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
  {
    id: "ext.get-event",
    title: "GET …/events/{event_id} answers the event as search lists it; an unknown event is 404, an id that is no event id 422",
    spec: "getEvent 200, 404, 422",
    needs: ["extension:getEvent"],
    async run(ctx) {
      const { id, events } = await ctx.main();
      for (const event of [events[0]!, events.at(-1)!]) {
        const reply = await ctx.request("GET", `/api/conversations/${id}/events/${event.id}`);
        expectConforms(ctx, "getEvent", reply, 200);
        ensure(isDeepStrictEqual(reply.json, event), () => `event ${event.id} is not the one stored: ${describeReply(reply)}`);
      }
      expectConforms(ctx, "getEvent", await ctx.request("GET", `/api/conversations/${id}/events/00000000-0000-4000-8000-00000000e0f0`), 404);
      expect422(ctx, "getEvent", await ctx.request("GET", `/api/conversations/${id}/events/not-an-event-id`), { loc: ["path", "event_id"] });
    },
  },
  {
    id: "ext.batch-get-events",
    title: "GET …/events?event_ids=… answers one event per id, in order, null for an unknown id",
    spec: "batchGetEvents 200, 422",
    needs: ["extension:batchGetEvents"],
    async run(ctx) {
      const { id, events } = await ctx.main();
      const unknown = "00000000-0000-4000-8000-00000000e0f1";
      const wanted = [events[2]!.id, unknown, events[0]!.id];
      const reply = await ctx.request("GET", `/api/conversations/${id}/events`, { query: { event_ids: wanted } });
      expectConforms(ctx, "batchGetEvents", reply, 200);
      const ids = Array.isArray(reply.json) ? reply.json.map((event: { id?: unknown } | null) => event?.id ?? null) : reply.json;
      ensure(isDeepStrictEqual(ids, [wanted[0], null, wanted[2]]), `the ids answered are ${JSON.stringify(ids)}, not ${JSON.stringify([wanted[0], null, wanted[2]])}`);
      expect422(ctx, "batchGetEvents", await ctx.request("GET", `/api/conversations/${id}/events`, { query: { event_ids: [events[0]!.id, "nope"] } }), { loc: ["query", "event_ids", 1] });
    },
  },
  {
    id: "ext.web-ui-side-routes",
    title: "the routes OpenHands' web UI reads on load answer in the agent server's shapes, never 404",
    spec: "listWorkspaces, getHomeDirectory, listProviderConnections, listInstalledCanvasExtensions, listInstalledPlugins, loadSkills 200",
    needs: ["extension:listWorkspaces", "extension:getHomeDirectory", "extension:listProviderConnections", "extension:listInstalledCanvasExtensions", "extension:listInstalledPlugins", "extension:loadSkills"],
    async run(ctx) {
      expectConforms(ctx, "listWorkspaces", await ctx.request("GET", "/api/workspaces"), 200);
      const home = await ctx.request("GET", "/api/file/home");
      expectConforms(ctx, "getHomeDirectory", home, 200);
      ensure(/^(?:\/|[A-Za-z]:[\\/])/.test(String(home.json.home)), `home ${JSON.stringify(home.json.home)} is not an absolute path (clients resolve working directories against it)`);
      expect422(ctx, "getHomeDirectory", await ctx.request("GET", "/api/file/home", { query: { include_hidden: "maybe" } }), { loc: ["query", "include_hidden"] });
      expectConforms(ctx, "listProviderConnections", await ctx.request("GET", "/api/llm/provider-connections"), 200);
      expectConforms(ctx, "listInstalledCanvasExtensions", await ctx.request("GET", "/api/canvas-extensions/installed"), 200);
      expectConforms(ctx, "listInstalledPlugins", await ctx.request("GET", "/api/plugins/installed"), 200);
      // The body the web UI 1.16.0 sends.
      const skills = await ctx.request("POST", "/api/skills", { json: { load_public: false, load_user: true, load_project: true, load_org: false, project_dir: "workspace/project" } });
      expectConforms(ctx, "loadSkills", skills, 200);
      expect422(ctx, "loadSkills", await ctx.request("POST", "/api/skills", { json: { load_user: "yes" } }), { loc: ["body", "load_user"] });
    },
  },
  {
    id: "ext.bash-execute",
    title: "POST /api/bash/execute_bash_command answers a BashOutput with the exit code (or -1 and why), and a 422 naming the culprit",
    spec: "executeBashCommand 200 (BashOutput), 422",
    needs: ["extension:executeBashCommand", "extension:getHomeDirectory"],
    async run(ctx) {
      // In a conversation's workspace, the folder clients build working directories from; whether
      // the command can run there (a sandbox, a runtime that runs commands) is the server's to say.
      const id = await ctx.createConversation({});
      const home = String((await ctx.request("GET", "/api/file/home")).json.home);
      const reply = await ctx.request("POST", "/api/bash/execute_bash_command", { json: { command: "true", cwd: `${home.replace(/[\\/]+$/, "")}/${id}`, timeout: 30 } });
      expectConforms(ctx, "executeBashCommand", reply, 200);
      ensure(Number.isInteger(reply.json.exit_code), () => `the answer of a command that ended has an exit_code: ${describeReply(reply)}`);
      ensure(reply.json.exit_code !== -1 || /\S/.test(String(reply.json.stderr ?? "")), () => `a command that did not run says why in stderr: ${describeReply(reply)}`);
      expect422(ctx, "executeBashCommand", await ctx.request("POST", "/api/bash/execute_bash_command", { json: { cwd: home } }), { loc: ["body", "command"] });
      expect422(ctx, "executeBashCommand", await ctx.request("POST", "/api/bash/execute_bash_command", { json: { command: "true", timeout: "soon" } }), { loc: ["body", "timeout"] });
    },
  },
  {
    id: "ext.workspace-session",
    title: "POST /api/auth/workspace-session answers 204 without a body",
    spec: "createWorkspaceSession 204",
    needs: ["extension:createWorkspaceSession"],
    async run(ctx) {
      const reply = await ctx.request("POST", "/api/auth/workspace-session");
      ensure(reply.status === 204 && reply.text === "", () => `expected an empty 204: ${describeReply(reply)}`);
    },
  },
];
