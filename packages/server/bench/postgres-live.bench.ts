/**
 * Live delivery across server instances on PostgreSQL: two server processes (dist/cli.js, `--store`)
 * on one scratch database, 1,000 WebSocket subscribers of one conversation spread evenly over them
 * (in this process), and a producer in its own process appending user messages over HTTP at
 * 100 events/s, alternately through each instance. Delivery latency is POST sent → event frame
 * received, over every subscriber and event: p50/p99 overall, and split into subscribers on the
 * instance that took the append (its local bus) and on the other one (LISTEN/NOTIFY, then a read of
 * the store). Everything must arrive exactly once.
 *
 *   pnpm exec tsx bench/postgres-live.bench.ts [--smoke]      (from packages/server; run `pnpm build` first)
 *
 * `--smoke`: 50 subscribers, 2 s; ACS_PG_LIVE_RATE sets the rate. The producer is this file run with `--producer`.
 *
 * The subscribers are raw WebSocket clients (raw-subscriber.ts) but for ACS_PG_LIVE_WS_SUBSCRIBERS
 * of them (default 10, half on each instance) that are real `ws` clients, reported apart as the
 * cross-check (ACS_PG_LIVE_WS_SUBSCRIBERS=1000: all of them, the harness before 2026-11-26 09:00
 * UTC). Each instance's CPU time per delivery (to its own subscribers) is printed from /proc.
 * ACS_BENCH_SERVER_NODE_ARGS: Node.js flags for the servers (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof");
 * ACS_BENCH_SERVER_CLI: another build (A/B).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { connectRawSubscriber, type RawSubscriber } from "./raw-subscriber.js";

const KEY = "postgres-live-bench-key";
const MARK = "pglive ";
const now = () => performance.timeOrigin + performance.now();

/** The producer process: `--producer <rate> <count> <conversation> <url>...`; prints `<n> <sent ms>` per event. */
async function produce(args: string[]): Promise<void> {
  const [rate, count, id, ...urls] = args as [string, string, string, ...string[]];
  const headers = { "X-Session-API-Key": KEY, "Content-Type": "application/json" };
  const start = now();
  const pending: Array<Promise<void>> = [];
  let failed = 0;
  for (let n = 0; n < Number(count); n++) {
    const wait = start + (n * 1000) / Number(rate) - now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const url = urls[n % urls.length]!;
    const sent = now();
    pending.push(
      fetch(`${url}/api/conversations/${id}/events`, { method: "POST", headers, body: JSON.stringify({ role: "user", content: [{ type: "text", text: `${MARK}${n}` }] }) }).then(
        async (reply) => {
          await reply.arrayBuffer();
          if (reply.ok) process.stdout.write(`${n} ${sent} ${n % urls.length} ${now() - sent}\n`);
          else failed++;
        },
        () => void failed++,
      ),
    );
  }
  await Promise.all(pending);
  if (failed) process.stderr.write(`producer: ${failed} appends failed\n`);
}

async function startServer(url: string, dataDir: string): Promise<{ child: ChildProcess; base: string }> {
  const cli = process.env.ACS_BENCH_SERVER_CLI ? path.resolve(process.env.ACS_BENCH_SERVER_CLI) : fileURLToPath(new URL("../dist/cli.js", import.meta.url));
  const nodeArgs = process.env.ACS_BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, cli, "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir, "--log-level", "warn", "--store", url], {
    env: { PATH: process.env.PATH, SESSION_API_KEY: KEY },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const base = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += String(chunk);
      const match = /listening on (http:\/\/\S+?) /.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  return { child, base };
}

/** CPU time (user + system) a process has used, ms, from /proc (Linux). */
const cpuMsOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN);
const figures = (xs: number[]) => {
  const sorted = xs.slice().sort((a, b) => a - b);
  return { p50: Number(percentile(sorted, 50).toFixed(1)), p99: Number(percentile(sorted, 99).toFixed(1)), max: Number((sorted.at(-1) ?? NaN).toFixed(1)) };
};

/** Runs the benchmark; resolves with its figures (also used by postgres.bench.ts). */
export async function benchPostgresLive({ url, smoke = false, rate = 100 }: { url: string; smoke?: boolean; rate?: number }) {
  const subscribers = smoke ? 50 : 1_000;
  const count = Math.round(rate * (smoke ? 2 : 10));
  const dirs = [0, 1].map(() => mkdtempSync(path.join(tmpdir(), "acs-pg-live-")));
  const servers = await Promise.all(dirs.map((dir) => startServer(url, dir)));
  const sockets: Array<WebSocket | RawSubscriber> = [];
  const wsSubscribers = Math.min(subscribers, Number(process.env.ACS_PG_LIVE_WS_SUBSCRIBERS ?? 10));
  const MARK_BYTES = Buffer.from(MARK, "latin1");
  try {
    const headers = { "X-Session-API-Key": KEY, "Content-Type": "application/json" };
    const id = ((await (await fetch(`${servers[0]!.base}/api/conversations`, { method: "POST", headers, body: "{}" })).json()) as { conversation_id: string }).conversation_id;
    // Per subscriber: its instance, and when each event number arrived (and how often).
    const subs: Array<{ instance: number; at: Map<number, number>; duplicates: number; ws: boolean }> = [];
    let closed = 0;
    for (let batch = 0; batch < subscribers; batch += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, subscribers - batch) }, (_, i) => {
          const index = batch + i;
          const instance = index % 2;
          // wsSubscribers of them, evenly spread (and so over both instances).
          const isWs = Math.floor(((index + 1) * wsSubscribers) / subscribers) > Math.floor((index * wsSubscribers) / subscribers);
          const sub = { instance, at: new Map<number, number>(), duplicates: 0, ws: isWs };
          subs.push(sub);
          if (!isWs) {
            const raw = connectRawSubscriber({
              port: Number(new URL(servers[instance]!.base).port),
              path: `/sockets/events/${id}`,
              headers: { "X-Session-API-Key": KEY },
              onText: (bytes, start, end, readAt) => {
                const from = bytes.indexOf(MARK_BYTES, start);
                if (from < 0 || from >= end) return;
                const n = Number(bytes.toString("latin1", from + MARK.length, bytes.indexOf(0x22, from)));
                if (sub.at.has(n)) sub.duplicates++;
                else sub.at.set(n, readAt);
              },
              onClose: () => closed++,
            });
            sockets.push(raw);
            return raw.ready;
          }
          const ws = new WebSocket(`${servers[instance]!.base.replace("http", "ws")}/sockets/events/${id}`, { headers: { "X-Session-API-Key": KEY } });
          sockets.push(ws);
          ws.on("message", (data: Buffer) => {
            // Not JSON.parse: 1,000 parses of every event would measure this process, not the servers.
            const text = data.toString();
            const from = text.indexOf(MARK);
            if (from < 0) return;
            const n = Number(text.slice(from + MARK.length, text.indexOf('"', from)));
            if (sub.at.has(n)) sub.duplicates++;
            else sub.at.set(n, now());
          });
          ws.on("close", () => closed++);
          return new Promise<void>((resolve, reject) => {
            ws.once("message", () => resolve()); // the full_state frame: subscribed
            ws.once("error", reject);
          });
        }),
      );
    }
    const sent = new Map<number, { at: number; instance: number }>();
    const cpuBefore = servers.map(({ child }) => cpuMsOf(child.pid!));
    const replies: number[] = [];
    const producer = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--producer", String(rate), String(count), id, ...servers.map((s) => s.base)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    createInterface({ input: producer.stdout! }).on("line", (line) => {
      const [n, at, instance, reply] = line.split(" ").map(Number) as [number, number, number, number];
      sent.set(n, { at, instance });
      replies.push(reply);
    });
    await new Promise((r) => producer.once("exit", r));
    const deadline = now() + 10_000;
    const complete = () => subs.every((s) => s.at.size >= sent.size);
    while (!complete() && now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const cpuMs = servers.map(({ child }, i) => cpuMsOf(child.pid!) - cpuBefore[i]!);
    await new Promise((r) => setTimeout(r, 500)); // duplicates, if any, arrive
    const same: number[] = [];
    const cross: number[] = [];
    const wsLatencies: number[] = [];
    let missing = 0;
    let duplicates = 0;
    for (const sub of subs) {
      duplicates += sub.duplicates;
      for (const [n, { at, instance }] of sent) {
        const got = sub.at.get(n);
        if (got === undefined) missing++;
        else {
          (sub.instance === instance ? same : cross).push(got - at);
          if (sub.ws) wsLatencies.push(got - at);
        }
      }
    }
    // Each instance's CPU per delivery to its own subscribers (half of them), µs.
    const serverCpuUsPerDelivery = cpuMs.map((ms) => Number(((ms * 1000) / (sent.size * (subscribers / 2))).toFixed(2)));
    return { subscribers, wsSubscribers, rate, events: sent.size, attempted: count, missing, duplicates, closed, all: figures([...same, ...cross]), reply: figures(replies), same: figures(same), cross: figures(cross), ws: figures(wsLatencies), serverCpuUsPerDelivery };
  } finally {
    for (const ws of sockets) ws.terminate();
    for (const { child } of servers) {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes("--producer")) {
  await produce(process.argv.slice(process.argv.indexOf("--producer") + 1));
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { createScratchDatabase } = await import("../test/support/postgres.js");
  const db = await createScratchDatabase();
  try {
    const r = await benchPostgresLive({ url: db.url, smoke: process.argv.includes("--smoke"), rate: Number(process.env.ACS_PG_LIVE_RATE ?? 100) });
    console.log(`live delivery across two instances on PostgreSQL (${r.subscribers} subscribers, half on each, ${r.wsSubscribers} of them \`ws\` clients; ${r.rate} events/s over HTTP from a producer process, alternately through each; ${cpus().length} cores)`);
    console.log(`  events ${r.events}/${r.attempted}, missing ${r.missing}, duplicates ${r.duplicates}, closed ${r.closed}; server CPU µs/delivery ${r.serverCpuUsPerDelivery.join(" / ")}`);
    for (const k of ["all", "same", "cross", "ws", "reply"] as const) console.log(`  ${k.padEnd(5)} p50 ${r[k].p50} ms   p99 ${r[k].p99} ms   max ${r[k].max} ms`);
  } finally {
    await db.drop();
  }
}
