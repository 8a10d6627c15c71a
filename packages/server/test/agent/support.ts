/**
 * The reference server with its agent runtime (`--runtime agent`) against the agent test kit's
 * scripted OpenAI-compatible LLM (real HTTP on a loopback port), the settings pointing at it, and
 * a live-channel peer per conversation: everything real, nothing of ours mocked.
 */
import { openAiLlmFactory, type AgentRuntimeOptions } from "@acs-toolkit/agent";
import { ScriptedLlmServer, checkTrajectory } from "@acs-toolkit/agent/test-kit";
import { OPENHANDS_RELEASE, type Event } from "@acs-toolkit/schema";
import { readdir, readFile } from "node:fs/promises";
import { expect } from "vitest";
import type { AgentConversationRuntime } from "../../src/llm-agent-runtime.js";
import { KEY, startTestServer, type Reply, type TestServer } from "../support/harness.js";
import { connectLive, isEventFrame, livePath, type Frame, type LivePeer } from "@acs-toolkit/test-kit/live";

export const LLM_KEY = "sk-test-llm-key-9876543210";

export interface AgentServer {
  t: TestServer;
  llm: ScriptedLlmServer;
  peers: LivePeer[];
  /** Stores settings pointing at the scripted LLM (plus `extra`). */
  settings(extra?: Record<string, unknown>): Promise<void>;
  /** Creates a conversation and connects a live peer to it (replaying everything, then live). */
  create(body?: Record<string, unknown>): Promise<{ id: string; peer: LivePeer; reply: Reply }>;
  /**
   * Stops the agent runtime (runs interrupted, as a server stopping does), then checks every
   * conversation the agent ran with the test kit's `checkTrajectory`, then closes everything; fails, after
   * closing, naming each event and field that OpenHands {@link OPENHANDS_RELEASE} would not write.
   * A second call does nothing.
   */
  close(): Promise<void>;
}

export async function startAgentServer(flags: string[] = [], agent: AgentRuntimeOptions = {}): Promise<AgentServer> {
  const llm = await ScriptedLlmServer.start();
  const t = await startTestServer(["--runtime", "agent", ...flags], {}, undefined, {
    agent: { llm: openAiLlmFactory({ initialBackoffMs: 5, maxBackoffMs: 20 }), ...agent },
  });
  const peers: LivePeer[] = [];
  let closed = false;
  const server: AgentServer = {
    t,
    llm,
    peers,
    async settings(extra = {}) {
      const reply = await t.call("POST", "/api/settings", {
        json: { llm_model: "openai/gpt-4o", llm_api_key: LLM_KEY, llm_base_url: llm.url, enable_default_condenser: false, ...extra },
      });
      expect(reply.status, reply.text).toBe(200);
    },
    async create(body = {}) {
      const reply = await t.call("POST", "/api/conversations", { json: body });
      expect(reply.status, reply.text).toBe(200);
      const id = reply.body.conversation_id as string;
      const peer = connectLive(t.url, livePath(id, { resend_all: "true" }), { headers: { "X-Session-API-Key": KEY } });
      await peer.opened;
      peers.push(peer);
      return { id, peer, reply };
    },
    async close() {
      if (closed) return;
      closed = true;
      let violations: string[] = [];
      try {
        violations = await runtimeViolations(t);
      } finally {
        for (const peer of peers) peer.ws.close();
        await t.close();
        await llm.close();
      }
      expect(violations, `trajectories the agent recorded that OpenHands ${OPENHANDS_RELEASE} would not write:\n${violations.join("\n")}`).toEqual([]);
    },
  };
  return server;
}

/** The test kit's `checkTrajectory` of a trajectory as one list: its errors, then its warnings. */
export function releaseViolations(events: readonly Event[]): string[] {
  const report = checkTrajectory(events);
  return [...report.errors, ...report.warnings];
}

/** {@link releaseViolations} of every conversation the agent ran on this server (replays and deleted ones are not its), each line prefixed with the conversation's id. */
async function runtimeViolations(t: TestServer): Promise<string[]> {
  const runtime = t.server.runtime as AgentConversationRuntime;
  // Runs end as when the server stops (paused, an InterruptEvent), so that what that writes is checked too.
  await runtime.close();
  const violations: string[] = [];
  for (const record of await t.server.store.listConversations({ by: "createdAt", order: "asc", limit: 10_000 })) {
    if (!(await runtime.owns(record.id))) continue;
    violations.push(...releaseViolations(await stored(t, record.id)).map((line) => `conversation ${record.id}: ${line}`));
  }
  return violations;
}

/** Frames of `execution_status` updates with this value. */
export const statusFrame = (value: string) => (frame: Frame) => frame.value.kind === "ConversationStateUpdateEvent" && frame.value.key === "execution_status" && frame.value.value === value;

/** Waits for the `count`-th `execution_status` update to `value` on the live channel. */
export async function waitForStatus(peer: LivePeer, value: string, count = 1): Promise<void> {
  await peer.waitFor(count, statusFrame(value), 30_000);
}

/** Every stored event of a conversation, in append order. */
export async function stored(t: TestServer, id: string): Promise<Event[]> {
  const events: Event[] = [];
  for (let after = 0; ; ) {
    const page = await t.server.store.readAfter(id, after, 500);
    events.push(...page.map((event) => JSON.parse(event.json) as Event));
    if (page.length < 500) return events;
    after = page[page.length - 1]!.seq;
  }
}

/**
 * The run's trajectory passes the validator with every sequence rule (strictly, no warning), event
 * search lists exactly what is stored, and the live channel delivered every stored event exactly
 * once, in append order. Returns the stored events.
 */
export async function expectValidRun(t: TestServer, id: string, peer: LivePeer): Promise<Event[]> {
  const events = await stored(t, id);
  const report = checkTrajectory(events);
  expect(report.errors, report.errors.join("\n")).toEqual([]);
  expect(report.warnings, report.warnings.join("\n")).toEqual([]);
  const ids = events.map((event) => event.id);
  await peer.waitFor(ids.length, isEventFrame, 10_000);
  expect(peer.events().map((event: { id: string }) => event.id)).toEqual(ids);
  const listed: string[] = [];
  for (let pageId: string | undefined; ; ) {
    const page = await t.call("GET", `/api/conversations/${id}/events/search`, { query: { limit: 100, ...(pageId && { page_id: pageId }) } });
    listed.push(...(page.body.items as Event[]).map((event) => event.id));
    if (!(pageId = page.body.next_page_id)) break;
  }
  expect(listed).toEqual(ids);
  return events;
}

/** `Kind` or `Kind:detail` per event, state updates as `status:<value>` (others left out). */
export function timeline(events: readonly Event[]): string[] {
  return events.flatMap((event) => {
    if (event.kind === "ConversationStateUpdateEvent") return event.key === "execution_status" ? [`status:${String(event.value)}`] : [];
    if (event.kind === "ActionEvent") return [`ActionEvent:${event.tool_name}`];
    if (event.kind === "ObservationEvent") return [`ObservationEvent:${event.observation.kind}`];
    if (event.kind === "MessageEvent") return [`MessageEvent:${event.source}`];
    return [event.kind];
  });
}

/** Pids of processes whose command line contains `marker`. */
export async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmdline.split("\0").join(" ").includes(marker)) found.push(Number(pid));
  }
  return found;
}

/**
 * Waits until exactly `count` processes have `marker` in their command line, and answers their
 * PIDs: a command's answer can come back before the processes it left in the background were
 * forked and exec'd.
 */
export async function untilProcesses(marker: string, count: number): Promise<number[]> {
  await expect.poll(() => processesWith(marker), { timeout: 10_000, interval: 50 }).toHaveLength(count);
  return processesWith(marker);
}

/** Waits until no process has `marker` in its command line (the kernel reaps a PID namespace asynchronously). */
export async function expectGone(marker: string): Promise<void> {
  await expect.poll(() => processesWith(marker), { timeout: 5_000, interval: 50 }).toEqual([]);
}

