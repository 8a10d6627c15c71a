/**
 * Several `acs-server --runtime agent` processes (the built bin) on one scratch PostgreSQL database
 * and one shared data directory (the deployment the README describes), with the same keys, and one
 * scripted OpenAI-compatible LLM (a real HTTP server in the test process) that the stored settings
 * point every instance at: everything real, nothing of ours mocked.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ScriptedLlmServer } from "@acs-toolkit/agent/test-kit";
import type { Event } from "@acs-toolkit/schema";
import { httpCaller, type Call } from "@acs-toolkit/test-kit/http";
import { expect, vi } from "vitest";
import { KEY } from "../support/harness.js";
import { adminQuery, createScratchDatabase, type ScratchDatabase } from "../support/postgres.js";
import { exited, spawnServer, type ServerProcess } from "../support/process.js";
import { LLM_KEY } from "./support.js";

export interface Instance extends ServerProcess {
  call: Call;
}

export interface Cluster {
  db: ScratchDatabase;
  dataDir: string;
  llm: ScriptedLlmServer;
  instances: Instance[];
  /** Starts one more instance on the database and data directory (`flags` after the cluster's). */
  start(flags?: string[]): Promise<Instance>;
  /** Stores settings pointing at the scripted LLM, through `through` (default the first instance). */
  settings(through?: Instance): Promise<void>;
  /** Every stored event of a conversation, in append order, as the database has them. */
  stored(id: string): Promise<Event[]>;
  /** The instance (its index in `instances`) whose process holds the conversation's lease, read from the database. */
  owner(id: string): Promise<string | null>;
  close(): Promise<void>;
}

/**
 * Starts `count` instances. `ttlMs`: the agents' lease time to live (short, so that a takeover
 * comes soon); `forwardTimeoutMs`: how long a control waits for the owner to take it.
 */
export async function startCluster(count: number, options: { ttlMs?: number; forwardTimeoutMs?: number } = {}): Promise<Cluster> {
  const db = await createScratchDatabase();
  const dataDir = await mkdtemp(path.join(tmpdir(), "acs-agent-cluster-"));
  const llm = await ScriptedLlmServer.start();
  const env = { SESSION_API_KEY: KEY, ACS_SECRET_KEY: randomBytes(32).toString("hex") };
  const flags = ["--runtime", "agent", "--store", db.url, "--lease-ttl-ms", String(options.ttlMs ?? 3_000), "--forward-timeout-ms", String(options.forwardTimeoutMs ?? 3_000)];
  const instances: Instance[] = [];
  const cluster: Cluster = {
    db,
    dataDir,
    llm,
    instances,
    async start(extra = []) {
      const child = await spawnServer(dataDir, { env, flags: [...flags, ...extra] });
      const instance = { ...child, call: httpCaller(child.url, KEY) };
      instances.push(instance);
      return instance;
    },
    async settings(through = instances[0]!) {
      const reply = await through.call("POST", "/api/settings", { json: { llm_model: "openai/gpt-4o", llm_api_key: LLM_KEY, llm_base_url: llm.url, enable_default_condenser: false } });
      expect(reply.status, reply.text).toBe(200);
    },
    async stored(id) {
      const rows = await adminQuery<{ json: string }>("select e.json from acs.events e join acs.conversations c on c.pk = e.conv where c.id = $1 order by e.seq", [id], db.url);
      return rows.map((row) => JSON.parse(row.json) as Event);
    },
    async owner(id) {
      const [row] = await adminQuery<{ owner: string | null }>("select owner from acs.agent_leases where conversation_id = $1", [id], db.url);
      return row?.owner ?? null;
    },
    async close() {
      for (const instance of instances) {
        if (instance.process.exitCode !== null || instance.process.signalCode !== null) continue;
        instance.process.kill("SIGCONT");
        instance.process.kill("SIGKILL");
        await exited(instance.process);
      }
      await llm.close();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
  for (let i = 0; i < count; i++) await cluster.start();
  return cluster;
}

/** Creates a conversation through `instance` (with `body`), answered 200. */
export async function createConversation(instance: Instance, body: Record<string, unknown> = {}): Promise<string> {
  const reply = await instance.call("POST", "/api/conversations", { json: body });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.conversation_id as string;
}

/** Waits until the conversation's `execution_status`, read through `instance`, is `status`. */
export async function waitForExecution(instance: Instance, id: string, status: string, timeout = 30_000): Promise<void> {
  await vi.waitFor(
    async () => {
      const info = await instance.call("GET", `/api/conversations/${id}`);
      expect(info.body?.execution_status).toBe(status);
    },
    { timeout, interval: 50 },
  );
}

/** `key:value` of each state update, the kind of every other event. */
export const kinds = (events: readonly Event[]) => events.map((event) => (event.kind === "ConversationStateUpdateEvent" ? `${event.key}:${JSON.stringify(event.value)}` : event.kind));

/**
 * How many times an agent opened the conversation again (a reopen reports STARTING; the first open
 * does not: the conversation is created STARTING). One agent kept open on its owner: none.
 */
export const reopens = (events: readonly Event[]) => kinds(events).filter((kind) => kind === 'conversation_status:"STARTING"').length;

/** The user message a client sends. */
export const userMessage = (text: string, run = false) => ({ role: "user", content: [{ type: "text", text }], run });
