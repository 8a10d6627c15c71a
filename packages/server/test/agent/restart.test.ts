/**
 * A server killed (SIGKILL) while the agent runs a command, then started again on the same data
 * directory: the conversation is marked as the agent server marks it (openhands-versions §2 #7:
 * execution_status error, an AgentErrorEvent for the unanswered action, no ConversationErrorEvent),
 * no event recorded before the kill is lost, and the conversation can run again.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ScriptedLlmServer, checkTrajectory } from "@acs-toolkit/agent/test-kit";
import type { Event } from "@acs-toolkit/schema";
import { afterAll, expect, it, vi } from "vitest";
import { KEY } from "../support/harness.js";
import { exited, spawnServer, type ServerProcess } from "../support/process.js";
import { LLM_KEY } from "./support.js";

let llm: ScriptedLlmServer;
let dataDir: string;
const children: ServerProcess[] = [];

afterAll(async () => {
  for (const child of children) if (child.process.exitCode === null) child.process.kill("SIGKILL");
  await llm?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function call(url: string, method: string, route: string, json?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(new URL(route, url), {
    method,
    headers: { "X-Session-API-Key": KEY, ...(json !== undefined && { "Content-Type": "application/json" }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return { status: response.status, body: await response.json() };
}

async function events(url: string, id: string): Promise<Event[]> {
  const all: Event[] = [];
  for (let pageId: string | undefined; ; ) {
    const page = await call(url, "GET", `/api/conversations/${id}/events/search?limit=100${pageId ? `&page_id=${encodeURIComponent(pageId)}` : ""}`);
    all.push(...page.body.items);
    if (!(pageId = page.body.next_page_id)) return all;
  }
}

async function start(): Promise<ServerProcess> {
  const child = await spawnServer(dataDir, { flags: ["--runtime", "agent"] });
  children.push(child);
  return child;
}

it("a restart during a command: execution_status error, an AgentErrorEvent for the cut action, no event lost; run goes on", async () => {
  llm = await ScriptedLlmServer.start();
  dataDir = await mkdtemp(path.join(tmpdir(), "acs-agent-restart-"));
  llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "sleep 30", timeout: 60 } }] });
  const first = await start();
  expect((await call(first.url, "POST", "/api/settings", { llm_model: "openai/gpt-4o", llm_api_key: LLM_KEY, llm_base_url: llm.url, enable_default_condenser: false })).status).toBe(200);
  const created = await call(first.url, "POST", "/api/conversations", { initial_user_msg: "Sleep" });
  const id = created.body.conversation_id as string;
  await vi.waitFor(async () => expect((await events(first.url, id)).some((event) => event.kind === "ActionEvent")).toBe(true), { timeout: 20_000, interval: 50 });
  const before = await events(first.url, id);

  first.process.kill("SIGKILL");
  await exited(first.process);

  llm.play({ text: "Woke up again." });
  const second = await start();
  const info = await call(second.url, "GET", `/api/conversations/${id}`);
  expect(info.body).toMatchObject({ status: "ERROR", execution_status: "error" });
  const after = await events(second.url, id);
  expect(after.slice(0, before.length)).toEqual(before);
  const added = after.slice(before.length);
  expect(added.map((event) => (event.kind === "ConversationStateUpdateEvent" ? `${event.key}:${String(event.value)}` : event.kind))).toEqual([
    "conversation_status:STARTING", // the agent reopens it
    "execution_status:error",
    "conversation_status:ERROR",
    "AgentErrorEvent",
  ]);
  const action = before.find((event) => event.kind === "ActionEvent")!;
  expect(added[3]).toMatchObject({ kind: "AgentErrorEvent", tool_call_id: (action as { tool_call_id: string }).tool_call_id });
  expect((added[3] as { error: string }).error).toContain("A restart occurred while this tool was in progress");
  expect(after.some((event) => event.kind === "ConversationErrorEvent")).toBe(false);

  // The conversation is the agent's after the restart: run resumes it from its stored history.
  expect((await call(second.url, "POST", `/api/conversations/${id}/run`)).body).toEqual({ success: true });
  await vi.waitFor(async () => expect((await call(second.url, "GET", `/api/conversations/${id}`)).body.execution_status).toBe("finished"), { timeout: 20_000, interval: 50 });
  const trajectory = await events(second.url, id);
  const report = checkTrajectory(trajectory);
  expect(report.errors, report.errors.join("\n")).toEqual([]);
  expect(report.warnings, report.warnings.join("\n")).toEqual([]);
  second.process.kill("SIGTERM");
  expect(await exited(second.process)).toBe(0);
});
