/**
 * @openhands/typescript-client (pinned 1.39.0) driving the agent: the reference server with its agent
 * runtime (`--runtime agent`) and the agent test kit's scripted OpenAI-compatible LLM. The client's
 * own calls: start (its StartConversationRequest, or an existing id), send a message, run, pause,
 * respond to a confirmation, execution status, stats, the title, search, count and delete.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { openAiLlmFactory } from "@acs-toolkit/agent";
import { ScriptedLlmServer, checkTrajectory, gate } from "@acs-toolkit/agent/test-kit";
import { createLogger, parseConfig, startServer, type RunningServer } from "@acs-toolkit/server";
import { ConversationExecutionStatus, RemoteConversation, RemoteWorkspace, type Agent } from "@openhands/typescript-client";
import { ConversationClient } from "@openhands/typescript-client/clients";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { call, listing, type Target } from "./support.js";

const KEY = "compat-agent-key-0123456789";
let llm: ScriptedLlmServer;
let server: RunningServer;
let dataDir: string;
let target: Target;

beforeAll(async () => {
  llm = await ScriptedLlmServer.start();
  dataDir = await mkdtemp(path.join(tmpdir(), "acs-compat-agent-"));
  server = await startServer(parseConfig(["--port", "0", "--data-dir", dataDir, "--runtime", "agent"], {}), {
    env: { SESSION_API_KEY: KEY },
    log: createLogger("silent"),
    shutdownGraceMs: 1_000,
    agent: { llm: openAiLlmFactory({ initialBackoffMs: 5, maxBackoffMs: 20 }) },
  });
  target = { name: "the reference server (agent runtime)", url: server.url, key: KEY, close: async () => {} };
});
afterAll(async () => {
  await server?.close();
  await llm?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function openConversation(settings: Record<string, unknown> = {}): Promise<{ id: string; conversation: RemoteConversation }> {
  await call(target, "POST", "/api/settings", { llm_model: "openai/gpt-4o", llm_api_key: "sk-compat", llm_base_url: llm.url, enable_default_condenser: false, ...settings });
  const created = await call(target, "POST", "/api/conversations", {});
  const id = created.conversation_id as string;
  await vi.waitFor(async () => expect((await call(target, "GET", `/api/conversations/${id}`)).status).toBe("RUNNING"), { timeout: 10_000, interval: 20 });
  const workspace = new RemoteWorkspace({ host: target.url, workingDir: "/workspace", apiKey: KEY });
  const conversation = new RemoteConversation({} as Agent, workspace, { conversationId: id });
  await conversation.start(); // an existing id: GET /api/conversations/{id}
  return { id, conversation };
}

/** The execution status as the client reads it, past its cache of ConversationInfo. */
async function statusOf(conversation: RemoteConversation): Promise<ConversationExecutionStatus> {
  await conversation.state.refresh();
  return conversation.state.getExecutionStatus();
}

it("sendMessage, run, pause, run again: the client reads idle, paused, finished and the stats", async () => {
  const { id, conversation } = await openConversation();
  expect(await statusOf(conversation)).toBe(ConversationExecutionStatus.IDLE);
  const held = gate();
  llm.play({ hold: held.promise, toolCalls: [{ name: "think", arguments: { thought: "slowly" } }] }, { text: "Done." });

  await conversation.sendMessage("Think, then answer"); // run: false
  expect(llm.requests).toHaveLength(0);
  await conversation.run();
  await vi.waitFor(() => expect(llm.requests).toHaveLength(1), { timeout: 10_000, interval: 10 });
  expect(await statusOf(conversation)).toBe(ConversationExecutionStatus.RUNNING);
  await expect(conversation.run()).rejects.toMatchObject({ status: 409 });
  const pausing = conversation.pause(); // answers once the step has ended
  setTimeout(() => held.open(), 100);
  await pausing;
  expect(await statusOf(conversation)).toBe(ConversationExecutionStatus.PAUSED);

  await conversation.run();
  await vi.waitFor(async () => expect(await statusOf(conversation)).toBe(ConversationExecutionStatus.FINISHED), { timeout: 10_000, interval: 20 });
  const stats = await conversation.conversationStats();
  expect((stats as unknown as { usage_to_metrics: Record<string, unknown> }).usage_to_metrics.agent).toMatchObject({ model_name: "openai/gpt-4o", accumulated_token_usage: { prompt_tokens: 200, completion_tokens: 40 } });
  const report = checkTrajectory(await listing(target, id));
  expect(report.errors, report.errors.join("\n")).toEqual([]);
  expect(report.warnings, report.warnings.join("\n")).toEqual([]);
});

it("sendConfirmationResponse approves and rejects held actions", async () => {
  const { id, conversation } = await openConversation({ confirmation_mode: true });
  const requests = llm.requests.length;
  llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "echo one" } }] }, { toolCalls: [{ name: "terminal", arguments: { command: "echo two" } }] });
  await conversation.sendMessage("Go");
  await conversation.run();
  await vi.waitFor(async () => expect(await statusOf(conversation)).toBe(ConversationExecutionStatus.WAITING_FOR_CONFIRMATION), { timeout: 10_000, interval: 20 });
  await conversation.sendConfirmationResponse(true);
  await vi.waitFor(async () => expect(await statusOf(conversation)).toBe(ConversationExecutionStatus.WAITING_FOR_CONFIRMATION), { timeout: 10_000, interval: 20 });
  await vi.waitFor(() => expect(llm.requests.length).toBe(requests + 2), { timeout: 10_000, interval: 20 });
  await conversation.sendConfirmationResponse(false, "No second thought.");
  await vi.waitFor(async () => expect(await statusOf(conversation)).toBe(ConversationExecutionStatus.IDLE), { timeout: 10_000, interval: 20 });
  const events = await listing(target, id);
  expect(events.filter((event) => event.kind === "ObservationEvent")).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ kind: "UserRejectObservation", rejection_reason: "No second thought." });
  const report = checkTrajectory(events);
  expect(report.errors, report.errors.join("\n")).toEqual([]);
});

it("a whole lifecycle through the agent server's routes: start, send, run, pause, events, title, search, count, delete", async () => {
  await call(target, "POST", "/api/settings", { llm_model: "openai/gpt-4o", llm_api_key: "sk-compat", llm_base_url: llm.url, enable_default_condenser: false });
  const asked = llm.requests.length; // the LLM's requests of the tests before
  const workspace = new RemoteWorkspace({ host: target.url, workingDir: "/workspace/project", apiKey: KEY });
  // The client's own start: a StartConversationRequest with the agent, its workspace and the first message.
  const conversation = new RemoteConversation({ kind: "Agent", llm: { model: "openai/gpt-4o" } } as unknown as Agent, workspace);
  await conversation.start({ initialMessage: "Say hello" }); // its initial message has no run: recorded, not run
  const id = conversation.id;
  expect(await statusOf(conversation)).toBe(ConversationExecutionStatus.IDLE);
  expect(llm.requests).toHaveLength(asked);

  const held = gate();
  llm.play({ hold: held.promise, toolCalls: [{ name: "think", arguments: { thought: "first" } }] }, { text: "Hello from the lifecycle." });
  await conversation.run();
  await vi.waitFor(() => expect(llm.requests).toHaveLength(asked + 1), { timeout: 10_000, interval: 10 });
  const pausing = conversation.pause();
  held.open();
  await pausing;
  expect(await statusOf(conversation)).toBe(ConversationExecutionStatus.PAUSED);
  await conversation.sendMessage("Go on");
  await conversation.run();
  await vi.waitFor(async () => expect(await statusOf(conversation)).toBe(ConversationExecutionStatus.FINISHED), { timeout: 10_000, interval: 20 });

  const events = await listing(target, id);
  const messages = events.filter((event) => event.kind === "MessageEvent").map((event) => JSON.stringify(event));
  expect(messages.join("\n")).toContain("Say hello");
  expect(messages.join("\n")).toContain("Hello from the lifecycle.");
  const report = checkTrajectory(events);
  expect(report.errors, report.errors.join("\n")).toEqual([]);

  await conversation.setTitle("The lifecycle");
  const client = new ConversationClient({ host: target.url, apiKey: KEY });
  const page = await client.searchConversations({ limit: 100 } as never);
  expect((page as unknown as { items: Array<{ id: string; title: string | null }> }).items).toContainEqual(expect.objectContaining({ id, title: "The lifecycle" }));
  const before = await client.countConversations();
  await client.deleteConversation(id);
  expect(await client.countConversations()).toBe(before - 1);
  await expect(conversation.state.refresh()).rejects.toMatchObject({ status: 404 });
});
