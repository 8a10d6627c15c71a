import { asyncapiDocument, openapiDocument } from "@acs-toolkit/schema/documents";
import { createApi, noBody, RequestChecks } from "@acs-toolkit/server/api";
import { ConversationCore, EventBus, PLAIN_SECRETS, UNSIGNED_CURSORS, cursorCodec, recordingRuntime, type StoredSettings } from "@acs-toolkit/server/core";
import { validators } from "@acs-toolkit/server/request-validators";
import { openMemoryStore } from "@acs-toolkit/server/store";

const store = openMemoryStore();
const api = createApi({
  store,
  conversations: new ConversationCore(store, new EventBus(), recordingRuntime),
  controls: undefined,
  validators: new RequestChecks(openapiDocument, (schema) => validators[schema.$id as string]!),
  cursors: cursorCodec(UNSIGNED_CURSORS),
  settings: { sealer: PLAIN_SECRETS, read: (text) => ({ settings: JSON.parse(text) as StoredSettings, upgraded: false }) },
  health: async () => ({ status: "ok", store: store.kind, version: "example", writes: "ok", file_io: "ok" }),
  openapi: openapiDocument,
  asyncapi: asyncapiDocument,
  keyAccepted: (key) => key === "my-key",
  publicRead: false,
});

// One request: method, raw path, query, headers and a body to read; one reply: status, headers, body parts.
const reply = await api.handle("GET", "/api/conversations/not-a-uuid/events/count", { query: {}, headers: { "x-session-api-key": "my-key" }, body: noBody });
console.log(reply.status, new TextDecoder().decode(reply.body[0])); // 422 {"detail":[{"loc":["path","conversation_id"],…
