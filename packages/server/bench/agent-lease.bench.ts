/**
 * A control of a conversation's agent sent to the instance that runs it (its lease's owner) beside
 * one sent to another instance, which hands it to the owner through PostgreSQL (agent_commands and a
 * notification each way): two server processes (dist/cli.js, `--runtime agent --store`) on one
 * scratch database and one data directory, one idle agent conversation created on the first, and
 * `POST …/pause` (an idle agent that is paused already records nothing: the control's path alone)
 * over keep-alive HTTP from this process, alternately to each instance. Reports the p50 and p99 of
 * each and the ratio of the p50s; target: the non-owner's p50 within 2× the owner's plus 5 ms.
 *
 *   pnpm exec tsx bench/agent-lease.bench.ts [--smoke]      (from packages/server; run `pnpm build` first)
 *
 * `--smoke`: 50 controls each instead of 1,000.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { createScratchDatabase } from "../test/support/postgres.js";
import { appendBenchFigures, type BenchFigure } from "./search.bench.js";
import { startServerProcess } from "./server-process.js";

const KEY = "agent-lease-bench-key";
const smoke = process.argv.includes("--smoke");
const RUNS = smoke ? 50 : 1_000;
const WARM_UP = smoke ? 10 : 50;
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request over the keep-alive agent: its status and body. */
function call(url: string, method: string, route: string, json?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const body = json === undefined ? undefined : JSON.stringify(json);
    const req = http.request(new URL(route, url), { method, agent: keepAlive, headers: { "X-Session-API-Key": KEY, ...(body !== undefined && { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }) } }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += String(chunk)));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const round = (ms: number) => Number(ms.toFixed(2));

const db = await createScratchDatabase();
const dataDir = mkdtempSync(path.join(tmpdir(), "acs-agent-lease-bench-"));
// One secret key for both, as a deployment gives every instance.
process.env.ACS_SECRET_KEY = randomBytes(32).toString("hex");
const args = ["--data-dir", dataDir, "--runtime", "agent", "--store", db.url, "--log-level", "warn"];
const servers = [await startServerProcess(args, KEY), await startServerProcess(args, KEY)];
const [owner, other] = servers.map((server) => server.url) as [string, string];
try {
  const created = await call(owner, "POST", "/api/conversations", {});
  if (created.status !== 200) throw new Error(`creating the conversation: ${created.status} ${created.text}`);
  const id = (JSON.parse(created.text) as { conversation_id: string }).conversation_id;
  for (let open = false; !open; ) {
    const info = await call(owner, "GET", `/api/conversations/${id}`);
    open = (JSON.parse(info.text) as { status?: string }).status === "RUNNING";
    if (!open) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const route = `/api/conversations/${id}/pause`;
  const times: Record<"owner" | "other", number[]> = { owner: [], other: [] };
  const load = [loadavg()[0]!, 0];
  for (let i = 0; i < WARM_UP + RUNS; i++) {
    for (const [name, url] of [["owner", owner], ["other", other]] as const) {
      const started = performance.now();
      const reply = await call(url, "POST", route);
      const ms = performance.now() - started;
      if (reply.status !== 200) throw new Error(`pause through the ${name}: ${reply.status} ${reply.text}`);
      if (i >= WARM_UP) times[name].push(ms);
    }
  }
  load[1] = loadavg()[0]!;
  const [ownerSorted, otherSorted] = [times.owner, times.other].map((list) => list.slice().sort((x, y) => x - y)) as [number[], number[]];
  const ownerP50 = round(percentile(ownerSorted, 50));
  const otherP50 = round(percentile(otherSorted, 50));
  const ratio = Number((otherP50 / Math.max(ownerP50, 0.001)).toFixed(2));
  const met = otherP50 <= 2 * ownerP50 + 5;
  console.log(`POST …/pause on an idle agent conversation, ${RUNS} each, alternately (load ${load[0]!.toFixed(2)} → ${load[1]!.toFixed(2)}):`);
  console.log(`  to the owner:     p50 ${ownerP50} ms   p99 ${round(percentile(ownerSorted, 99))} ms`);
  console.log(`  to a non-owner:   p50 ${otherP50} ms   p99 ${round(percentile(otherSorted, 99))} ms   (handed to the owner through PostgreSQL)`);
  console.log(`  ratio of the p50s ${ratio}; target: within 2× plus 5 ms (${round(2 * ownerP50 + 5)} ms): ${met ? "met" : "NOT met"}`);
  const tag = smoke ? " (smoke)" : "";
  const figures: BenchFigure[] = [
    {
      suite: "server (PostgreSQL)",
      name: `agent control (pause) through a non-owner instance, p50${tag}`,
      value: otherP50,
      unit: "ms",
      peer: { name: "through the owner, same run", value: ownerP50, unit: "ms" },
      ratio,
      ...(smoke ? {} : { target: "≤ 2× the owner's p50 + 5 ms", met }),
    },
    { suite: "server (PostgreSQL)", name: `agent control (pause) through a non-owner instance, p99${tag}`, value: round(percentile(otherSorted, 99)), unit: "ms", peer: { name: "through the owner, same run", value: round(percentile(ownerSorted, 99)), unit: "ms" } },
  ];
  appendBenchFigures(figures);
} finally {
  keepAlive.destroy();
  for (const server of servers) {
    server.child.kill("SIGTERM");
    await new Promise((resolve) => server.child.once("exit", resolve));
  }
  rmSync(dataDir, { recursive: true, force: true });
  await db.drop();
}
