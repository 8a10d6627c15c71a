/**
 * The live channel's own cost per delivery, without the HTTP append path and without the flush
 * pacing deciding how many events a write carries: the server in this process (the build in
 * ACS_BENCH_SERVER_DIST, default ../dist: an A/B run against a copy of an older build), 1,000
 * subscribers in a child process (raw-subscriber.ts), and events handed to the server's bus
 * directly, K at a time in one turn (as K appends in one turn are), then a pause of 100 ms so that
 * each batch leaves in its own flush. Prints the server process's CPU time (user + system, so the
 * system calls too) per delivery for each K: what fan-out itself costs when a flush carries K
 * events to each socket.
 *
 * `pnpm exec tsx bench/fanout-flush.bench.ts` in packages/server, after `pnpm build`.
 * ACS_FANOUT_FLUSH_K: the batch sizes (default 1,4,16); ACS_FANOUT_SUBSCRIBERS (default 1,000).
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { connectRawSubscriber } from "./raw-subscriber.js";

const KEY = "fanout-flush-bench-key";
const SUBSCRIBERS = Number(process.env.ACS_FANOUT_SUBSCRIBERS ?? 1_000);
const KS = (process.env.ACS_FANOUT_FLUSH_K ?? "1,4,16").split(",").map(Number);
/** Events per K (rounded to a multiple of K). */
const EVENTS = 240;
const PAUSE_MS = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

if (process.argv[2] === "--subscribers") {
  // The child: SUBSCRIBERS raw clients; answers "count" with the text frames received.
  const [port, conversationId] = process.argv.slice(3) as [string, string];
  let frames = 0;
  await Promise.all(
    Array.from({ length: SUBSCRIBERS }, () => connectRawSubscriber({ port: Number(port), path: `/sockets/events/${conversationId}`, headers: { "X-Session-API-Key": KEY }, onText: () => frames++, onClose: () => {} }).ready),
  );
  process.on("message", () => process.send!({ frames }));
  process.send!({ frames });
} else {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dist = path.resolve(process.env.ACS_BENCH_SERVER_DIST ?? path.join(here, "../dist"));
  const { startServer, parseConfig } = (await import(pathToFileURL(path.join(dist, "index.js")).href)) as typeof import("../src/index.js");
  const dataDir = mkdtempSync(path.join(tmpdir(), "acs-fanout-flush-"));
  const env = { ...process.env, SESSION_API_KEY: KEY };
  const server = await startServer(parseConfig(["--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir, "--log-level", "error"], env), { env });
  try {
    const created = await (await fetch(`${server.url}/api/conversations`, { method: "POST", headers: { "X-Session-API-Key": KEY, "Content-Type": "application/json" }, body: "{}" })).json();
    const id = created.conversation_id as string;
    const child = fork(fileURLToPath(import.meta.url), ["--subscribers", String(server.port), id], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    await once(child, "message");
    const count = async () => {
      child.send("count");
      const [answer] = (await once(child, "message")) as [{ frames: number }];
      return answer.frames;
    };
    const base = await count(); // the full_state frames
    let seq = 0;
    console.log(`live fan-out, the channel alone (${SUBSCRIBERS} raw subscribers in a child process; events handed to the bus K at a time, ${PAUSE_MS} ms apart; ${dist})`);
    console.log(`  load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
    console.log("  K (events a flush)   events   server µs/delivery (user + system)   frames received");
    for (const k of KS) {
      const rounds = Math.max(1, Math.round(EVENTS / k));
      await sleep(PAUSE_MS);
      const before = process.cpuUsage();
      for (let r = 0; r < rounds; r++) {
        for (let i = 0; i < k; i++) {
          seq++;
          const eventId = `00000000-0000-4000-8000-${String(seq).padStart(12, "0")}`;
          const json = JSON.stringify({ id: eventId, timestamp: new Date().toISOString(), source: "user", kind: "MessageEvent", llm_message: { role: "user", content: [{ type: "text", text: `fanout flush ${seq} ${"x".repeat(200)}` }] }, activated_microagents: [], extended_content: [] });
          server.bus.deliver(id, [{ seq, ts: Date.now() * 1000, id: eventId, json }]);
        }
        await sleep(PAUSE_MS);
      }
      const cpu = process.cpuUsage(before);
      // The pauses cost nothing; the driver's own work (building K events) is a few µs an event.
      const perDelivery = (cpu.user + cpu.system) / (rounds * k * SUBSCRIBERS);
      await sleep(500);
      const received = (await count()) - base;
      const split = `${(cpu.user / (rounds * k * SUBSCRIBERS)).toFixed(2)} + ${(cpu.system / (rounds * k * SUBSCRIBERS)).toFixed(2)}`;
      console.log(`  ${String(k).padStart(18)}   ${String(rounds * k).padStart(6)}   ${`${perDelivery.toFixed(2)} (${split})`.padStart(34)}   ${received} of ${seq * SUBSCRIBERS}`);
    }
    child.kill();
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
