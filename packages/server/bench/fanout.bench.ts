/**
 * Live-channel fan-out: 1,000 WebSocket subscribers of one conversation while a producer in its own
 * process posts user messages over HTTP at a fixed rate (fanout-producer.ts), stepping the rate up. For each step: p50/p99 delivery
 * latency (message posted → event frame received, over every subscriber and event) and whether
 * every subscriber received every event with no connection closed and a p99 under 1 s. The highest
 * rate held is the last step that did. The server runs in its own process (dist/cli.js), the
 * subscribers in this one.
 *
 * The subscribers: most are raw WebSocket clients (raw-subscriber.ts: a TCP socket that reads the
 * frames' headers and finds the event's key in the payload's bytes, where it was in the last frame
 * as a rule; a frame's arrival is the time its read returned), and ACS_FANOUT_WS_SUBSCRIBERS
 * of them (default 10, spread through the connection order) are real `ws` clients, whose latencies
 * are reported apart as the cross-check: a thousand `ws` clients cost this process as much CPU per
 * delivery as the server spends (3.5–4 µs), and with the producer and the server the two cores were
 * full, so the latency measured this process's own queue. ACS_FANOUT_WS_SUBSCRIBERS=1000: every
 * subscriber a `ws` client (the harness before 2026-11-26 08:30 UTC).
 * ACS_FANOUT_SUBSCRIBERS sets the number of subscribers (1: the server's cost per append alone).
 *
 * `--smoke`: 50 subscribers, two short steps.
 */
import { fork, spawn } from "node:child_process";
import { once } from "node:events";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { connectRawSubscriber, type RawSubscriber } from "./raw-subscriber.js";

const smoke = process.argv.includes("--smoke");
const SUBSCRIBERS = process.env.ACS_FANOUT_SUBSCRIBERS ? Number(process.env.ACS_FANOUT_SUBSCRIBERS) : smoke ? 50 : 1_000;
/** Subscribers that are real `ws` clients (the others raw-subscriber.ts), reported apart. */
const WS_SUBSCRIBERS = Math.min(SUBSCRIBERS, process.env.ACS_FANOUT_WS_SUBSCRIBERS ? Number(process.env.ACS_FANOUT_WS_SUBSCRIBERS) : 10);
const RATES = process.env.ACS_FANOUT_RATES ? process.env.ACS_FANOUT_RATES.split(",").map(Number) : smoke ? [20, 50] : [25, 50, 100, 200, 400, 800];
/** A step's length; ACS_FANOUT_STEP_MS sets it (a longer step: a p99 less moved by one burst of the machine's other load). */
const STEP_MS = process.env.ACS_FANOUT_STEP_MS ? Number(process.env.ACS_FANOUT_STEP_MS) : smoke ? 1_000 : 4_000;
/** Waiting for stragglers after a step's last message. */
const DRAIN_MS = 5_000;
/** A step is held when every subscriber got every event, none was closed, and p99 stayed under this. */
const HELD_P99_MS = 1_000;
const KEY = "fanout-bench-key";
/** The goal: 1,000 subscribers at 200 events/s with a delivery p99 ≤ 250 ms. */
const TARGET_RATE = 200;
const TARGET_P99_MS = 250;

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN);
const now = () => performance.timeOrigin + performance.now();

interface StepResult {
  rate: number;
  events: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  held: boolean;
  missing: number;
  closed: number;
  /** 429 answers the producer waited out (backpressure). */
  refused: number;
  /** The server process's CPU time (user + system) per delivery, µs: a figure the machine's other load barely moves. */
  serverCpuUsPerDelivery: number;
  /** This process's (the subscribers') CPU time per delivery, µs. */
  subscriberCpuUsPerDelivery: number;
  /** The `ws` clients' latencies alone (the cross-check of the raw clients'). */
  wsP50Ms: number;
  wsP99Ms: number;
  /** The producer process's CPU time per message posted, µs. */
  producerCpuUsPerEvent: number;
}

/** CPU time (user + system) a process has used, ms, from /proc (Linux). */
const cpuMsOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
};
const ownCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "acs-fanout-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // ACS_BENCH_SERVER_CLI: another build of the server (an A/B run against a copy of an older dist/cli.js).
  const cli = process.env.ACS_BENCH_SERVER_CLI ? path.resolve(process.env.ACS_BENCH_SERVER_CLI) : fileURLToPath(new URL("../dist/cli.js", import.meta.url));
  // ACS_BENCH_SERVER_NODE_ARGS: extra Node.js flags for the server process (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
  const nodeArgs = process.env.ACS_BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  const server = spawn(process.execPath, [...nodeArgs, cli, "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir, "--log-level", "error"], {
    env: { ...process.env, SESSION_API_KEY: KEY },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/health`)).ok) break;
      } catch {
        if (i > 400) throw new Error("server did not start");
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    const headers = { "X-Session-API-Key": KEY, "Content-Type": "application/json" };
    const created = await (await fetch(`${base}/api/conversations`, { method: "POST", headers, body: "{}" })).json();
    const id = created.conversation_id as string;

    // Subscribers: each records, per event number of the step, when the frame arrived (NaN: not
    // yet), and how many of the step's events it got. Frames of another step (a rate other than
    // the step's) are not counted.
    const maxTotal = Math.max(...RATES.map((rate) => Math.round((rate * STEP_MS) / 1000)));
    const arrivals: Float64Array[] = [];
    const counts: number[] = [];
    let stepRate = 0;
    /** Notes that subscriber `i` got event `n` of the step at rate `rate` at `at`. */
    const arrived = (i: number, rate: number, n: number, at: number) => {
      const times = arrivals[i]!;
      if (rate !== stepRate || !(n < maxTotal) || !Number.isNaN(times[n]!)) return;
      times[n] = at;
      counts[i]!++;
    };
    /** Whether arrivals[i] is a `ws` client's. */
    const isWs: boolean[] = [];
    let closed = 0;
    const sockets: Array<WebSocket | RawSubscriber> = [];
    let protocolErrors = 0;
    const FANOUT = Buffer.from("fanout ", "latin1");
    /** Where "fanout " was in the last frame, from its payload's start: the next is there as a rule. */
    let markOffset = -1;
    for (let batch = 0; batch < SUBSCRIBERS; batch += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, SUBSCRIBERS - batch) }, () => {
          const index = arrivals.length;
          arrivals.push(new Float64Array(maxTotal).fill(NaN));
          counts.push(0);
          // WS_SUBSCRIBERS of them, evenly spread through the connection order.
          const ws = Math.floor(((index + 1) * WS_SUBSCRIBERS) / SUBSCRIBERS) > Math.floor((index * WS_SUBSCRIBERS) / SUBSCRIBERS);
          isWs.push(ws);
          if (!ws) {
            const raw = connectRawSubscriber({
              port,
              path: `/sockets/events/${id}`,
              headers: { "X-Session-API-Key": KEY },
              // Per frame: a few byte compares and the key's digits read as numbers (no string, no
              // Map): the frame's cost to this process stays small beside the read's.
              onText: (bytes, start, end, readAt) => {
                let at = start + markOffset;
                let found = markOffset >= 0 && at + 7 <= end;
                for (let k = 0; found && k < 7; k++) found = bytes[at + k] === FANOUT[k];
                if (!found) {
                  at = bytes.indexOf(FANOUT, start);
                  if (at < 0 || at >= end) return;
                  markOffset = at - start;
                }
                let rate = 0;
                let n = 0;
                let i = at + 7;
                for (let c = bytes[i]!; c !== 0x2e && i < end; c = bytes[++i]!) rate = rate * 10 + c - 48;
                for (let c = bytes[++i]!; c !== 0x22 && i < end; c = bytes[++i]!) n = n * 10 + c - 48;
                arrived(index, rate, n, readAt);
              },
              onClose: () => {
                closed++;
                protocolErrors += raw.protocolErrors;
              },
            });
            sockets.push(raw);
            return raw.ready;
          }
          const client = new WebSocket(`ws://127.0.0.1:${port}/sockets/events/${id}`, { headers: { "X-Session-API-Key": KEY } });
          sockets.push(client);
          client.on("message", (data: Buffer) => {
            // Not JSON.parse: 1,000 parses of every event would measure this process, not the server.
            const text = data.toString();
            const at = text.indexOf("fanout ");
            if (at < 0) return;
            const [rate, n] = text.slice(at + 7, text.indexOf('"', at)).split(".").map(Number) as [number, number];
            arrived(index, rate, n, now());
          });
          client.on("close", () => closed++);
          return new Promise<void>((resolve, reject) => {
            client.once("message", () => resolve()); // the full_state frame: subscribed
            client.once("error", reject);
          });
        }),
      );
    }

    // The producer: a process of its own posting over HTTP (fanout-producer.ts); each message is
    // recorded and pushed to everyone.
    const producer = fork(fileURLToPath(new URL("./fanout-producer.ts", import.meta.url)), [base, id, KEY], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    await once(producer, "message");
    const step = (rate: number, total: number) =>
      new Promise<{ sent: Array<[string, number]>; refused: number; cpuMs: number }>((resolve) => {
        producer.once("message", (answer: { sent: Array<[string, number]>; refused: number; cpuMs: number }) => resolve(answer));
        producer.send({ rate, total });
      });

    const results: StepResult[] = [];
    for (const rate of RATES) {
      const closedBefore = closed;
      const serverCpuBefore = cpuMsOf(server.pid!);
      const ownCpuBefore = ownCpuMs();
      const total = Math.round((rate * STEP_MS) / 1000);
      stepRate = rate;
      const answer = await step(rate, total);
      const deadline = now() + DRAIN_MS;
      const complete = () => counts.every((count) => count >= total);
      while (!complete() && now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const serverCpuMs = cpuMsOf(server.pid!) - serverCpuBefore;
      const ownCpu = ownCpuMs() - ownCpuBefore;
      const latencies: number[] = [];
      const wsLatencies: number[] = [];
      let missing = 0;
      for (const [i, times] of arrivals.entries()) {
        for (const [n, [, at]] of answer.sent.entries()) {
          const got = times[n]!;
          if (Number.isNaN(got)) missing++;
          else {
            latencies.push(got - at);
            if (isWs[i]) wsLatencies.push(got - at);
          }
        }
      }
      latencies.sort((a, b) => a - b);
      wsLatencies.sort((a, b) => a - b);
      const result: StepResult = {
        rate,
        events: total,
        p50Ms: Number(percentile(latencies, 50).toFixed(1)),
        p99Ms: Number(percentile(latencies, 99).toFixed(1)),
        maxMs: Number((latencies.at(-1) ?? NaN).toFixed(1)),
        held: false,
        missing,
        closed: closed - closedBefore,
        refused: answer.refused,
        serverCpuUsPerDelivery: Number(((serverCpuMs * 1000) / (total * SUBSCRIBERS)).toFixed(2)),
        subscriberCpuUsPerDelivery: Number(((ownCpu * 1000) / (total * SUBSCRIBERS)).toFixed(2)),
        wsP50Ms: Number(percentile(wsLatencies, 50).toFixed(1)),
        wsP99Ms: Number(percentile(wsLatencies, 99).toFixed(1)),
        producerCpuUsPerEvent: Math.round((answer.cpuMs * 1000) / total),
      };
      result.held = missing === 0 && result.closed === 0 && result.p99Ms <= HELD_P99_MS;
      results.push(result);
      stepRate = 0;
      for (const [i, times] of arrivals.entries()) {
        times.fill(NaN);
        counts[i] = 0;
      }
      if (!result.held) break;
    }
    for (const socket of sockets) socket.terminate();
    producer.kill();

    const held = results.filter((r) => r.held).at(-1);
    console.log(
      `live fan-out (${SUBSCRIBERS} subscribers on one conversation, ${WS_SUBSCRIBERS} of them \`ws\` clients and ${SUBSCRIBERS - WS_SUBSCRIBERS} raw (bench/raw-subscriber.ts); messages posted over HTTP by a producer process; ${cpus().length} cores)`,
    );
    console.log(`  load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}${protocolErrors ? `; ${protocolErrors} frames the raw clients could not read` : ""}`);
    console.log("  rate ev/s   events   deliveries   p50 ms   p99 ms   max ms   ws p50/p99 ms   429s   server µs/delivery   subscribers µs/delivery   producer µs/event   held");
    for (const r of results) {
      console.log(
        `  ${String(r.rate).padStart(9)}   ${String(r.events).padStart(6)}   ${String(r.events * SUBSCRIBERS).padStart(10)}   ${String(r.p50Ms).padStart(6)}   ${String(r.p99Ms).padStart(6)}   ${String(r.maxMs).padStart(6)}   ${`${r.wsP50Ms} / ${r.wsP99Ms}`.padStart(13)}   ${String(r.refused).padStart(4)}   ${String(r.serverCpuUsPerDelivery).padStart(18)}   ${String(r.subscriberCpuUsPerDelivery).padStart(23)}   ${String(r.producerCpuUsPerEvent).padStart(17)}   ${r.held ? "yes" : `no (${r.missing} missing, ${r.closed} closed, p99 limit ${HELD_P99_MS} ms)`}`,
      );
    }
    console.log(`  highest rate held: ${held ? `${held.rate} events/s (${held.rate * SUBSCRIBERS} deliveries/s)` : "none"}${results.every((r) => r.held) ? " (the highest step tried)" : ""}`);

    const out = process.env.ACS_BENCH_RESULTS;
    if (out) {
      const lines: object[] = results.flatMap((r) => [
        { suite: "live", name: `fan-out delivery p50 at ${r.rate} events/s × ${SUBSCRIBERS} subscribers`, value: r.p50Ms, unit: "ms" },
        { suite: "live", name: `fan-out server CPU per delivery at ${r.rate} events/s × ${SUBSCRIBERS} subscribers`, value: r.serverCpuUsPerDelivery, unit: "µs", peer: { name: "the subscribers' process", value: r.subscriberCpuUsPerDelivery, unit: "µs" }, ratio: Number((r.serverCpuUsPerDelivery / r.subscriberCpuUsPerDelivery).toFixed(2)) },
        {
          suite: "live",
          name: `fan-out delivery p99 at ${r.rate} events/s × ${SUBSCRIBERS} subscribers`,
          value: r.p99Ms,
          unit: "ms",
          ...(r.rate === TARGET_RATE && !smoke ? { target: `≤ ${TARGET_P99_MS} ms`, met: r.missing === 0 && r.p99Ms <= TARGET_P99_MS } : {}),
        },
        ...(WS_SUBSCRIBERS > 0 && WS_SUBSCRIBERS < SUBSCRIBERS ? [{ suite: "live", name: `fan-out delivery p99 at ${r.rate} events/s, the ${WS_SUBSCRIBERS} \`ws\` clients among the ${SUBSCRIBERS} subscribers`, value: r.wsP99Ms, unit: "ms" }] : []),
      ]);
      lines.push({
        suite: "live",
        name: `fan-out: highest append rate held with nothing dropped (${SUBSCRIBERS} subscribers)`,
        value: held?.rate ?? 0,
        unit: "events/s",
      });
      appendFileSync(out, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    }
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
