/**
 * The client's methods that are one request each, in groups by what they act on. Each group takes
 * the openapi-fetch client and `call`; `createClientFor` spreads the groups into the client.
 */
import type { paths } from "@acs-toolkit/schema";
import type { Client } from "openapi-fetch";
import type { AcsClient } from "./client.js";
import { AbortError } from "./errors.js";
import { listInputs, toFile, type ReadPath } from "./files.js";
import { conversationParams, requestInit, type Call } from "./request.js";
import type { OperationBody } from "./types.js";

type Raw = Client<paths>;

/** Creating conversations and reading them. */
export const conversationMethods = (
  raw: Raw,
  call: Call,
): Pick<AcsClient, "createConversation" | "batchGetConversations" | "getConversation" | "searchConversations" | "countConversations" | "deleteConversation" | "updateConversation"> => ({
  createConversation(request = {}, options) {
    return call("createConversation", options, () => raw.POST("/api/conversations", { body: request, ...requestInit(options) }));
  },

  batchGetConversations(ids, options) {
    return call("batchGetConversations", options, () => raw.GET("/api/conversations", { params: { query: { ids: [...ids] } }, ...requestInit(options) }));
  },

  getConversation(conversationId, options) {
    return call("getConversation", options, () =>
      raw.GET("/api/conversations/{conversation_id}", { params: conversationParams(conversationId), ...requestInit(options) }),
    );
  },

  searchConversations(query = {}, options) {
    return call("searchConversations", options, () => raw.GET("/api/conversations/search", { params: { query }, ...requestInit(options) }));
  },

  countConversations(query = {}, options) {
    return call("countConversations", options, () => raw.GET("/api/conversations/count", { params: { query }, ...requestInit(options) }));
  },

  deleteConversation(conversationId, options) {
    return call("deleteConversation", options, () =>
      raw.DELETE("/api/conversations/{conversation_id}", { params: conversationParams(conversationId), ...requestInit(options) }),
    );
  },

  updateConversation(conversationId, request, options) {
    return call("updateConversation", options, () =>
      raw.PATCH("/api/conversations/{conversation_id}", { params: conversationParams(conversationId), body: request, ...requestInit(options) }),
    );
  },
});

/** The user's settings and git-provider tokens. */
export const settingsMethods = (
  raw: Raw,
  call: Call,
): Pick<
  AcsClient,
  "storeSettings" | "getSettings" | "addGitProviders" | "updateSettings" | "getAgentSettingsSchema" | "getConversationSettingsSchema" | "listLlmProfiles" | "listAgentProfiles" | "listSecrets"
> => ({
  storeSettings(settings, options) {
    return call("storeSettings", options, () => raw.POST("/api/settings", { body: settings, ...requestInit(options) }));
  },

  getSettings(options) {
    return call("getSettings", options, () => raw.GET("/api/settings", requestInit(options)));
  },

  addGitProviders(request, options) {
    return call("addGitProviders", options, () => raw.POST("/api/add-git-providers", { body: request, ...requestInit(options) }));
  },

  updateSettings(request, options) {
    return call("updateSettings", options, () => raw.PATCH("/api/settings", { body: request, ...requestInit(options) }));
  },

  getAgentSettingsSchema(options) {
    return call("getAgentSettingsSchema", options, () => raw.GET("/api/settings/agent-schema", requestInit(options)));
  },

  getConversationSettingsSchema(options) {
    return call("getConversationSettingsSchema", options, () => raw.GET("/api/settings/conversation-schema", requestInit(options)));
  },

  listLlmProfiles(options) {
    return call("listLlmProfiles", options, () => raw.GET("/api/profiles", requestInit(options)));
  },

  listAgentProfiles(options) {
    return call("listAgentProfiles", options, () => raw.GET("/api/agent-profiles", requestInit(options)));
  },

  listSecrets(options) {
    return call("listSecrets", options, () => raw.GET("/api/settings/secrets", requestInit(options)));
  },
});

/** A multipart/form-data body: every array element is one part of its field (fetch sets the boundary). */
function multipart(body: Record<string, unknown>): FormData {
  const form = new FormData();
  for (const [field, value] of Object.entries(body)) {
    for (const part of Array.isArray(value) ? value : [value]) form.append(field, part instanceof Blob ? part : String(part));
  }
  return form;
}

/** Uploading files into a conversation and downloading them; `readPath` reads a file path (Node). */
export const fileMethods = <Upload>(raw: Raw, call: Call, readPath: ReadPath | undefined): Pick<AcsClient<Upload>, "uploadFiles" | "downloadFile"> => ({
  async uploadFiles(conversationId, files, options) {
    const signal = options?.signal;
    if (signal?.aborted) throw new AbortError("uploadFiles", signal.reason);
    const parts = await Promise.all(listInputs(files).map((input) => toFile(input, readPath)));
    // The spec's multipart body types each part of `files` as a string (OpenAPI's binary is a
    // string schema); at run time each part is a File. This is the one place that says so.
    const body: OperationBody<"uploadFiles"> = { files: parts as unknown as string[] };
    return call("uploadFiles", options, () =>
      raw.POST("/api/conversations/{conversation_id}/upload-files", {
        params: conversationParams(conversationId),
        body,
        bodySerializer: multipart,
        ...requestInit(options),
      }),
    );
  },

  downloadFile(conversationId, fileName, options) {
    return call<"downloadFile", Blob>("downloadFile", options, () =>
      raw.GET("/api/conversations/{conversation_id}/files/{file_name}", {
        params: { path: { conversation_id: conversationId, file_name: fileName } },
        parseAs: "blob",
        ...requestInit(options),
      }),
    );
  },
});

/** Running the agent, and what it may do without asking. */
export const agentMethods = (
  raw: Raw,
  call: Call,
): Pick<AcsClient, "runConversation" | "pauseConversation" | "interruptConversation" | "respondToConfirmation" | "setConfirmationPolicy" | "setSecurityAnalyzer"> => ({
  runConversation(conversationId, options) {
    return call("runConversation", options, () =>
      raw.POST("/api/conversations/{conversation_id}/run", { params: conversationParams(conversationId), ...requestInit(options) }),
    );
  },

  pauseConversation(conversationId, options) {
    return call("pauseConversation", options, () =>
      raw.POST("/api/conversations/{conversation_id}/pause", { params: conversationParams(conversationId), ...requestInit(options) }),
    );
  },

  interruptConversation(conversationId, options) {
    return call("interruptConversation", options, () =>
      raw.POST("/api/conversations/{conversation_id}/interrupt", { params: conversationParams(conversationId), ...requestInit(options) }),
    );
  },

  respondToConfirmation(conversationId, response, options) {
    return call("respondToConfirmation", options, () =>
      raw.POST("/api/conversations/{conversation_id}/events/respond_to_confirmation", { params: conversationParams(conversationId), body: response, ...requestInit(options) }),
    );
  },

  setConfirmationPolicy(conversationId, request, options) {
    return call("setConfirmationPolicy", options, () =>
      raw.POST("/api/conversations/{conversation_id}/confirmation_policy", { params: conversationParams(conversationId), body: request, ...requestInit(options) }),
    );
  },

  setSecurityAnalyzer(conversationId, request, options) {
    return call("setSecurityAnalyzer", options, () =>
      raw.POST("/api/conversations/{conversation_id}/security_analyzer", { params: conversationParams(conversationId), body: request, ...requestInit(options) }),
    );
  },
});

/** What the server says about itself: its health, release, and documents. */
export const serverMethods = (
  raw: Raw,
  call: Call,
): Pick<AcsClient, "getHealth" | "getServerInfo" | "getOpenApiDocument" | "getAsyncApiDocument" | "getApiReference"> => ({
  getHealth(options) {
    return call("getHealth", options, () => raw.GET("/health", requestInit(options)));
  },

  getServerInfo(options) {
    return call("getServerInfo", options, () => raw.GET("/server_info", requestInit(options)));
  },

  getOpenApiDocument(options) {
    return call("getOpenApiDocument", options, () => raw.GET("/openapi.json", requestInit(options)));
  },

  getAsyncApiDocument(options) {
    return call("getAsyncApiDocument", options, () => raw.GET("/asyncapi.json", requestInit(options)));
  },

  getApiReference(options) {
    return call("getApiReference", options, () => raw.GET("/docs", { parseAs: "text", ...requestInit(options) }));
  },
});

/** A conversation's events by id (the agent server's reads by id). */
export const eventReadMethods = (raw: Raw, call: Call): Pick<AcsClient, "getEvent" | "batchGetEvents"> => ({
  getEvent(conversationId, eventId, options) {
    return call("getEvent", options, () =>
      raw.GET("/api/conversations/{conversation_id}/events/{event_id}", { params: { path: { conversation_id: conversationId, event_id: eventId } }, ...requestInit(options) }),
    );
  },

  // As `event_ids` query parameters: fetch cannot send the body of a GET, which the agent server reads.
  batchGetEvents(conversationId, eventIds, options) {
    return call("batchGetEvents", options, () =>
      raw.GET("/api/conversations/{conversation_id}/events", { params: { ...conversationParams(conversationId), query: { event_ids: [...eventIds] } }, ...requestInit(options) }),
    );
  },
});

/** What OpenHands' web UI reads when it loads: the server's workspace folder, skills, and its empty lists. */
export const webUiMethods = (
  raw: Raw,
  call: Call,
): Pick<AcsClient, "listWorkspaces" | "getHomeDirectory" | "listProviderConnections" | "listInstalledCanvasExtensions" | "listInstalledPlugins" | "loadSkills" | "createWorkspaceSession" | "executeBashCommand"> => ({
  listWorkspaces(options) {
    return call("listWorkspaces", options, () => raw.GET("/api/workspaces", requestInit(options)));
  },

  getHomeDirectory(options) {
    return call("getHomeDirectory", options, () => raw.GET("/api/file/home", requestInit(options)));
  },

  listProviderConnections(options) {
    return call("listProviderConnections", options, () => raw.GET("/api/llm/provider-connections", requestInit(options)));
  },

  listInstalledPlugins(options) {
    return call("listInstalledPlugins", options, () => raw.GET("/api/plugins/installed", requestInit(options)));
  },

  listInstalledCanvasExtensions(options) {
    return call("listInstalledCanvasExtensions", options, () => raw.GET("/api/canvas-extensions/installed", requestInit(options)));
  },

  loadSkills(request = {}, options) {
    return call("loadSkills", options, () => raw.POST("/api/skills", { body: request, ...requestInit(options) }));
  },

  // The answer is a 204 without a body, which `call` would take for a missing one.
  async createWorkspaceSession(options) {
    await call<"createWorkspaceSession", null>("createWorkspaceSession", options, async () => {
      const result = await raw.POST("/api/auth/workspace-session", requestInit(options));
      return result.response.ok ? { ...result, data: null } : result;
    });
  },

  executeBashCommand(request, options) {
    return call("executeBashCommand", options, () => raw.POST("/api/bash/execute_bash_command", { body: request, ...requestInit(options) }));
  },
});
