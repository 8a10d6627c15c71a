/**
 * Type tests (vitest typecheck): results and errors are typed per operation from the generated
 * `paths`; a wrong body, query or path does not compile.
 */
import { describe, expectTypeOf, test } from "vitest";
import type { components, Event, operations } from "@acs-toolkit/schema";
import { createClient as createNodeClient } from "@acs-toolkit/client";
import {
  createClient,
  isApiError,
  type AcsClient,
  type ApiError,
  type ErrorBody,
  type ErrorStatus,
  type OperationId,
  type SearchedEvent,
  type UploadInput,
  type ValidationErrorDetail,
} from "@acs-toolkit/client/browser";

type Schemas = components["schemas"];
const client = createClient({ baseUrl: "http://127.0.0.1:3000", apiKey: "key" });
const nodeClient = createNodeClient({ baseUrl: "http://127.0.0.1:3000", apiKey: "key" });
const id = "3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9";

test("there is a method for every operation of the spec", () => {
  expectTypeOf<OperationId>().toEqualTypeOf<keyof operations>();
  expectTypeOf<OperationId>().toExtend<keyof AcsClient>();
  expectTypeOf<keyof AcsClient>().toEqualTypeOf<OperationId | "iterateEvents" | "subscribe" | "events" | "raw">();
});

describe("results are typed per operation", () => {
  test("from the generated schemas", () => {
    expectTypeOf(client.searchEvents(id)).resolves.toEqualTypeOf<Schemas["EventPage"]>();
    expectTypeOf(client.countEvents(id)).resolves.toEqualTypeOf<number>();
    expectTypeOf(client.createConversation()).resolves.toEqualTypeOf<Schemas["ConversationCreateResponse"]>();
    expectTypeOf(client.createConversation({ workspace: { working_dir: "/w" }, agent_settings: {} })).resolves.toEqualTypeOf<Schemas["ConversationInfo"]>();
    expectTypeOf(client.getConversation(id)).resolves.toEqualTypeOf<Schemas["ConversationInfo"]>();
    expectTypeOf(client.searchConversations()).resolves.toEqualTypeOf<Schemas["ConversationPage"]>();
    expectTypeOf(client.countConversations({ status: "idle" })).resolves.toEqualTypeOf<number>();
    expectTypeOf(client.deleteConversation(id)).resolves.toEqualTypeOf<Schemas["Success"]>();
    expectTypeOf(client.updateConversation(id, { title: "t", tags: { a: "b" } })).resolves.toEqualTypeOf<Schemas["Success"]>();
    expectTypeOf(client.storeSettings({})).resolves.toEqualTypeOf<Schemas["MessageResponse"]>();
    expectTypeOf(client.getSettings()).resolves.toEqualTypeOf<Schemas["AccountSettingsView"]>();
    expectTypeOf(client.addGitProviders({})).resolves.toEqualTypeOf<Schemas["MessageResponse"]>();
    expectTypeOf(client.updateSettings({ misc_settings_diff: {} })).resolves.toEqualTypeOf<Schemas["AccountSettingsView"]>();
    expectTypeOf(client.getAgentSettingsSchema()).resolves.toEqualTypeOf<Schemas["AgentSettingsSchema"]>();
    expectTypeOf(client.listLlmProfiles()).resolves.toEqualTypeOf<Schemas["ProfileListResponse"]>();
    expectTypeOf(client.listAgentProfiles()).resolves.toEqualTypeOf<Schemas["AgentProfileListResponse"]>();
    expectTypeOf(client.uploadFiles(id, [])).resolves.toEqualTypeOf<Schemas["UploadResponse"]>();
    expectTypeOf(client.getHealth()).resolves.toEqualTypeOf<Schemas["Health"]>();
    expectTypeOf(client.getApiReference()).resolves.toEqualTypeOf<string>();
    expectTypeOf(client.executeBashCommand({ command: "git status", cwd: null, timeout: 10 })).resolves.toEqualTypeOf<Schemas["BashOutput"]>();
    // The spec's binary (a string schema) arrives as the bytes.
    expectTypeOf(client.downloadFile(id, "report.csv")).resolves.toEqualTypeOf<Blob>();
  });

  test("iterateEvents yields the events of a page, usable as the schema's Event", () => {
    expectTypeOf(client.iterateEvents(id)).toExtend<AsyncIterable<Schemas["Event"]>>();
    expectTypeOf<SearchedEvent>().toEqualTypeOf<Schemas["Event"]>();
    expectTypeOf<SearchedEvent>().toExtend<Event>();
  });

  test("raw calls are openapi-fetch's, typed by paths", async () => {
    const { data } = await client.raw.GET("/api/conversations/{conversation_id}/events/count", { params: { path: { conversation_id: id } } });
    expectTypeOf(data).toEqualTypeOf<number | undefined>();
  });
});

describe("errors are typed per operation", () => {
  test("the documented statuses", () => {
    expectTypeOf<ErrorStatus<"searchEvents">>().toEqualTypeOf<401 | 404 | 422 | 503>();
    expectTypeOf<ErrorStatus<"createConversation">>().toEqualTypeOf<401 | 409 | 413 | 422 | 503 | 507>();
    expectTypeOf<ErrorStatus<"getSettings">>().toEqualTypeOf<401 | 503>();
    expectTypeOf<ErrorStatus<"updateSettings">>().toEqualTypeOf<400 | 401 | 404 | 413 | 422 | 503 | 507>();
    expectTypeOf<ErrorStatus<"getHealth">>().toEqualTypeOf<503>();
  });

  test("ApiError<op>'s body is the union of that operation's error bodies", () => {
    expectTypeOf<ApiError<"searchEvents">["body"]>().toEqualTypeOf<Schemas["ErrorDetail"] | Schemas["HTTPValidationError"]>();
    expectTypeOf<ApiError<"storeSettings">["body"]>().toEqualTypeOf<Schemas["ErrorDetail"] | Schemas["HTTPValidationError"]>();
    expectTypeOf<ApiError<"getSettings">["body"]>().toEqualTypeOf<Schemas["ErrorDetail"]>();
    expectTypeOf<ApiError<"getHealth">["body"]>().toEqualTypeOf<Schemas["Health"]>();
    expectTypeOf<ErrorBody<"createConversation", 409>>().toEqualTypeOf<Schemas["ErrorDetail"]>();
    expectTypeOf<ApiError<"searchEvents">["operation"]>().toEqualTypeOf<"searchEvents">();
    expectTypeOf<ApiError<"searchEvents">["status"]>().toEqualTypeOf<number>();
    expectTypeOf<ApiError["detail"]>().toEqualTypeOf<ValidationErrorDetail[] | undefined>();
  });

  test("is(status) narrows body and detail", () => {
    const error: unknown = null;
    if (isApiError(error, "searchEvents")) {
      expectTypeOf(error).toEqualTypeOf<ApiError<"searchEvents">>();
      if (error.is(422)) {
        expectTypeOf(error.status).toEqualTypeOf<422>();
        expectTypeOf(error.body).toEqualTypeOf<Schemas["HTTPValidationError"]>();
        expectTypeOf(error.detail).toEqualTypeOf<ValidationErrorDetail[]>();
        expectTypeOf(error.detail[0]!.loc).toEqualTypeOf<(string | number)[]>();
      }
      if (error.is(404)) {
        expectTypeOf(error.body).toEqualTypeOf<Schemas["ErrorDetail"]>();
        expectTypeOf(error.body.detail).toEqualTypeOf<string>();
        expectTypeOf(error.detail).toEqualTypeOf<undefined>();
      }
      // @ts-expect-error event search documents no 409
      error.is(409);
    }
    if (isApiError(error, "getHealth") && error.is(503)) {
      expectTypeOf(error.body.status).toEqualTypeOf<"ok" | "unavailable">();
    }
  });
});

describe("wrong input does not compile", () => {
  test("bodies", () => {
    // @ts-expect-error llm_model is a string
    void client.storeSettings({ llm_model: 42 });
    // @ts-expect-error ConversationCreateRequest has no such field
    void client.createConversation({ initial_user_msg: "hi", bogus: true });
    // @ts-expect-error git_provider is an enum
    void client.createConversation({ git_provider: "sourceforge" });
    // @ts-expect-error a provider token is an object
    void client.addGitProviders({ provider_tokens: { github: "ghp_x" } });
    // @ts-expect-error addGitProviders needs a body
    void client.addGitProviders();
  });

  test("queries and path parameters", () => {
    // @ts-expect-error limit is a number
    void client.searchEvents(id, { limit: "10" });
    // @ts-expect-error sort_order has two values
    void client.searchEvents(id, { sort_order: "ASC" });
    // @ts-expect-error source is an EventSource
    void client.searchEvents(id, { source: "robot" });
    // @ts-expect-error no such filter
    void client.searchEvents(id, { knd: "ActionEvent" });
    // @ts-expect-error count has no cursor
    void client.countEvents(id, { page_id: "x" });
    // @ts-expect-error iterateEvents manages the cursor itself
    void client.iterateEvents(id, { page_id: "x" });
    // @ts-expect-error the conversation id is required
    void client.searchEvents();
    // @ts-expect-error the signal is an AbortSignal
    void client.getSettings({ signal: "stop" });
  });

  test("paths of the raw client", () => {
    // @ts-expect-error no such path
    void client.raw.GET("/api/conversations/{conversation_id}/messages", { params: { path: { conversation_id: id } } });
    // @ts-expect-error no POST on this path
    void client.raw.POST("/api/conversations/{conversation_id}", { params: { path: { conversation_id: id } } });
    // @ts-expect-error the path parameter is required
    void client.raw.GET("/api/conversations/{conversation_id}", {});
  });

  test("uploads: file paths in Node only", () => {
    expectTypeOf<Parameters<typeof client.uploadFiles>[1]>().toExtend<UploadInput | ArrayLike<UploadInput>>();
    void client.uploadFiles(id, [new File(["x"], "x.txt"), new Blob(["y"]), { name: "z.bin", data: new Uint8Array([1]) }]);
    // @ts-expect-error a browser cannot read a path
    void client.uploadFiles(id, ["./report.csv"]);
    void nodeClient.uploadFiles(id, ["./report.csv", new URL("file:///tmp/x"), { path: "./a.txt", name: "b.txt" }, new File(["x"], "x.txt")]);
    // @ts-expect-error named data needs a name
    void nodeClient.uploadFiles(id, [{ data: "x" }]);
  });
});

describe("live events are typed", () => {
  test("subscribe hands typed events and statuses; sendMessage takes a UserMessage or text", () => {
    const sub = client.subscribe(id, {
      onEvent(event) {
        expectTypeOf(event).toEqualTypeOf<SearchedEvent>();
      },
      onStatus(status) {
        expectTypeOf(status).toEqualTypeOf<"connecting" | "open" | "reconnecting" | "closed">();
      },
      from: { afterId: "e1" },
    });
    expectTypeOf(sub.sendMessage("text")).resolves.toBeVoid();
    expectTypeOf(client.sendMessage(id, { role: "user", content: [{ type: "text", text: "hi" }] })).resolves.toBeVoid();
    // @ts-expect-error the channel only carries user messages
    void client.sendMessage(id, { role: "assistant", content: [] });
    // @ts-expect-error onEvent is required
    client.subscribe(id, { from: "now" });
  });

  test("events() is an async iterator of events", () => {
    expectTypeOf(client.events(id)).toEqualTypeOf<AsyncGenerator<SearchedEvent, void, undefined>>();
  });
});
