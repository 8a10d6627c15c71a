import { describe, expectTypeOf, test } from "vitest";
import type { EventKind, EventSource, components, operations, paths } from "@acs-toolkit/schema";

type Schemas = components["schemas"];
type Search = paths["/api/conversations/{conversation_id}/events/search"]["get"];
type SearchQuery = NonNullable<Search["parameters"]["query"]>;
type Json<R> = R extends { content: { "application/json": infer T } } ? T : never;

test("paths has the five endpoints of the interface and the reference server's extensions", () => {
  expectTypeOf<keyof paths>().toEqualTypeOf<
    | "/api/conversations/{conversation_id}/events/search"
    | "/api/settings"
    | "/api/conversations"
    | "/api/add-git-providers"
    | "/api/conversations/{conversation_id}/upload-files"
    // extensions (x-acs-extension)
    | "/api/conversations/{conversation_id}/events/count"
    | "/api/conversations/{conversation_id}/events"
    | "/api/conversations/{conversation_id}/events/batch"
    | "/api/conversations/{conversation_id}"
    | "/api/conversations/search"
    | "/api/conversations/count"
    | "/api/conversations/{conversation_id}/files/{file_name}"
    | "/health"
    | "/server_info"
    | "/openapi.json"
    | "/asyncapi.json"
    | "/docs"
    // the agent server's controls (extensions)
    | "/api/conversations/{conversation_id}/run"
    | "/api/conversations/{conversation_id}/pause"
    | "/api/conversations/{conversation_id}/interrupt"
    | "/api/conversations/{conversation_id}/events/respond_to_confirmation"
    | "/api/conversations/{conversation_id}/confirmation_policy"
    | "/api/conversations/{conversation_id}/security_analyzer"
    // events by id, and what OpenHands' web UI reads on load (extensions)
    | "/api/conversations/{conversation_id}/events/{event_id}"
    | "/api/workspaces"
    | "/api/file/home"
    | "/api/llm/provider-connections"
    | "/api/canvas-extensions/installed"
    | "/api/skills"
    | "/api/auth/workspace-session"
    | "/api/plugins/installed"
    // settings and profiles in the agent server's shape (extensions)
    | "/api/settings/agent-schema"
    | "/api/settings/conversation-schema"
    | "/api/settings/secrets"
    | "/api/profiles"
    | "/api/agent-profiles"
    // the agent server's bash route (extension)
    | "/api/bash/execute_bash_command"
  >();
});

test("each endpoint has its one method", () => {
  expectTypeOf<paths["/api/conversations/{conversation_id}/events/search"]["get"]>().toEqualTypeOf<operations["searchEvents"]>();
  expectTypeOf<paths["/api/settings"]["post"]>().toEqualTypeOf<operations["storeSettings"]>();
  expectTypeOf<paths["/api/conversations"]["post"]>().toEqualTypeOf<operations["createConversation"]>();
  expectTypeOf<paths["/api/add-git-providers"]["post"]>().toEqualTypeOf<operations["addGitProviders"]>();
  expectTypeOf<paths["/api/conversations/{conversation_id}/upload-files"]["post"]>().toEqualTypeOf<operations["uploadFiles"]>();
  expectTypeOf<paths["/api/settings"]["get"]>().toEqualTypeOf<operations["getSettings"]>();
  expectTypeOf<paths["/api/conversations/{conversation_id}/run"]["post"]>().toEqualTypeOf<operations["runConversation"]>();
  expectTypeOf<paths["/api/conversations/{conversation_id}/events/respond_to_confirmation"]["post"]>().toEqualTypeOf<operations["respondToConfirmation"]>();
  expectTypeOf<paths["/api/conversations/{conversation_id}/confirmation_policy"]["post"]>().toEqualTypeOf<operations["setConfirmationPolicy"]>();
  expectTypeOf<paths["/api/conversations/{conversation_id}/security_analyzer"]["post"]>().toEqualTypeOf<operations["setSecurityAnalyzer"]>();
  expectTypeOf<paths["/api/conversations/{conversation_id}"]["post"]>().toEqualTypeOf<undefined>();
  expectTypeOf<paths["/api/conversations/{conversation_id}/events/search"]["post"]>().toEqualTypeOf<undefined>();
});

describe("searchEvents", () => {
  test("query parameters are optional and typed", () => {
    expectTypeOf<Pick<SearchQuery, "limit">>().toEqualTypeOf<{ limit?: number }>();
    expectTypeOf<Pick<SearchQuery, "sort_order">>().toEqualTypeOf<{ sort_order?: "TIMESTAMP" | "TIMESTAMP_DESC" }>();
    expectTypeOf<SearchQuery["source"]>().toEqualTypeOf<EventSource | undefined>();
    expectTypeOf<SearchQuery["page_id"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SearchQuery["kind"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SearchQuery["body"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SearchQuery["timestamp__gte"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SearchQuery["timestamp__lt"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Record<never, never>>().toExtend<SearchQuery>();
    // @ts-expect-error limit is a number
    const wrongLimit: SearchQuery = { limit: "10" };
    // @ts-expect-error sort_order has two values
    const wrongOrder: SearchQuery = { sort_order: "ASC" };
    void [wrongLimit, wrongOrder];
  });

  test("conversation_id is a required path parameter", () => {
    expectTypeOf<Search["parameters"]["path"]>().toEqualTypeOf<{ conversation_id: string }>();
  });

  test("200 is an EventPage", () => {
    type Page = Json<Search["responses"][200]>;
    expectTypeOf<Page>().toEqualTypeOf<Schemas["EventPage"]>();
    // EventPage does not forbid unknown properties, so its type has an index signature (as EventPage's in types.ts).
    expectTypeOf<Page>().toEqualTypeOf<{ items: Schemas["Event"][]; next_page_id?: string | null; [key: string]: unknown }>();
    expectTypeOf<Page["items"][number]["kind"]>().toEqualTypeOf<EventKind>();
  });

  test("404 and 422 carry the error bodies", () => {
    expectTypeOf<Json<Search["responses"][404]>>().toEqualTypeOf<Schemas["ErrorDetail"]>();
    expectTypeOf<Json<Search["responses"][422]>>().toEqualTypeOf<Schemas["HTTPValidationError"]>();
  });
});

test("the account-scoped endpoints take and return their schemas", () => {
  type Body<O> = O extends { requestBody: { content: infer C } } ? C : never;
  expectTypeOf<Body<operations["storeSettings"]>>().toEqualTypeOf<{ "application/json": Schemas["Settings"] }>();
  // The interface's body, or the agent server's StartConversationRequest.
  expectTypeOf<Body<operations["createConversation"]>>().toEqualTypeOf<{
    "application/json": Schemas["CreateConversationBody"];
  }>();
  expectTypeOf<Schemas["CreateConversationBody"]>().toEqualTypeOf<Schemas["StartConversationRequest"] | Schemas["ConversationCreateRequest"]>();
  expectTypeOf<Body<operations["addGitProviders"]>>().toEqualTypeOf<{
    "application/json": Schemas["AddGitProvidersRequest"];
  }>();
  expectTypeOf<Body<operations["uploadFiles"]>>().toEqualTypeOf<{ "multipart/form-data": Schemas["UploadFilesRequest"] }>();

  expectTypeOf<Json<operations["storeSettings"]["responses"][200]>>().toEqualTypeOf<Schemas["MessageResponse"]>();
  expectTypeOf<Json<operations["createConversation"]["responses"][200]>>().toEqualTypeOf<
    Schemas["ConversationCreateResponse"] | Schemas["ConversationInfo"]
  >();
  expectTypeOf<Json<operations["createConversation"]["responses"][201]>>().toEqualTypeOf<Schemas["ConversationInfo"]>();
  expectTypeOf<Json<operations["uploadFiles"]["responses"][200]>>().toEqualTypeOf<Schemas["UploadResponse"]>();
  expectTypeOf<Json<operations["storeSettings"]["responses"][401]>>().toEqualTypeOf<Schemas["ErrorDetail"]>();
  expectTypeOf<operations["uploadFiles"]["parameters"]["path"]>().toEqualTypeOf<{ conversation_id: string }>();
});
