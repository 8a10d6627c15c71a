/**
 * Every method against the real reference server on a loopback port, and every error path: the
 * server's 401, 404, 409 and 422 (with `loc`), a refused connection, a broken one, aborts, and an
 * answer that is not JSON.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AbortError,
  API_KEY_HEADER,
  ApiError,
  ClientError,
  createClient,
  InvalidResponseError,
  isApiError,
  NetworkError,
} from "@acs-toolkit/client";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { jsonl, KEY, startReferenceServer, type ReferenceServer } from "./support/server.js";

let ref: ReferenceServer;
let client: ReturnType<typeof createClient>;
let conversationId: string;
const events = exampleEvents({ seed: 7 });
/** Every request the client sent: method, path and its key header. */
const sent: Array<{ method: string; path: string; key: string | null }> = [];

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );

beforeAll(async () => {
  ref = await startReferenceServer();
  client = createClient({
    baseUrl: ref.url,
    apiKey: KEY,
    fetch: (request) => {
      sent.push({ method: request.method, path: new URL(request.url).pathname, key: request.headers.get(API_KEY_HEADER) });
      return fetch(request);
    },
  });
  ({ conversation_id: conversationId } = await client.createConversation({ replay_json: jsonl(events), repository: "acme/widgets" }));
});

afterAll(async () => {
  await ref?.close();
});

describe("the interface's five operations", () => {
  it("createConversation creates one, with a caller-supplied id or a generated one", async () => {
    const id = randomUUID();
    const created = await client.createConversation({ conversation_id: id, initial_user_msg: "Hello", git_provider: "github" });
    expect(created).toEqual({ status: "ok", conversation_id: id, message: null, conversation_status: "STOPPED" });
    const generated = await client.createConversation();
    expect(generated.conversation_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.conversation_id).not.toBe(id);
  });

  it("searchEvents returns one page and its cursor", async () => {
    const first = await client.searchEvents(conversationId, { limit: 20 });
    expect(first.items).toEqual(events.slice(0, 20));
    expect(typeof first.next_page_id).toBe("string");
    const second = await client.searchEvents(conversationId, { limit: 20, page_id: first.next_page_id! });
    expect(second.items).toEqual(events.slice(20, 40));
  });

  it("searchEvents applies filters and order", async () => {
    const actions = await client.searchEvents(conversationId, { kind: "ActionEvent", sort_order: "TIMESTAMP_DESC" });
    const expected = events.filter((event) => event.kind === "ActionEvent").reverse();
    expect(actions.items).toEqual(expected);
    expect(actions.next_page_id ?? null).toBeNull();
    const fromUser = await client.searchEvents(conversationId, { source: "user" });
    expect(fromUser.items.every((event) => event.source === "user")).toBe(true);
    const late = await client.searchEvents(conversationId, { timestamp__gte: events[50]!.timestamp });
    expect(late.items.map((event) => event.id)).toEqual(events.slice(50).map((event) => event.id));
  });

  it("storeSettings stores; getSettings reads them back with secrets blanked", async () => {
    const stored = await client.storeSettings({ llm_model: "anthropic/claude-sonnet-4-5", llm_api_key: "sk-secret", confirmation_mode: true, max_iterations: 50 });
    expect(stored).toEqual({ message: expect.any(String) });
    const settings = await client.getSettings();
    expect(settings).toMatchObject({ llm_model: "anthropic/claude-sonnet-4-5", confirmation_mode: true, max_iterations: 50, llm_api_key: null, llm_api_key_set: true });
    expect(JSON.stringify(settings)).not.toContain("sk-secret");
  });

  it("addGitProviders stores tokens; getSettings names the providers, never the tokens", async () => {
    const stored = await client.addGitProviders({ provider_tokens: { github: { token: "ghp_secret_token", host: "github.com" } } });
    expect(stored).toEqual({ message: expect.any(String) });
    const settings = await client.getSettings();
    expect(settings.provider_tokens_set).toEqual({ github: "github.com" });
    expect(JSON.stringify(settings)).not.toContain("ghp_secret_token");
  });

  it("uploadFiles stores files and downloadFile returns their bytes", async () => {
    const uploaded = await client.uploadFiles(conversationId, [new File(["a,b\n1,2\n"], "report.csv", { type: "text/csv" })]);
    expect(uploaded).toEqual({ file_urls: [`/api/conversations/${conversationId}/files/report.csv`], skipped_files: [], skipped_reasons: [] });
    const blob = await client.downloadFile(conversationId, "report.csv");
    expect(await blob.text()).toBe("a,b\n1,2\n");
  });
});

describe("the server's extensions", () => {
  it("countEvents counts what a search with the same filters lists", async () => {
    expect(await client.countEvents(conversationId)).toBe(events.length);
    expect(await client.countEvents(conversationId, { kind: "ActionEvent" })).toBe(events.filter((event) => event.kind === "ActionEvent").length);
  });

  it("getConversation reads status, times and event count", async () => {
    const info = await client.getConversation(conversationId);
    expect(info).toMatchObject({ conversation_id: conversationId, status: "STOPPED", event_count: events.length, repository: "acme/widgets" });
  });

  it("the agent server's controls: pause and interrupt answer success; run, respondToConfirmation, setConfirmationPolicy and setSecurityAnalyzer are ApiErrors 400 where no agent runs", async () => {
    expect(await client.pauseConversation(conversationId)).toEqual({ success: true });
    expect(await client.interruptConversation(conversationId)).toEqual({ success: true });
    const run = await rejection(client.runConversation(conversationId));
    expect(isApiError(run, "runConversation") && run.status).toBe(400);
    const respond = await rejection(client.respondToConfirmation(conversationId, { accept: true }));
    expect(isApiError(respond, "respondToConfirmation") && respond.status).toBe(400);
    const policy = await rejection(client.setConfirmationPolicy(conversationId, { policy: { kind: "ConfirmRisky", threshold: "MEDIUM" } }));
    expect(isApiError(policy, "setConfirmationPolicy") && policy.status).toBe(400);
    const analyzer = await rejection(client.setSecurityAnalyzer(conversationId, { security_analyzer: null }));
    expect(isApiError(analyzer, "setSecurityAnalyzer") && analyzer.status).toBe(400);
    const sentPaths = sent.slice(-6).map((request) => `${request.method} ${request.path}`);
    expect(sentPaths).toEqual(["pause", "interrupt", "run", "events/respond_to_confirmation", "confirmation_policy", "security_analyzer"].map((name) => `POST /api/conversations/${conversationId}/${name}`));
  });

  it("getServerInfo and batchGetConversations", async () => {
    expect(await client.getServerInfo()).toMatchObject({ version: expect.stringMatching(/^\d+\.\d+\.\d+$/), usable_tools: expect.any(Array) });
    const missing = randomUUID();
    const infos = await client.batchGetConversations([conversationId, missing]);
    expect(infos.map((info) => info?.id ?? null)).toEqual([conversationId, null]);
    const invalid = await rejection(client.batchGetConversations(["nope"]));
    expect(isApiError(invalid, "batchGetConversations") && invalid.status).toBe(422);
  });

  it("getEvent and batchGetEvents", async () => {
    const [first, second] = [events[0]!, events[1]!];
    expect(await client.getEvent(conversationId, first.id)).toEqual(first);
    const unknown = randomUUID();
    const missing = await rejection(client.getEvent(conversationId, unknown));
    expect(isApiError(missing, "getEvent") && [missing.status, missing.body]).toEqual([404, { detail: `Event not found: ${unknown}` }]);
    const invalid = await rejection(client.getEvent(conversationId, "nope"));
    expect(isApiError(invalid, "getEvent") && invalid.detail?.[0]?.loc).toEqual(["path", "event_id"]);
    const batch = await client.batchGetEvents(conversationId, [second.id, unknown, first.id]);
    expect(batch.map((event) => event?.id ?? null)).toEqual([second.id, null, first.id]);
    const badBatch = await rejection(client.batchGetEvents(conversationId, [first.id, "nope"]));
    expect(isApiError(badBatch, "batchGetEvents") && badBatch.detail?.[0]?.loc).toEqual(["query", "event_ids", 1]);
  });

  it("createConversation takes the agent server's StartConversationRequest and answers its ConversationInfo", async () => {
    const conversationId = "0f8fad5b-d9cb-469f-a165-70867728950e";
    const request = { workspace: { working_dir: "/workspace/project" }, agent_settings: { agent_kind: "openhands" }, conversation_id: conversationId, tags: { ui: "canvas" } };
    expect(await client.createConversation(request)).toMatchObject({ id: conversationId, execution_status: "idle", tags: { ui: "canvas" } });
    expect(await client.createConversation(request)).toMatchObject({ id: conversationId });
    const invalid = await rejection(client.createConversation({ workspace: {} as { working_dir: string }, agent_settings: {} }));
    expect(isApiError(invalid, "createConversation") && invalid.detail?.[0]?.loc).toEqual(["body", "workspace", "working_dir"]);
  });

  it("the routes OpenHands' web UI reads on load", async () => {
    expect(await client.listWorkspaces()).toEqual({ workspaces: [], workspaceParents: [] });
    expect(await client.getHomeDirectory()).toEqual({ home: expect.stringMatching(/^\/.*uploads$/), favorites: [], locations: [] });
    expect(await client.listProviderConnections()).toEqual([]);
    expect(await client.listInstalledCanvasExtensions()).toEqual({ canvas_extensions: [] });
    expect(await client.listInstalledPlugins()).toEqual({ plugins: [] });
    expect(await client.listSecrets()).toEqual({ secrets: [] });
    expect(await client.loadSkills({ load_public: false, project_dir: "workspace/project" })).toMatchObject({ skills: [] });
    await expect(client.createWorkspaceSession()).resolves.toBeUndefined();
    const invalid = await rejection(client.loadSkills({ load_user: "yes" as unknown as boolean }));
    expect(isApiError(invalid, "loadSkills") && invalid.status).toBe(422);
  });

  it("executeBashCommand: a server without the agent runtime runs nothing and says so", async () => {
    const { home } = await client.getHomeDirectory();
    const output = await client.executeBashCommand({ command: "git status", cwd: `${home}/${conversationId}`, timeout: 10 });
    expect(output).toMatchObject({ kind: "BashOutput", order: 0, exit_code: -1, stdout: null, stderr: expect.stringMatching(/^Error executing command: no command runs here/) });
    const invalid = await rejection(client.executeBashCommand({ command: "true", timeout: 0 }));
    expect(isApiError(invalid, "executeBashCommand") && invalid.detail?.[0]?.loc).toEqual(["body", "timeout"]);
  });

  it("updateSettings, the settings schemas and the profiles", async () => {
    const settings = await client.updateSettings({ agent_settings_diff: { llm: { model: "openai/gpt-4o", api_key: "sk-client-test" } }, misc_settings_diff: { app_preferences: { user_consents_to_analytics: false } } });
    expect(settings).toMatchObject({ llm_model: "openai/gpt-4o", llm_api_key_set: true, agent_settings: { llm: { api_key: "**********" } }, user_consents_to_analytics: false });
    expect(JSON.stringify(settings)).not.toContain("sk-client-test");
    expect(await client.listLlmProfiles()).toMatchObject({ profiles: [{ name: "default", model: "openai/gpt-4o", api_key_set: true }], active_profile: "default" });
    expect(await client.listAgentProfiles()).toEqual({ profiles: [], active_agent_profile_id: null });
    expect((await client.getAgentSettingsSchema()).sections.map((section) => section.key)).toEqual(["llm"]);
    expect((await client.getConversationSettingsSchema()).model_name).toBe("ConversationSettings");
    const nothing = await rejection(client.updateSettings({}));
    if (!isApiError(nothing, "updateSettings") || !nothing.is(400)) throw nothing;
    const invalid = await rejection(client.updateSettings({ conversation_settings_diff: { max_iterations: 0 } }));
    if (!isApiError(invalid, "updateSettings") || !invalid.is(422)) throw invalid;
    expect(invalid.body.detail?.[0]?.loc).toEqual(["body", "conversation_settings_diff", "max_iterations"]);
  });

  it("searchConversations, countConversations, updateConversation and deleteConversation", async () => {
    const { conversation_id: id } = await client.createConversation({ initial_user_msg: "to delete" });
    expect(await client.updateConversation(id, { title: "Short-lived", tags: { kind: "test" } })).toEqual({ success: true });
    const page = await client.searchConversations({ sort_order: "UPDATED_AT_DESC", limit: 1 });
    expect(page.items.map((info) => [info.id, info.title, info.tags])).toEqual([[id, "Short-lived", { kind: "test" }]]);
    expect(page.next_page_id).toMatch(/^[0-9a-f]{32}$/);
    const next = await client.searchConversations({ sort_order: "UPDATED_AT_DESC", limit: 1, page_id: page.next_page_id! });
    expect(next.items[0]?.id).not.toBe(id);
    const count = await client.countConversations();
    expect(count).toBeGreaterThanOrEqual(2);
    expect(await client.countConversations({ status: "idle" })).toBeLessThanOrEqual(count);
    expect(await client.deleteConversation(id)).toEqual({ success: true });
    expect(await client.countConversations()).toBe(count - 1);
    const gone = await rejection(client.deleteConversation(id));
    expect(isApiError(gone, "deleteConversation") && gone.status).toBe(404);
    const invalid = await rejection(client.updateConversation(conversationId, { title: "" }));
    expect(isApiError(invalid, "updateConversation") && invalid.status).toBe(422);
  });

  it("getHealth, getOpenApiDocument, getAsyncApiDocument and getApiReference", async () => {
    expect(await client.getHealth()).toMatchObject({ status: "ok", store: "sqlite" });
    const document = (await client.getOpenApiDocument()) as { openapi?: string; paths?: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\.1/);
    expect(Object.keys(document.paths ?? {})).toContain("/api/conversations/{conversation_id}/events/search");
    const asyncapi = (await client.getAsyncApiDocument()) as { asyncapi?: string; channels?: Record<string, { address?: string }> };
    expect(asyncapi.asyncapi).toBe("3.0.0");
    expect(Object.values(asyncapi.channels ?? {}).map((channel) => channel.address)).toContain("/sockets/events/{conversation_id}");
    expect(await client.getApiReference()).toMatch(/<html/i);
  });
});

describe("the key", () => {
  it("is sent as X-Session-API-Key on every request", () => {
    expect(sent.length).toBeGreaterThan(10);
    expect(sent.filter((request) => request.key !== KEY)).toEqual([]);
  });

  it("may be a function, called per request", async () => {
    let calls = 0;
    const rotating = createClient({ baseUrl: ref.url, apiKey: async () => (calls++, KEY) });
    await rotating.getConversation(conversationId);
    await rotating.countEvents(conversationId);
    expect(calls).toBe(2);
  });

  it("a function that throws rejects the call with its own error", async () => {
    const failing = createClient({ baseUrl: ref.url, apiKey: () => { throw new Error("vault is sealed"); } });
    await expect(failing.getConversation(conversationId)).rejects.toThrow("vault is sealed");
  });

  it("can be left out for a server that reads without one (--public-read): search and count only", async () => {
    const open = await startReferenceServer(["--public-read"]);
    try {
      const { conversation_id: id } = await createClient({ baseUrl: open.url, apiKey: KEY }).createConversation({ replay_json: jsonl(events) });
      const anonymous = createClient({ baseUrl: open.url });
      expect((await anonymous.searchEvents(id, { limit: 3 })).items).toEqual(events.slice(0, 3));
      expect(await anonymous.countEvents(id)).toBe(events.length);
      await expect(anonymous.getConversation(id)).rejects.toMatchObject({ name: "ApiError", status: 401 });
      await expect(anonymous.createConversation()).rejects.toMatchObject({ name: "ApiError", status: 401 });
    } finally {
      await open.close();
    }
  });

  it("headers of the client and of one call are sent too; the raw client carries the key", async () => {
    const seen: Headers[] = [];
    const recording = createClient({
      baseUrl: `${ref.url}/`,
      apiKey: KEY,
      headers: { "X-Client": "tests" },
      fetch: (request) => (seen.push(request.headers), fetch(request)),
    });
    await recording.getConversation(conversationId, { headers: { "X-Request-Id": "r-1" } });
    expect(seen[0]?.get("x-client")).toBe("tests");
    expect(seen[0]?.get("x-request-id")).toBe("r-1");
    const { data, error } = await recording.raw.GET("/api/conversations/{conversation_id}", { params: { path: { conversation_id: conversationId } } });
    expect(error).toBeUndefined();
    expect(data?.event_count).toBe(events.length);
    expect(seen[1]?.get(API_KEY_HEADER)).toBe(KEY);
  });
});

describe("errors", () => {
  it("401: a wrong or missing key is an ApiError with the server's detail", async () => {
    for (const apiKey of ["wrong-key", undefined]) {
      const error = await rejection(createClient({ baseUrl: ref.url, apiKey }).searchEvents(conversationId));
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toBeInstanceOf(ClientError);
      if (!isApiError(error, "searchEvents") || !error.is(401)) throw error;
      expect(error.status).toBe(401);
      expect(error.body).toEqual({ detail: "Unauthorized" });
      expect(error.detail).toBeUndefined();
      expect(error.operation).toBe("searchEvents");
      expect(error.message).toBe("searchEvents: 401 Unauthorized");
    }
    const unauthorized = createClient({ baseUrl: ref.url, apiKey: "wrong-key" });
    for (const call of [
      () => unauthorized.createConversation({}),
      () => unauthorized.storeSettings({}),
      () => unauthorized.getSettings(),
      () => unauthorized.addGitProviders({}),
      () => unauthorized.uploadFiles(conversationId, [new File(["x"], "x.txt")]),
      () => unauthorized.countEvents(conversationId),
      () => unauthorized.getConversation(conversationId),
      () => unauthorized.downloadFile(conversationId, "report.csv"),
    ]) {
      expect(await rejection(call())).toMatchObject({ name: "ApiError", status: 401, body: { detail: "Unauthorized" } });
    }
  });

  it("404: an unknown conversation", async () => {
    const missing = randomUUID();
    for (const call of [
      () => client.searchEvents(missing),
      () => client.countEvents(missing),
      () => client.getConversation(missing),
      () => client.uploadFiles(missing, [new File(["x"], "x.txt")]),
      () => client.downloadFile(missing, "x.txt"),
    ]) {
      const error = await rejection(call());
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 404, body: { detail: `Conversation not found: ${missing}` } });
    }
    const unknownFile = await rejection(client.downloadFile(conversationId, "nothing.txt"));
    expect(unknownFile).toMatchObject({ status: 404, body: { detail: "File not found: nothing.txt" } });
  });

  it("getSettings on a fresh server: the defaults, not an error", async () => {
    const fresh = await startReferenceServer();
    try {
      const freshClient = createClient({ baseUrl: fresh.url, apiKey: KEY });
      expect(await freshClient.getSettings()).toMatchObject({ llm_model: null, llm_api_key_set: false, llm_api_key_is_set: false, conversation_settings: { max_iterations: 500 } });
      expect(await freshClient.listLlmProfiles()).toEqual({ profiles: [], active_profile: null });
    } finally {
      await fresh.close();
    }
  });

  it("409: a repeated conversation id", async () => {
    const id = randomUUID();
    await client.createConversation({ conversation_id: id });
    const error = await rejection(client.createConversation({ conversation_id: id }));
    if (!isApiError(error, "createConversation") || !error.is(409)) throw error;
    expect(error.body).toEqual({ detail: `Conversation already exists: ${id}` });
  });

  it("422: the parsed HTTPValidationError, loc pointing at the culprit", async () => {
    const tooMany = await rejection(client.searchEvents(conversationId, { limit: 1000 }));
    if (!isApiError(tooMany, "searchEvents") || !tooMany.is(422)) throw tooMany;
    expect(tooMany.detail[0]?.loc).toEqual(["query", "limit"]);
    expect(tooMany.body.detail).toBe(tooMany.detail);
    expect(tooMany.message).toMatch(/^searchEvents: 422 query\.limit: /);

    const cases: Array<[Promise<unknown>, Array<string | number>]> = [
      [client.searchEvents("not-a-uuid"), ["path", "conversation_id"]],
      [client.countEvents(conversationId, { source: "robot" as never }), ["query", "source"]],
      [client.getConversation("not-a-uuid"), ["path", "conversation_id"]],
      [client.createConversation({ git_provider: "sourceforge" as never }), ["body", "git_provider"]],
      [client.createConversation({ replay_json: jsonl([{ ...events[3], kind: "NoSuchEvent" }]) }), ["body", "replay_json", 0, "kind"]],
      [client.storeSettings({ max_iterations: "many" as never }), ["body", "max_iterations"]],
      [client.addGitProviders({ provider_tokens: { github: { token: 42 as never } } }), ["body", "provider_tokens", "github", "token"]],
      [client.uploadFiles("not-a-uuid", [new File(["x"], "x.txt")]), ["path", "conversation_id"]],
    ];
    for (const [call, loc] of cases) {
      const error = await rejection(call);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(422);
      expect((error as ApiError).detail?.map((entry) => entry.loc)).toContainEqual(loc);
    }
  });

  it("a refused connection is a NetworkError, told apart from HTTP errors", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const error = await rejection(createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY }).getHealth());
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).not.toBeInstanceOf(ApiError);
    expect((error as NetworkError).operation).toBe("getHealth");
    expect((error as NetworkError).message).toMatch(/^getHealth: request failed: fetch failed: ECONNREFUSED/);
    expect((error as NetworkError).cause).toBeInstanceOf(TypeError);
  });

  it("a non-JSON 2xx answer is an InvalidResponseError", async () => {
    const lying = createClient({ baseUrl: ref.url, fetch: async () => new Response("<html>proxy</html>", { status: 200 }) });
    const error = await rejection(lying.getHealth());
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as Error).message).toMatch(/^getHealth: the answer is not JSON/);
  });

  it("an undocumented status (a proxy's 502) is still an ApiError, its text as body", async () => {
    const proxied = createClient({ baseUrl: ref.url, fetch: async () => new Response("Bad Gateway", { status: 502, statusText: "Bad Gateway" }) });
    const error = await rejection(proxied.searchEvents(conversationId));
    expect(error).toMatchObject({ name: "ApiError", status: 502, body: "Bad Gateway", detail: undefined });
  });
});

describe("abort", () => {
  let hanging: Server;
  let hangingUrl: string;
  const broken: string[] = [];

  beforeAll(async () => {
    // Answers nothing on /hang (until the client gives up), and cuts the connection on /cut.
    hanging = createServer((req, res) => {
      if (req.url?.startsWith("/health")) return; // never answers
      broken.push(req.url ?? "");
      req.socket.destroy();
      void res;
    });
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    hanging.closeAllConnections();
    await new Promise((resolve) => hanging.close(resolve));
  });

  it("every call takes a signal; an already-aborted one sends nothing", async () => {
    const before = sent.length;
    const controller = new AbortController();
    controller.abort();
    const signal = controller.signal;
    const calls = [
      client.searchEvents(conversationId, {}, { signal }),
      client.countEvents(conversationId, {}, { signal }),
      client.createConversation({}, { signal }),
      client.getConversation(conversationId, { signal }),
      client.storeSettings({}, { signal }),
      client.getSettings({ signal }),
      client.addGitProviders({}, { signal }),
      client.uploadFiles(conversationId, [new File(["x"], "x.txt")], { signal }),
      client.downloadFile(conversationId, "report.csv", { signal }),
      client.runConversation(conversationId, { signal }),
      client.pauseConversation(conversationId, { signal }),
      client.interruptConversation(conversationId, { signal }),
      client.respondToConfirmation(conversationId, { accept: false }, { signal }),
      client.setConfirmationPolicy(conversationId, { policy: { kind: "NeverConfirm" } }, { signal }),
      client.setSecurityAnalyzer(conversationId, { security_analyzer: null }, { signal }),
      client.getHealth({ signal }),
      client.getOpenApiDocument({ signal }),
      client.getApiReference({ signal }),
      client.iterateEvents(conversationId, {}, { signal }).next(),
    ];
    for (const call of calls) {
      const error = await rejection(call);
      expect(error).toBeInstanceOf(AbortError);
      expect((error as AbortError).name).toBe("AbortError");
    }
    expect(sent.length).toBe(before);
  });

  it("aborting a request in flight rejects with AbortError carrying the reason", async () => {
    const slow = createClient({ baseUrl: hangingUrl });
    const controller = new AbortController();
    const pending = rejection(slow.getHealth({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error("user left")), 50);
    const error = await pending;
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).reason).toEqual(new Error("user left"));

    const timedOut = await rejection(slow.getHealth({ signal: AbortSignal.timeout(50) }));
    expect(timedOut).toBeInstanceOf(AbortError);
    expect(((timedOut as AbortError).reason as Error).name).toBe("TimeoutError");
    expect((timedOut as Error).message).toBe("getHealth: aborted (TimeoutError)");
  });

  it("a connection cut before the answer is a NetworkError", async () => {
    const error = await rejection(createClient({ baseUrl: hangingUrl }).countEvents(conversationId));
    expect(error).toBeInstanceOf(NetworkError);
    expect(broken).toHaveLength(1);
  });
});
