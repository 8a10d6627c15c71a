/**
 * The agent runtime inside the server: its cost per step with the store, validation and the live
 * channel included, the LLM's time excluded. The scripted LLM runs in this process and answers
 * every request at once with a `think` call (an endless agent), so the gap between two consecutive
 * LLM requests is one step of the server: record the ActionEvent, run the tool, record the
 * ObservationEvent (each validated, stored in SQLite, pushed to a live subscriber), rebuild the
 * history from the stored events, send the next request. Two passes: one conversation of STEPS
 * steps (median and p99 of the gap), then CONVERSATIONS at once (steps per second and the largest
 * event-loop delay, beside the same loop idle just before).
 *
 *   pnpm exec tsx bench/agent-steps.bench.ts [--smoke]      (from packages/server, after pnpm build)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { openAiLlmFactory } from "@acs-toolkit/agent";
import { ScriptedLlmServer } from "@acs-toolkit/agent/test-kit";
import { WebSocket } from "ws";
import { parseConfig } from "../src/config.js";
import { createLogger } from "../src/log.js";
import { startServer } from "../src/server.js";

const smoke = process.argv.includes("--smoke");
const STEPS = smoke ? 30 : 200;
const CONVERSATIONS = smoke ? 5 : 20;
const CONCURRENT_STEPS = smoke ? 10 : 30;
const KEY = "bench-agent-key";

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (value: number) => Number(value.toFixed(2));

const arrivals = new Map<string, number[]>();
let counter = 0;
const llm = await ScriptedLlmServer.start({
  keepRequests: false,
  fallback: (request) => {
    const conversation = JSON.stringify((request.body.messages as Array<{ content: unknown }>)[1]?.content ?? "");
    const list = arrivals.get(conversation) ?? [];
    list.push(performance.now());
    arrivals.set(conversation, list);
    return { toolCalls: [{ name: "think", arguments: { thought: `step ${counter++}` } }] };
  },
});
const dataDir = mkdtempSync(path.join(tmpdir(), "acs-agent-bench-"));
const server = await startServer(parseConfig(["--port", "0", "--data-dir", dataDir, "--runtime", "agent"], {}), {
  env: { SESSION_API_KEY: KEY },
  log: createLogger("silent"),
  agent: { llm: openAiLlmFactory() },
});
const headers = { "X-Session-API-Key": KEY, "Content-Type": "application/json" };
const post = async (route: string, body: unknown) => (await fetch(new URL(route, server.url), { method: "POST", headers, body: JSON.stringify(body) })).json();

async function conversation(name: string, steps: number): Promise<void> {
  await post("/api/settings", { llm_model: "openai/bench", llm_api_key: "sk-bench", llm_base_url: llm.url, enable_default_condenser: false, max_iterations: steps });
  const { conversation_id: id } = await post("/api/conversations", {});
  const ws = new WebSocket(`${server.url.replace("http", "ws")}/sockets/events/${id}`, { headers: { "X-Session-API-Key": KEY } });
  const done = new Promise<void>((resolve) => ws.on("message", (data) => String(data).includes('"MaxIterationsReached"') && resolve()));
  await new Promise((resolve) => ws.once("open", resolve));
  await post(`/api/conversations/${id}/events`, { role: "user", content: [{ type: "text", text: name }], run: true });
  await done;
  ws.close();
}

// 1. One conversation: the gap between consecutive LLM requests.
await conversation("warm-up", 5);
await conversation("single", STEPS);
const single = [...arrivals].find(([key]) => key.includes('"single"') || key === JSON.stringify("single"))![1];
const gaps = single.slice(1).map((at, index) => at - single[index]!).sort((a, b) => a - b);

// 2. Many at once: throughput and event-loop delay, beside the idle loop.
const idle = monitorEventLoopDelay({ resolution: 5 });
idle.enable();
await new Promise((resolve) => setTimeout(resolve, 1_000));
idle.disable();
const busy = monitorEventLoopDelay({ resolution: 5 });
busy.enable();
const started = performance.now();
await Promise.all(Array.from({ length: CONVERSATIONS }, (_, n) => conversation(`c${n}`, CONCURRENT_STEPS)));
const seconds = (performance.now() - started) / 1000;
busy.disable();

const figures = {
  steps: gaps.length,
  step_p50_ms: ms(percentile(gaps, 50)),
  step_p99_ms: ms(percentile(gaps, 99)),
  conversations: CONVERSATIONS,
  steps_per_second: Number(((CONVERSATIONS * CONCURRENT_STEPS) / seconds).toFixed(1)),
  max_event_loop_delay_ms: ms(busy.max / 1e6),
  p99_event_loop_delay_ms: ms(busy.percentile(99) / 1e6),
  idle_max_event_loop_delay_ms: ms(idle.max / 1e6),
  load_average: Number(loadavg()[0]!.toFixed(2)),
};
console.log(JSON.stringify(figures));
await server.close();
await llm.close();
rmSync(dataDir, { recursive: true, force: true });
