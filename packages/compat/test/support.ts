/**
 * What the real clients run against: the reference server and the mock, each in this process on an
 * ephemeral loopback port with real sockets, and a recorded conversation in each, created through
 * the API (`replay_json`) as a user would.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { LIVE_ONLY_EVENT_KINDS, type Event } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { DEFAULT_MOCK_KEY, startMock } from "@acs-toolkit/mock";
import { createLogger, parseConfig, startServer } from "@acs-toolkit/server";
import { expect, vi } from "vitest";

export interface Target {
  name: string;
  url: string;
  key: string;
  close(): Promise<void>;
}

const SERVER_KEY = "compat-test-key-0123456789";

async function startReference(): Promise<Target> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "acs-compat-"));
  const server = await startServer(parseConfig(["--port", "0", "--data-dir", dataDir], {}), {
    env: { SESSION_API_KEY: SERVER_KEY },
    log: createLogger("silent"),
    shutdownGraceMs: 1_000,
  });
  return {
    name: "the reference server",
    url: server.url,
    key: SERVER_KEY,
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The mock at its default, real-time pace: its scripted agent runs conversations as they are created. */
async function startTheMock(): Promise<Target> {
  const mock = await startMock({ port: 0, logLevel: "silent", scenarios: [] });
  return { name: "the mock", url: mock.url, key: DEFAULT_MOCK_KEY, close: () => mock.close() };
}

export const TARGETS = [startReference, startTheMock];

/** A JSON request with the key. */
export async function call(target: Target, method: string, route: string, json?: unknown): Promise<any> {
  const response = await fetch(new URL(route, target.url), {
    method,
    headers: { "X-Session-API-Key": target.key, ...(json !== undefined && { "Content-Type": "application/json" }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`${method} ${route} → ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/** The word the body filters look for (in one user message). */
export const WORD = "zephyr";

const text = (value: string) => ({ cache_prompt: false, type: "text" as const, text: value });

/**
 * A recording as an agent server stores it (no live-only kinds): every other kind of the catalogue,
 * a user message holding WORD, and at the end the agent's last state updates: `execution_status`
 * finished and its `stats` (the snapshot form the SDK records).
 */
export function recording(seed: number): Event[] {
  const events = exampleEvents({ seed }).filter((event) => !(LIVE_ONLY_EVENT_KINDS as readonly string[]).includes(event.kind));
  const last = events.at(-1)!.timestamp;
  const later = (ms: number) => new Date(Date.parse(`${last}Z`) + ms).toISOString().replace("Z", "");
  events.push(
    { id: randomUUID(), timestamp: later(1), source: "user", llm_message: { role: "user", content: [text(`Check the ${WORD.toUpperCase()} module`)], thinking_blocks: [] }, activated_skills: [], extended_content: [], kind: "MessageEvent" } as Event,
    { id: randomUUID(), timestamp: later(2), source: "environment", key: "stats", value: { usage_to_metrics: { agent: STATS_SNAPSHOT } }, kind: "ConversationStateUpdateEvent" } as Event,
    { id: randomUUID(), timestamp: later(3), source: "environment", key: "execution_status", value: "finished", kind: "ConversationStateUpdateEvent" } as Event,
  );
  return events;
}

export const STATS_SNAPSHOT = {
  model_name: "anthropic/claude-sonnet-4-5-20250929",
  accumulated_cost: 0.0421,
  max_budget_per_task: null,
  accumulated_token_usage: { model: "anthropic/claude-sonnet-4-5-20250929", prompt_tokens: 5120, completion_tokens: 233, cache_read_tokens: 4096, cache_write_tokens: 0, reasoning_tokens: 0, context_window: 200000, per_turn_token: 5353, response_id: "" },
};

/**
 * Creates a conversation holding `events` and waits until the implementation's own start is over
 * (the mock's agent moves a new conversation from STARTING to RUNNING, recording it), so that what
 * the conversation holds no longer changes on its own.
 */
export async function createConversation(target: Target, events: Event[]): Promise<string> {
  const created = await call(target, "POST", "/api/conversations", { replay_json: events.map((e) => JSON.stringify(e)).join("\n") });
  const id = created.conversation_id as string;
  await vi.waitFor(async () => expect((await call(target, "GET", `/api/conversations/${id}`)).status).not.toBe("STARTING"), { timeout: 10_000, interval: 20 });
  return id;
}

/** Every event of a conversation, ascending (all pages). */
export async function listing(target: Target, id: string): Promise<Event[]> {
  const events: Event[] = [];
  for (let pageId: string | null | undefined; ; ) {
    const page = await call(target, "GET", `/api/conversations/${id}/events/search?limit=100${pageId ? `&page_id=${encodeURIComponent(pageId)}` : ""}`);
    events.push(...page.items);
    if (!(pageId = page.next_page_id)) return events;
  }
}
