/**
 * No request pays for compiling a validator: compiling one takes up to
 * about 130 ms (sendMessage's body), so the first request of each operation, or the first inbound
 * WebSocket frame, held the event loop past its 50 ms budget (the fuzzer's bounded pass caught it on
 * its fifth case). Every request validator is compiled before the server listens; asserted by
 * watching AJV's compiler while one request of every validated operation, and a frame, is served.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { KEY, startTestServer, type TestServer } from "../support/harness.js";
import { connectLive, isErrorFrame, livePath } from "@acs-toolkit/test-kit/live";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const id = "7ea7bae6-2fc3-4561-8668-0da6177eb32b";

/** One request per operation that has parameters or a JSON body to validate, each invalid on purpose. */
const requests: Record<string, () => Promise<{ status: number }>> = {
  searchEvents: () => t.call("GET", `/api/conversations/${id}/events/search`, { query: { limit: 0 } }),
  countEvents: () => t.call("GET", `/api/conversations/${id}/events/count`, { query: { timestamp__gte: "x" } }),
  sendMessage: () => t.call("POST", `/api/conversations/${id}/events`, { json: { role: 7 } }),
  getConversation: () => t.call("GET", "/api/conversations/not-a-uuid"),
  batchGetConversations: () => t.call("GET", "/api/conversations", { query: { ids: "not-a-uuid" } }),
  searchConversations: () => t.call("GET", "/api/conversations/search", { query: { limit: 0 } }),
  countConversations: () => t.call("GET", "/api/conversations/count", { query: { status: "busy" } }),
  deleteConversation: () => t.call("DELETE", "/api/conversations/not-a-uuid"),
  updateConversation: () => t.call("PATCH", `/api/conversations/${id}`, { json: { title: 7 } }),
  downloadFile: () => t.call("GET", `/api/conversations/not-a-uuid/files/a.txt`),
  storeSettings: () => t.call("POST", "/api/settings", { json: { max_iterations: "many" } }),
  updateSettings: () => t.call("PATCH", "/api/settings", { json: { misc_settings_diff: 7 } }),
  createConversation: () => t.call("POST", "/api/conversations", { json: { conversation_id: 7 } }),
  addGitProviders: () => t.call("POST", "/api/add-git-providers", { json: { provider_tokens: 7 } }),
  uploadFiles: () => t.call("POST", "/api/conversations/not-a-uuid/upload-files", { body: new FormData() }),
  runConversation: () => t.call("POST", "/api/conversations/not-a-uuid/run"),
  pauseConversation: () => t.call("POST", "/api/conversations/not-a-uuid/pause"),
  interruptConversation: () => t.call("POST", "/api/conversations/not-a-uuid/interrupt"),
  respondToConfirmation: () => t.call("POST", `/api/conversations/${id}/events/respond_to_confirmation`, { json: { accept: "yes" } }),
  setConfirmationPolicy: () => t.call("POST", `/api/conversations/${id}/confirmation_policy`, { json: { policy: { kind: 7 } } }),
  appendEventBatch: () => t.call("POST", "/api/conversations/not-a-uuid/events/batch", { body: "{}\n", headers: { "Content-Type": "application/x-ndjson" } }),
  setSecurityAnalyzer: () => t.call("POST", `/api/conversations/${id}/security_analyzer`, { json: {} }),
  getEvent: () => t.call("GET", `/api/conversations/${id}/events/nope`),
  batchGetEvents: () => t.call("GET", `/api/conversations/${id}/events`, { query: { event_ids: "nope" } }),
  getHomeDirectory: () => t.call("GET", "/api/file/home", { query: { include_hidden: "maybe" } }),
  loadSkills: () => t.call("POST", "/api/skills", { json: { load_user: "yes" } }),
  executeBashCommand: () => t.call("POST", "/api/bash/execute_bash_command", { json: { command: 7 } }),
};

it("the table names every operation with parameters or a JSON body", () => {
  const validated = Object.values(openapiDocument.paths as Record<string, Record<string, { operationId?: string; parameters?: unknown[]; requestBody?: unknown }>>)
    .flatMap((item) => Object.values(item))
    .filter((op) => op.operationId && ((op.parameters?.length ?? 0) > 0 || op.requestBody))
    .map((op) => op.operationId);
  expect(Object.keys(requests).sort()).toEqual(validated.sort());
});

it("serves the first request of every operation, and the first inbound frame, without compiling a validator", async () => {
  const compile = vi.spyOn(Ajv2020.prototype, "compile");
  try {
    for (const [operationId, send] of Object.entries(requests)) {
      const reply = await send();
      expect(reply.status, operationId).toBeGreaterThanOrEqual(400);
      expect(reply.status, operationId).toBeLessThan(500);
    }
    const created = await t.call("POST", "/api/conversations", { json: { conversation_id: id } });
    expect(created.status).toBeLessThan(300);
    const peer = connectLive(t.url, livePath(id, { resend_all: "true" }), { headers: { "X-Session-API-Key": KEY } });
    await peer.opened;
    peer.send([]);
    await peer.waitFor(1, isErrorFrame);
    peer.ws.close();
    expect(compile).not.toHaveBeenCalled();
  } finally {
    compile.mockRestore();
  }
});
