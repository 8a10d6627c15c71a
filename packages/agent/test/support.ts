/**
 * Shared set-up of the conversation tests: a scripted LLM server on a loopback port, an in-memory
 * host whose settings point at it, and a runtime with the real sandbox, tools and LLM client.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, expect } from "vitest";
import { AgentRuntime, openAiLlmFactory, type AgentConversation, type AgentRuntimeOptions, type AgentSettings } from "../src/index.js";
import { MemoryHost, ScriptedLlmServer, checkTrajectory, type MemoryHostOptions } from "../src/test-kit/index.js";

/** The repository root: the sandbox shows it read-only so that Node finds the test MCP server's modules. */
const REPO_ROOT = path.resolve(fileURLToPath(new URL("../../..", import.meta.url)));
export const API_KEY = "sk-test-agent-key-0123456789";

export interface Harness {
  llm: ScriptedLlmServer;
  host: MemoryHost;
  runtime: AgentRuntime;
  conversation: AgentConversation;
  /** Closes everything and removes the workspace. */
  close(): Promise<void>;
}

export async function harness(
  options: { settings?: AgentSettings; runtime?: AgentRuntimeOptions; host?: MemoryHostOptions; llm?: ScriptedLlmServer } = {},
): Promise<Harness> {
  const llm = options.llm ?? (await ScriptedLlmServer.start());
  const host = new MemoryHost({
    ...options.host,
    settings: { llm_model: "openai/gpt-4o", llm_api_key: API_KEY, llm_base_url: llm.url, enable_default_condenser: false, ...options.settings },
  });
  const runtime = new AgentRuntime({ llm: openAiLlmFactory({ initialBackoffMs: 5, maxBackoffMs: 20 }), readOnlyPaths: [REPO_ROOT], ...options.runtime });
  const conversation = await runtime.open(host);
  return {
    llm,
    host,
    runtime,
    conversation,
    async close() {
      await runtime.close();
      await llm.close();
      rmSync(host.workspaceDir, { recursive: true, force: true });
    },
  };
}

/**
 * A harness per test: `start(options)` makes one, and it is closed after the test.
 * @example const start = useHarness(); it("…", async () => { const h = await start(); … });
 */
export function useHarness(): (options?: Parameters<typeof harness>[0]) => Promise<Harness> {
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });
  return async (options) => {
    const h = await harness(options);
    open.push(h);
    return h;
  };
}

/** Every recorded event valid, the trajectory passing every sequence rule, no warning left. */
export function expectValidTrajectory(host: MemoryHost): void {
  expect(host.rejected).toEqual([]);
  const report = checkTrajectory(host.events);
  expect(report.errors).toEqual([]);
  expect(report.warnings).toEqual([]);
}

/** The kinds of the recorded events, state updates shown as `status:<value>` (stats left out). */
export function timeline(host: MemoryHost): string[] {
  return host.events.flatMap((event) => {
    if (event.kind === "ConversationStateUpdateEvent") return event.key === "execution_status" ? [`status:${String(event.value)}`] : [];
    if (event.kind === "ActionEvent") return [`ActionEvent:${event.tool_name}${event.action ? "" : "(no action)"}`];
    if (event.kind === "ObservationEvent") return [`ObservationEvent:${event.observation.kind}`];
    if (event.kind === "MessageEvent") return [`MessageEvent:${event.source}`];
    return [event.kind];
  });
}

/**
 * A command that writes `started.flag` from the process an interrupt must stop, once it is the
 * terminal's foreground job: when the flag exists, a Ctrl-C reaches it (a flag written by an
 * earlier command of the line, `touch`, may be seen while that command is still the foreground job,
 * and the Ctrl-C stops it instead). SIGINT's default action: no traceback, status 130.
 */
export const FOREGROUND_WAIT =
  "import signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL); open('started.flag', 'w').close(); time.sleep(600)";
