/**
 * The fan-out benchmark's producer (fanout.bench.ts), in a process of its own: for each step it is
 * sent ({ rate, total }), it posts `total` user messages over HTTP at `rate` per second to the
 * conversation, each text carrying its key, and answers with when each was sent (a wall-clock
 * time both processes share), how many answers were 429s it waited out (Retry-After), and the CPU
 * time it spent (ms).
 *
 * node:http with a keep-alive agent, not fetch: undici's fetch cost this process ~1.2 ms of CPU a
 * message (0.25 of a core at 200 messages/s, on a machine of two cores that the server and the
 * subscribers need), node:http ~0.3 ms (2026-11-26).
 */
import { Agent, request } from "node:http";

const [base, conversationId, key] = process.argv.slice(2) as [string, string, string];
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
const url = new URL(`${base}/api/conversations/${conversationId}/events`);

function postOnce(body: string): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { agent, host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers: { "X-Session-API-Key": key, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } },
      (response) => {
        response.resume();
        response.on("end", () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers["retry-after"] }));
        response.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function post(text: string): Promise<number> {
  let refused = 0;
  const body = JSON.stringify({ role: "user", content: [{ type: "text", text }] });
  for (;;) {
    const { status, retryAfter } = await postOnce(body);
    if (status !== 429) {
      if (status < 200 || status >= 300) throw new Error(`POST …/events answered ${status}`);
      return refused;
    }
    refused++;
    await sleep(1000 * Number(retryAfter ?? 1));
  }
}

process.on("message", async ({ rate, total }: { rate: number; total: number }) => {
  const cpuBefore = process.cpuUsage();
  const sent: Array<[string, number]> = [];
  const posts: Promise<number>[] = [];
  const start = now();
  for (let n = 0; n < total; n++) {
    const wait = start + (n * 1000) / rate - now();
    if (wait > 1) await sleep(wait);
    const stepKey = `${rate}.${n}`;
    sent.push([stepKey, now()]);
    posts.push(post(`fanout ${stepKey}`));
  }
  const refused = (await Promise.all(posts)).reduce((a, b) => a + b, 0);
  const cpu = process.cpuUsage(cpuBefore);
  process.send!({ sent, refused, cpuMs: (cpu.user + cpu.system) / 1000 });
});
process.send!({ ready: true });
