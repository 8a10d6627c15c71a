/**
 * Every documented error: 401 on each operation that needs the key (derived from the spec's
 * security), 404 for an unknown conversation, and 422 with a `loc` at the culprit for each class of
 * bad input, never a 500.
 */
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { expect422, expectConforms, type Check, type ExpectedLoc } from "../check.js";
import type { CheckContext } from "../context.js";
import type { Reply, RequestOptions } from "../http.js";
import { OPERATIONS, type SpecOperation } from "../spec.js";

const UNKNOWN_CONVERSATION = "00000000-0000-4000-8000-00000000c0f0";
const WRONG_KEY = "acs-conformance-wrong-key";

/** A request to an operation that would succeed with the right key. */
async function callWithKey(ctx: CheckContext, operation: SpecOperation, key: string | null): Promise<Reply> {
  const { id } = await ctx.main();
  const route = operation.path.replace("{conversation_id}", id).replace("{file_name}", "acs-conformance.txt");
  if (operation.operationId === "uploadFiles") return ctx.upload(id, [["auth.txt", Buffer.from("auth")]], { key });
  return ctx.request(operation.method, route, { key, json: operation.method === "GET" ? undefined : {} });
}

/** One check per operation whose security requires the key: missing, wrong and empty keys are 401. */
function authChecks(): Check[] {
  return OPERATIONS
    .filter((operation) => operation.requiresKey)
    .map((operation) => ({
      id: `auth.${operation.operationId}`,
      title: `${operation.method} ${operation.path} without the key, with a wrong one or an empty one is 401`,
      spec: `${operation.operationId} security (X-Session-API-Key)`,
      needs: ["key", ...(operation.extension ? [`extension:${operation.operationId}` as const] : [])],
      async run(ctx) {
        for (const key of [null, WRONG_KEY, ""]) {
          const reply = await callWithKey(ctx, operation, key);
          expectConforms(ctx, operation.operationId, reply, 401);
        }
      },
    }));
}

const notFoundChecks: Check[] = [
  {
    id: "not-found.search",
    title: "searching a conversation that does not exist is 404",
    spec: "searchEvents 404",
    async run(ctx) {
      expectConforms(ctx, "searchEvents", await ctx.request("GET", `/api/conversations/${UNKNOWN_CONVERSATION}/events/search`), 404);
    },
  },
  {
    id: "not-found.upload",
    title: "uploading into a conversation that does not exist is 404",
    spec: "uploadFiles 404",
    async run(ctx) {
      expectConforms(ctx, "uploadFiles", await ctx.upload(UNKNOWN_CONVERSATION, [["a.txt", Buffer.from("a")]]), 404);
    },
  },
  {
    id: "not-found.conversation",
    title: "reading a conversation that does not exist is 404",
    spec: "getConversation 404",
    needs: ["extension:getConversation"],
    async run(ctx) {
      expectConforms(ctx, "getConversation", await ctx.request("GET", `/api/conversations/${UNKNOWN_CONVERSATION}`), 404);
    },
  },
  {
    id: "not-found.count",
    title: "counting the events of a conversation that does not exist is 404",
    spec: "countEvents 404",
    needs: ["extension:countEvents"],
    async run(ctx) {
      expectConforms(ctx, "countEvents", await ctx.request("GET", `/api/conversations/${UNKNOWN_CONVERSATION}/events/count`), 404);
    },
  },
];

interface BadInput {
  id: string;
  title: string;
  operationId: string;
  send(ctx: CheckContext): Promise<Reply>;
  loc: ExpectedLoc;
}

const at = (...loc: Array<string | number>): ExpectedLoc => ({ loc });
const under = (...loc: Array<string | number>): ExpectedLoc => ({ loc, prefix: true });

async function searchWith(ctx: CheckContext, query: RequestOptions["query"]): Promise<Reply> {
  const { id } = await ctx.main();
  return ctx.request("GET", `/api/conversations/${id}/events/search`, { query });
}

const post = (route: string, options: RequestOptions) => (ctx: CheckContext) => ctx.request("POST", route, options);
const create = (json: unknown) => post("/api/conversations", { json });

/** A replay whose event `index` is changed by `change` (the example trajectory: 0 system prompt, 1 user message, 2… actions). */
function replayWith(change: (events: any[]) => void): string {
  const events: any[] = exampleEvents({ seed: 0xc0f6 });
  change(events);
  return JSON.stringify(events);
}

async function upload(ctx: CheckContext, options: RequestOptions): Promise<Reply> {
  const { id } = await ctx.main();
  return ctx.request("POST", `/api/conversations/${id}/upload-files`, options);
}

const BAD_INPUTS: BadInput[] = [
  { id: "limit-0", title: "limit=0", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { limit: 0 }), loc: at("query", "limit") },
  { id: "limit-101", title: "limit=101", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { limit: 101 }), loc: at("query", "limit") },
  { id: "limit-not-integer", title: "limit=abc", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { limit: "abc" }), loc: at("query", "limit") },
  { id: "limit-fraction", title: "limit=1.5", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { limit: "1.5" }), loc: at("query", "limit") },
  { id: "limit-repeated", title: "limit given twice", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { limit: ["1", "2"] }), loc: at("query", "limit") },
  { id: "sort-order", title: "sort_order=ASC (not in the enum)", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { sort_order: "ASC" }), loc: at("query", "sort_order") },
  { id: "kind-malformed", title: "kind=Message Event (not a kind name)", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { kind: "Message Event" }), loc: at("query", "kind") },
  { id: "source-unknown", title: "source=robot (not a source)", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { source: "robot" }), loc: at("query", "source") },
  { id: "body-too-long", title: "body of 1,001 characters", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { body: "x".repeat(1001) }), loc: at("query", "body") },
  { id: "timestamp-gte", title: "timestamp__gte=yesterday", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { timestamp__gte: "yesterday" }), loc: at("query", "timestamp__gte") },
  { id: "timestamp-lt", title: "timestamp__lt with month 13", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { timestamp__lt: "2026-13-01T00:00:00" }), loc: at("query", "timestamp__lt") },
  { id: "timestamp-ambiguous", title: "timestamp__gte=20260205 (a compact date or epoch seconds: ambiguous)", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { timestamp__gte: "20260205" }), loc: at("query", "timestamp__gte") },
  { id: "page-id-forged", title: "a page_id that no page gave and that is no event of the conversation", operationId: "searchEvents", send: (ctx) => searchWith(ctx, { page_id: "00000000-0000-4000-8000-00000000c0fe" }), loc: at("query", "page_id") },
  {
    id: "page-id-other-conversation",
    title: "a page_id of another conversation",
    operationId: "searchEvents",
    async send(ctx) {
      const other = await ctx.shuffled();
      const page = await ctx.searchPage(other.id, { limit: 2 });
      return searchWith(ctx, { page_id: page.next_page_id ?? "" });
    },
    loc: at("query", "page_id"),
  },
  {
    id: "page-id-other-order",
    title: "a page_id of the other sort_order",
    operationId: "searchEvents",
    async send(ctx) {
      const { id } = await ctx.main();
      const page = await ctx.searchPage(id, { limit: 2 });
      return searchWith(ctx, { page_id: page.next_page_id ?? "", sort_order: "TIMESTAMP_DESC" });
    },
    loc: at("query", "page_id"),
  },
  { id: "conversation-id-search", title: "a conversation id that is not a UUID (search)", operationId: "searchEvents", send: (ctx) => ctx.request("GET", "/api/conversations/not-a-uuid/events/search"), loc: at("path", "conversation_id") },
  {
    id: "conversation-id-upload",
    title: "a conversation id that is not a UUID (upload)",
    operationId: "uploadFiles",
    send: (ctx) => ctx.upload("not-a-uuid", [["a.txt", Buffer.from("a")]]),
    loc: at("path", "conversation_id"),
  },
  { id: "json-malformed", title: "a body that is not JSON", operationId: "createConversation", send: post("/api/conversations", { body: '{"initial_user_msg": ', headers: { "Content-Type": "application/json" } }), loc: under("body") },
  { id: "json-array", title: "a JSON array instead of an object", operationId: "createConversation", send: create([]), loc: at("body") },
  { id: "json-null", title: "a JSON null body", operationId: "createConversation", send: create(null), loc: at("body") },
  { id: "body-missing", title: "no body at all", operationId: "createConversation", send: post("/api/conversations", {}), loc: at("body") },
  { id: "body-text-plain", title: "a text/plain body", operationId: "createConversation", send: post("/api/conversations", { body: "hello", headers: { "Content-Type": "text/plain" } }), loc: at("body") },
  { id: "create-unknown-field", title: "an unknown field", operationId: "createConversation", send: create({ title: "x" }), loc: at("body", "title") },
  { id: "create-wrong-type", title: "initial_user_msg: 42", operationId: "createConversation", send: create({ initial_user_msg: 42 }), loc: at("body", "initial_user_msg") },
  { id: "create-git-provider", title: "git_provider outside the enum", operationId: "createConversation", send: create({ git_provider: "sourcehut" }), loc: at("body", "git_provider") },
  { id: "create-conversation-id", title: "conversation_id that is not a UUID", operationId: "createConversation", send: create({ conversation_id: "abc" }), loc: at("body", "conversation_id") },
  { id: "create-nested-missing", title: "suggested_task without its required repo", operationId: "createConversation", send: create({ suggested_task: { issue_number: 1, title: "x" } }), loc: at("body", "suggested_task", "repo") },
  { id: "replay-not-json", title: "replay_json that is not JSON", operationId: "createConversation", send: create({ replay_json: "hello\nworld" }), loc: under("body", "replay_json") },
  {
    id: "replay-bad-kind",
    title: "replay_json whose event 3 has an unknown action kind",
    operationId: "createConversation",
    send: create({ replay_json: replayWith((events) => (events[3].action.kind = "TerminalActon")) }),
    loc: under("body", "replay_json", 3),
  },
  {
    id: "replay-invalid-event",
    title: "replay_json whose event 4 lacks a required field",
    operationId: "createConversation",
    send: create({ replay_json: replayWith((events) => delete events[4].tool_call_id) }),
    loc: under("body", "replay_json", 4),
  },
  {
    id: "replay-duplicate-id",
    title: "replay_json whose event 2 repeats the id of event 1",
    operationId: "createConversation",
    send: create({ replay_json: replayWith((events) => (events[2].id = events[1].id)) }),
    loc: under("body", "replay_json", 2),
  },
  { id: "settings-wrong-type", title: "settings max_iterations: \"many\"", operationId: "storeSettings", send: post("/api/settings", { json: { max_iterations: "many" } }), loc: at("body", "max_iterations") },
  {
    id: "settings-mcp-server",
    title: "an MCP stdio server without its command",
    operationId: "storeSettings",
    send: post("/api/settings", { json: { mcp_config: { stdio_servers: [{ name: "x" }] } } }),
    loc: at("body", "mcp_config", "stdio_servers", 0, "command"),
  },
  {
    id: "git-provider-unknown",
    title: "a token for an unknown git provider",
    operationId: "addGitProviders",
    send: post("/api/add-git-providers", { json: { provider_tokens: { sourcehut: { token: "x" } } } }),
    loc: at("body", "provider_tokens", "sourcehut"),
  },
  {
    id: "upload-no-files",
    title: "an upload without the files field",
    operationId: "uploadFiles",
    send(ctx) {
      const form = new FormData();
      form.append("other", new Blob(["x"]), "x.txt");
      return upload(ctx, { body: form });
    },
    loc: at("body", "files"),
  },
  { id: "upload-not-multipart", title: "an upload that is not multipart", operationId: "uploadFiles", send: (ctx) => upload(ctx, { json: { files: [] } }), loc: under("body") },
];

function badInputChecks(): Check[] {
  return BAD_INPUTS.map((row) => ({
    id: `bad-input.${row.id}`,
    title: `${row.title} is 422 at ${JSON.stringify(row.loc.loc)}${row.loc.prefix ? " (or below)" : ""}`,
    spec: `${row.operationId} 422 (HTTPValidationError)`,
    async run(ctx) {
      expect422(ctx, row.operationId, await row.send(ctx), row.loc);
    },
  }));
}

export const errorChecks: Check[] = [...authChecks(), ...notFoundChecks, ...badInputChecks()];
