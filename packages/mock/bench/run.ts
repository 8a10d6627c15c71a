/**
 * `pnpm bench` for the mock: start-up time of `acs-mock`, then event search on the mock next to bare
 * quiet Prism (`prism mock -v silent`, @stoplight/prism-cli 5.14.2, static examples: its default info
 * log costs it about a fifth of its throughput) on the same bundled spec, in the
 * same run, with the same request and the same client: p50 latency of sequential requests on one
 * keep-alive connection, and requests per second under autocannon (10 connections), each measured in
 * alternating rounds. Both servers run in their own process. `--smoke` runs a quick version (CI).
 *
 * Figures go to stdout as a table and, when ACS_BENCH_RESULTS names a file, as JSON lines.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { openapiDocument } from "@acs-toolkit/schema/documents";

const smoke = process.argv.includes("--smoke");
const require = createRequire(import.meta.url);
// ACS_BENCH_MOCK_CLI: another build of the mock (an A/B run of two builds).
const cli = process.env.ACS_BENCH_MOCK_CLI ? path.resolve(process.env.ACS_BENCH_MOCK_CLI) : fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const prismBin = path.join(path.dirname(require.resolve("@stoplight/prism-cli/package.json")), "dist/index.js");
const dir = mkdtempSync(path.join(tmpdir(), "acs-mock-bench-"));
const children = new Set<ChildProcess>();

interface Figure {
  suite: "mock";
  name: string;
  value: number;
  unit: string;
  peer?: { name: string; value: number; unit: string };
  ratio?: number;
  target?: string;
  met?: boolean;
}
const figures: Figure[] = [];
const record = (figure: Omit<Figure, "suite">) => figures.push({ suite: "mock", ...figure });

/** A free port, by asking the OS. */
async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function get(url: string, agent?: Agent): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    request(url, { agent: agent ?? false }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    })
      .on("error", reject)
      .end();
  });
}

/** Spawns a server and resolves once `probe` answers 200 (the time from spawn to that answer). */
async function launch(command: string[], probe: string, timeoutMs = 60_000): Promise<{ child: ChildProcess; readyMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, command, { stdio: ["ignore", "ignore", "pipe"] });
  children.add(child);
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command.join(" ")} exited: ${stderr}`);
    if (performance.now() - started > timeoutMs) throw new Error(`${command.join(" ")} did not answer within ${timeoutMs} ms`);
    try {
      if ((await get(probe)).status === 200) return { child, readyMs: performance.now() - started };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  children.delete(child);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * p50 of sequential requests, each server on its own keep-alive connection, after a warm-up. The
 * two are measured in alternating blocks of 50, so that a noisy moment of the machine falls on
 * both rather than on one.
 */
async function sequentialP50s(urls: readonly string[], count: number): Promise<number[]> {
  const agents = urls.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const times = urls.map((): number[] => []);
  for (let i = 0; i < urls.length; i++) for (let j = 0; j < Math.min(50, count); j++) await get(urls[i]!, agents[i]);
  for (let done = 0; done < count; done += 50) {
    for (let i = 0; i < urls.length; i++) {
      for (let j = done; j < Math.min(done + 50, count); j++) {
        const { status, ms } = await get(urls[i]!, agents[i]);
        if (status !== 200) throw new Error(`${urls[i]} answered ${status}`);
        times[i]!.push(ms);
      }
    }
  }
  for (const agent of agents) agent.destroy();
  return times.map(median);
}

interface Load {
  rps: number;
  errors: number;
}

/** Requests per second under autocannon (10 connections), in alternating rounds per server. */
async function throughputs(urls: readonly string[]): Promise<Load[]> {
  const rounds = smoke ? 1 : 3;
  const totals = urls.map(() => ({ requests: 0, seconds: 0, errors: 0 }));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < urls.length; i++) {
      const result = await autocannon({ url: urls[i]!, connections: 10, duration: smoke ? 1 : 2 });
      totals[i]!.requests += result.requests.total;
      totals[i]!.seconds += result.duration;
      totals[i]!.errors += result.errors + result.non2xx;
    }
  }
  return totals.map((t) => ({ rps: Math.round(t.requests / t.seconds), errors: t.errors }));
}

try {
  console.log(`mock benchmarks${smoke ? " (smoke)" : ""}\n`);

  // Start-up: spawn → the first 200 of event search on a built-in conversation (default options:
  // every built-in scenario, the 5,000-event one included).
  const startups: number[] = [];
  let conversationId = "";
  for (let i = 0; i < (smoke ? 1 : 5); i++) {
    const port = await freePort();
    const probe = `http://127.0.0.1:${port}/__mock`;
    const { child, readyMs } = await launch([cli, "--port", String(port)], probe);
    const described = await (await fetch(probe)).json();
    conversationId = described.scenarios.find((s: { name: string }) => s.name === "long").conversation_id;
    const first = await get(`http://127.0.0.1:${port}/api/conversations/${conversationId}/events/search?limit=100`);
    startups.push(readyMs + first.ms);
    await stop(child);
  }
  const startup = median(startups);
  record({ name: "startup (spawn to the first event search answer)", value: Math.round(startup), unit: "ms", target: "< 1500 ms", met: startup < 1500 });

  // Event search: the mock (5,000-event conversation, page of 100) and bare Prism, same request.
  const specFile = path.join(dir, "openapi.json");
  writeFileSync(specFile, JSON.stringify(openapiDocument));
  const mockPort = await freePort();
  const prismPort = await freePort();
  const route = `/api/conversations/${conversationId}/events/search?limit=100`;
  const mock = await launch([cli, "--port", String(mockPort), "--log-level", "silent"], `http://127.0.0.1:${mockPort}/health`);
  const prism = await launch([prismBin, "mock", specFile, "--host", "127.0.0.1", "--port", String(prismPort), "--errors", "false", "-v", "silent"], `http://127.0.0.1:${prismPort}${route}`);
  const count = smoke ? 100 : 1000;
  const mockUrl = `http://127.0.0.1:${mockPort}${route}`;
  const prismUrl = `http://127.0.0.1:${prismPort}${route}`;
  const [mockP50, prismP50] = (await sequentialP50s([mockUrl, prismUrl], count)) as [number, number];
  const [mockLoad, prismLoad] = (await throughputs([mockUrl, prismUrl])) as [Load, Load];
  await Promise.all([stop(mock.child), stop(prism.child)]);

  const latencyRatio = mockP50 / prismP50;
  record({
    name: "event search p50, sequential (page of 100)",
    value: round(mockP50),
    unit: "ms",
    peer: { name: "prism mock -v silent (static)", value: round(prismP50), unit: "ms" },
    ratio: round(latencyRatio),
    target: "mock no slower than Prism (ratio mock/Prism ≤ 1)",
    met: latencyRatio <= 1,
  });
  const throughputRatio = prismLoad.rps / Math.max(1, mockLoad.rps);
  record({
    name: "event search req/s, 10 connections",
    value: mockLoad.rps,
    unit: "req/s",
    peer: { name: "prism mock -v silent (static)", value: prismLoad.rps, unit: "req/s" },
    ratio: round(throughputRatio),
    target: "mock no slower than Prism (ratio Prism/mock ≤ 1)",
    met: throughputRatio <= 1,
  });

  console.log(`start-up (spawn to first event search answer), median of ${startups.length}: ${Math.round(startup)} ms (target < 1500 ms)`);
  console.log(`  runs: ${startups.map((ms) => Math.round(ms)).join(", ")} ms\n`);
  console.log(`event search, GET ${route.replace(conversationId, "{id}")}`);
  console.log("                          mock        prism mock   ratio");
  console.log(`  p50 sequential (ms)   ${String(round(mockP50)).padStart(8)}   ${String(round(prismP50)).padStart(10)}   ${round(latencyRatio)}`);
  console.log(`  req/s (10 conns)      ${String(mockLoad.rps).padStart(8)}   ${String(prismLoad.rps).padStart(10)}   ${round(throughputRatio)}`);
  console.log(`  non-2xx or errors     ${String(mockLoad.errors).padStart(8)}   ${String(prismLoad.errors).padStart(10)}`);
  if (mockLoad.errors || prismLoad.errors) process.exitCode = 1;

  if (process.env.ACS_BENCH_RESULTS) appendFileSync(process.env.ACS_BENCH_RESULTS, figures.map((f) => JSON.stringify(f)).join("\n") + "\n");
} finally {
  for (const child of children) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}
