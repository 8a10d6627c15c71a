/**
 * The agent runtime's own cost per step, the LLM's time excluded, against the scripted LLM served
 * from another process:
 *
 * 1. One conversation of `STEPS` think steps: for each action/observation pair, the wall time from
 *    the previous observation to this one minus the time spent inside the LLM call (HTTP round trip
 *    to the scripted server included). Median and p99 beside the LLM round trip itself (the peer).
 *    The history grows with every step, so later steps rebuild longer histories.
 * 2. Twenty conversations at once (a terminal command every fifth step, in the bubblewrap sandbox)
 *    on this machine's cores, after a warm-up conversation: the largest event-loop delay
 *    (`monitorEventLoopDelay`) beside the largest delay of the same loop left idle just before (the
 *    machine's own scheduling noise: other processes share the two cores), and steps per second.
 *    Twice: with the LLM answering in 250 ms (a fast model; the target applies here), and at once
 *    (the runtime saturated: its throughput, and the delay a saturated loop shows). Then once more
 *    at 250 ms beside a hostile model: two more conversations leave `BURNERS` busy loops each in
 *    the background, every one in a session of its own (`setsid`), so that the cores are taken.
 *
 * 3. The sandbox's cost: a command (`true`, `ls`) run through the terminal tool in the bubblewrap
 *    sandbox (user namespace, no capabilities, limits) against the same command in a shell on the
 *    host (`hostExecution`), median of `COMMANDS` runs each, alternated; and the start of the
 *    conversation's shell (the sandbox set up once per shell) against a shell started on the host.
 *
 * The host is the test kit's in-memory one (validation of every event included, as the reference
 * server validates), so the figures are the runtime's, not a store's. `--smoke`: a short pass.
 * Figures are printed and appended as JSON lines to `ACS_BENCH_RESULTS` when set.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { BenchFigure } from "../../../tools/src/bench-report.js";
import path from "node:path";
import type { TerminalObservation } from "@acs-toolkit/schema";
import { AgentRuntime, bubblewrapSandbox, hostExecution, openAiLlmFactory, SecretMasker, type LlmFactory, type Sandbox } from "../src/index.js";
import { Spawner } from "../src/sandbox/spawner.js";
import { terminalTool } from "../src/tools/terminal.js";
import { MemoryHost, userText } from "../src/test-kit/index.js";

const smoke = process.argv.includes("--smoke");
const STEPS = smoke ? 20 : 200;
const CONVERSATIONS = smoke ? 5 : 20;
const CONCURRENT_STEPS = smoke ? 5 : 30;
const SUITE = "agent runtime";
/** The hostile model's first message, and how many busy loops each of its two conversations leaves. */
const BURN = "Burn every core.";
const BURNERS = smoke ? 2 : 4;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const round = (value: number, digits = 3) => Number(value.toFixed(digits));

type Figure = Omit<BenchFigure, "suite">;
const figures: Figure[] = [];
function report(figure: Figure): void {
  figures.push(figure);
  if (process.env.ACS_BENCH_RESULTS) appendFileSync(process.env.ACS_BENCH_RESULTS, `${JSON.stringify({ suite: SUITE, ...figure })}\n`);
}

async function startLlm(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const script = fileURLToPath(new URL("./llm-process.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  const [line] = await new Promise<string[]>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (first) => resolve([first]));
    child.once("exit", (code) => reject(new Error(`the LLM process exited (${code})`)));
  });
  return { url: line!, child };
}

/** An LLM factory that notes when each call starts and ends. */
function timedLlm(calls: Array<{ start: number; end: number }>): LlmFactory {
  const inner = openAiLlmFactory();
  return (config) => {
    const llm = inner(config);
    return {
      model: llm.model,
      async complete(request) {
        const start = performance.now();
        try {
          return await llm.complete(request);
        } finally {
          calls.push({ start, end: performance.now() });
        }
      },
    };
  };
}

/** A MemoryHost that notes when each observation is recorded. */
class TimedHost extends MemoryHost {
  readonly observedAt: number[] = [];
  override async record(events: Parameters<MemoryHost["record"]>[0]): Promise<void> {
    await super.record(events);
    for (const event of events) if (event.kind === "ObservationEvent") this.observedAt.push(performance.now());
  }
}

async function stepOverhead(): Promise<void> {
  const llm = await startLlm({ STEPS: String(STEPS) });
  const calls: Array<{ start: number; end: number }> = [];
  const runtime = new AgentRuntime({ llm: timedLlm(calls) });
  const host = new TimedHost({ settings: { llm_model: "openai/bench", llm_base_url: llm.url, enable_default_condenser: false, max_iterations: STEPS + 10 } });
  try {
    const conversation = await runtime.open(host);
    await conversation.sendMessage(userText("Think, step after step."), { run: true });
    await conversation.idle();
    if (conversation.executionStatus !== "finished") throw new Error(`the conversation ended ${conversation.executionStatus}`);
    const overheads: number[] = [];
    const llmTimes: number[] = [];
    for (let k = 1; k < host.observedAt.length; k++) {
      const from = host.observedAt[k - 1]!;
      const to = host.observedAt[k]!;
      const inside = calls.filter((call) => call.start >= from && call.end <= to).reduce((sum, call) => sum + (call.end - call.start), 0);
      overheads.push(to - from - inside);
      llmTimes.push(inside);
    }
    overheads.sort((a, b) => a - b);
    llmTimes.sort((a, b) => a - b);
    const peer = { name: "scripted LLM round trip p50", value: round(percentile(llmTimes, 50)), unit: "ms" };
    const p50 = percentile(overheads, 50);
    const p99 = percentile(overheads, 99);
    report({ name: `step overhead p50 (action/observation pair, ${overheads.length} steps)`, value: round(p50), unit: "ms", peer, ratio: round(p50 / peer.value), target: "p50 < 5 ms", met: p50 < 5 });
    report({ name: "step overhead p99", value: round(p99), unit: "ms", target: "p99 < 20 ms", met: p99 < 20 });
  } finally {
    await runtime.close();
    llm.child.kill("SIGTERM");
    rmSync(host.workspaceDir, { recursive: true, force: true });
  }
}

/**
 * `latencyMs` 0: the LLM answers at once, so the runtime is the only limit (saturated: throughput).
 * Otherwise each reply takes that long, as a model does, and the delay shows what blocks the loop.
 */
async function concurrent(latencyMs: number, { burning = false } = {}): Promise<void> {
  const llm = await startLlm({ STEPS: String(CONCURRENT_STEPS), TERMINAL_EVERY: "5", LATENCY_MS: String(latencyMs), BURN, BURNERS: String(BURNERS) });
  const label = `${latencyMs ? `LLM answering in ${latencyMs} ms` : "LLM answering at once"}${burning ? `, ${2 * BURNERS} busy loops of a hostile model beside` : ""}`;
  const runtime = new AgentRuntime({ llm: openAiLlmFactory() });
  const hosts = Array.from({ length: CONVERSATIONS }, () => new MemoryHost({ settings: { llm_model: "openai/bench", llm_base_url: llm.url, enable_default_condenser: false } }));
  const delay = monitorEventLoopDelay({ resolution: 5 });
  try {
    // Warm-up: one conversation end to end, so that lazily loaded modules are compiled before the measurement.
    const warmHost = new MemoryHost({ settings: hosts[0]!.currentSettings });
    hosts.push(warmHost);
    const warm = await runtime.open(warmHost);
    await warm.sendMessage(userText("Warm up."), { run: true });
    await warm.idle();
    const conversations = await Promise.all(hosts.slice(0, CONVERSATIONS).map((host) => runtime.open(host)));
    if (burning) {
      for (let k = 0; k < 2; k++) {
        const host = new MemoryHost({ settings: hosts[0]!.currentSettings });
        hosts.push(host);
        const hostile = await runtime.open(host);
        await hostile.sendMessage(userText(BURN), { run: true });
        await hostile.idle();
      }
    }
    // The peer: the same monitor over this process doing nothing, with the machine as it is now
    // (other processes compete for the cores): what scheduling alone costs the event loop.
    const idle = monitorEventLoopDelay({ resolution: 5 });
    idle.enable();
    await new Promise((resolve) => setTimeout(resolve, smoke ? 500 : 3_000));
    idle.disable();
    const idleMax = idle.max / 1e6;
    delay.enable();
    const machineBefore = machineCpu();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await Promise.all(conversations.map((conversation) => conversation.sendMessage(userText("Work."), { run: true })));
    await Promise.all(conversations.map((conversation) => conversation.idle()));
    const seconds = (performance.now() - started) / 1000;
    delay.disable();
    const own = process.cpuUsage(cpuBefore);
    const machine = machineCpu();
    const unfinished = conversations.filter((conversation) => conversation.executionStatus !== "finished").length;
    if (unfinished) throw new Error(`${unfinished} conversations did not finish`);
    const steps = CONVERSATIONS * (CONCURRENT_STEPS + 1);
    const max = delay.max / 1e6;
    const load = loadavg()[0]!.toFixed(1);
    report({
      name: `max event-loop delay, ${CONVERSATIONS} conversations at once, ${label} (${cpus().length} cores, load average ${load})`,
      value: round(max, 1),
      unit: "ms",
      peer: { name: "max delay of the idle loop just before", value: round(idleMax, 1), unit: "ms" },
      ratio: round(max / Math.max(idleMax, 1)),
      ...(latencyMs ? { target: "max < 100 ms", met: max < 100 } : {}),
    });
    report({ name: `event-loop delay p99, ${label}`, value: round(delay.percentile(99) / 1e6, 1), unit: "ms" });
    report({ name: `steps per second, ${CONVERSATIONS} conversations, ${label}`, value: round(steps / seconds, 1), unit: "steps/s" });
    // Where the cores went: the runtime's process against the whole machine (sandboxed commands, the LLM process).
    const busy = (machine.busy - machineBefore.busy) / (machine.total - machineBefore.total);
    report({
      name: `CPU of the runtime's process, ${label}`,
      value: round(((own.user + own.system) / 1e6 / seconds) * 100, 1),
      unit: "% of one core",
      peer: { name: `the machine busy (${cpus().length} cores)`, value: round(busy * 100, 1), unit: "%" },
      ratio: round((own.user + own.system) / 1e6 / seconds / (busy * cpus().length)),
    });
  } finally {
    await runtime.close();
    llm.child.kill("SIGTERM");
    for (const host of hosts) rmSync(host.workspaceDir, { recursive: true, force: true });
  }
}

/** Busy and total CPU time of the machine so far, in clock ticks (`/proc/stat`). */
function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  return { busy: total - fields[3]! - (fields[4] ?? 0), total };
}

/** Median time of `command` through the terminal tool in each sandbox, the two alternated; and of starting each shell. */
async function sandboxCost(): Promise<void> {
  const COMMANDS = smoke ? 20 : 300;
  const SHELLS = smoke ? 5 : 30;
  const parent = mkdtempSync(path.join(tmpdir(), "acs-bench-sandbox-"));
  chmodSync(parent, 0o711); // searchable by the sandbox's user when the bench runs as root
  const kinds: Array<[string, Sandbox]> = [
    ["sandboxed", bubblewrapSandbox()],
    ["host", hostExecution()],
  ];
  try {
    const tools = kinds.map(([name, sandbox]) => {
      const workspaceDir = path.join(parent, name);
      mkdirSync(workspaceDir);
      for (let i = 0; i < 20; i++) writeFileSync(path.join(workspaceDir, `file-${i}.txt`), "x");
      return terminalTool({ sandbox, spawner: new Spawner(), workspaceDir, tmpDir: path.join(parent, `${name}-tmp`), env: {} });
    });
    const run = async (tool: (typeof tools)[number], command: string) => {
      const start = performance.now();
      const observation = (await tool.execute({ kind: "TerminalAction", command }, { workspaceDir: parent, signal: new AbortController().signal, masker: new SecretMasker([]) })) as TerminalObservation;
      if (observation.exit_code !== 0) throw new Error(`${command} failed: ${JSON.stringify(observation.content)}`);
      return performance.now() - start;
    };
    for (const command of ["true", "ls"]) {
      const times: number[][] = [[], []];
      for (const tool of tools) await run(tool, command); // the shells start here, outside the measure
      for (let i = 0; i < COMMANDS; i++) for (const [k, tool] of tools.entries()) times[k]!.push(await run(tool, command));
      const [sandboxed, host] = times.map((list) => percentile(list.sort((a, b) => a - b), 50)) as [number, number];
      const ratio = sandboxed / host;
      report({
        name: `terminal command \`${command}\` in the sandbox, p50 of ${COMMANDS}`,
        value: round(sandboxed),
        unit: "ms",
        peer: { name: "the same command in a shell on the host", value: round(host), unit: "ms" },
        ratio: round(ratio),
        target: "≤ 1.5× or ≤ 5 ms more",
        met: ratio <= 1.5 || sandboxed - host <= 5,
      });
    }
    for (const tool of tools) await tool.close?.();
    const starts: number[][] = [[], []];
    for (let i = 0; i < SHELLS; i++) {
      for (const [k, [name, sandbox]] of kinds.entries()) {
        const tool = terminalTool({ sandbox, spawner: new Spawner(), workspaceDir: path.join(parent, name), tmpDir: path.join(parent, `${name}-tmp`), env: {} });
        starts[k]!.push(await run(tool, "true"));
        await tool.close?.();
      }
    }
    const [sandboxed, host] = starts.map((list) => percentile(list.sort((a, b) => a - b), 50)) as [number, number];
    report({
      name: `start of a conversation's shell and its first command, in the sandbox, p50 of ${SHELLS}`,
      value: round(sandboxed),
      unit: "ms",
      peer: { name: "a shell started on the host", value: round(host), unit: "ms" },
      ratio: round(sandboxed / host),
    });
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
}

if (!process.argv.includes("--concurrent-only")) await sandboxCost();
if (!process.argv.includes("--concurrent-only")) await stepOverhead();
await concurrent(smoke ? 50 : 250);
await concurrent(0);
await concurrent(smoke ? 50 : 250, { burning: true });
for (const figure of figures) {
  const peer = figure.peer ? `  (peer: ${figure.peer.name} ${figure.peer.value} ${figure.peer.unit}, ratio ${figure.ratio})` : "";
  const target = figure.target ? `  [${figure.target}: ${figure.met ? "met" : "NOT met"}]` : "";
  console.log(`${SUITE}: ${figure.name}: ${figure.value} ${figure.unit}${peer}${target}`);
}
