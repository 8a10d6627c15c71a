/**
 * The fan-out benchmark's producer (fanout.bench.ts), in a process of its own: for each step it is
 * sent ({ rate, total }), it posts `total` user messages over HTTP at `rate` per second to the
 * conversation, each text carrying its key, and answers with when each was sent (a wall-clock
 * time both processes share) and how many answers were 429s it waited out (Retry-After).
 */
const [base, conversationId, key] = process.argv.slice(2) as [string, string, string];
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(text: string): Promise<number> {
  let refused = 0;
  for (;;) {
    const response = await fetch(`${base}/api/conversations/${conversationId}/events`, {
      method: "POST",
      headers: { "X-Session-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ role: "user", content: [{ type: "text", text }] }),
    });
    await response.arrayBuffer();
    if (response.status !== 429) {
      if (!response.ok) throw new Error(`POST …/events answered ${response.status}`);
      return refused;
    }
    refused++;
    await sleep(1000 * Number(response.headers.get("retry-after") ?? 1));
  }
}

process.on("message", async ({ rate, total }: { rate: number; total: number }) => {
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
  process.send!({ sent, refused });
});
process.send!({ ready: true });
