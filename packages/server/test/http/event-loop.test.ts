/**
 * Heavy requests do not hold the request thread: while body-filtered
 * counts and searches over long messages run, and while a large replay is parsed and stored,
 * /health keeps answering. Asserted as interleaving (how many /health answers come back before
 * the heavy answers do), never as times: how long things take is measured by
 * bench/event-loop.bench.ts.
 */
import { request } from "node:http";
import { gzipSync } from "node:zlib";
import type { Event, MessageEvent } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY, startTestServer, type TestServer } from "../support/harness.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

/** Asks /health again and again, one at a time, until `done` settles; how many answers came first. */
async function healthAnswersWhile(done: Promise<unknown>): Promise<number> {
  let settled = false;
  void done.finally(() => (settled = true));
  let answers = 0;
  while (!settled) {
    const reply = await fetch(`${t.url}/health`);
    expect(reply.status).toBe(200);
    await reply.arrayBuffer();
    if (!settled) answers++;
  }
  return answers;
}

const message = (i: number, text: string): MessageEvent =>
  ({
    id: `long-${i}`,
    timestamp: new Date(Date.UTC(2026, 1, 5, 9) + i * 1000).toISOString().replace("Z", ""),
    source: "user",
    llm_message: { role: "user", content: [{ type: "text", text }] },
    kind: "MessageEvent",
  }) as MessageEvent;

describe("a body filter of 1,000 repeated characters over 1,500 messages of 1,900", () => {
  const id = "0d3c1e9a-5b7f-4c2d-8e6a-1f2b3c4d5e6f";
  beforeAll(async () => {
    const events = Array.from({ length: 1_500 }, (_, i) => message(i, "a".repeat(1_900)));
    await t.server.store.createConversation({ id, status: "STOPPED" }, events.map((event) => ({ event: event as Event, json: JSON.stringify(event) })));
  });

  it("counts and pages are right, and /health answers while twenty of each run", async () => {
    const headers = { "X-Session-API-Key": KEY };
    const body = "a".repeat(1_000);
    const heavy = [
      ...Array.from({ length: 20 }, () => fetch(`${t.url}/api/conversations/${id}/events/count?body=${body}`, { headers }).then((r) => r.json())),
      ...Array.from({ length: 20 }, () => fetch(`${t.url}/api/conversations/${id}/events/search?limit=100&body=${body}`, { headers }).then((r) => r.json())),
    ];
    const answers = await healthAnswersWhile(Promise.all(heavy));
    const results = await Promise.all(heavy);
    expect(results.slice(0, 20)).toEqual(Array(20).fill(1_500));
    for (const page of results.slice(20) as Array<{ items: unknown[]; next_page_id: string | null }>) {
      expect(page.items).toHaveLength(100);
      expect(page.next_page_id).not.toBeNull();
    }
    const none = await fetch(`${t.url}/api/conversations/${id}/events/count?body=${"a".repeat(999)}b`, { headers });
    expect(await none.json()).toBe(0);
    expect(answers).toBeGreaterThanOrEqual(3);
  });
});

describe("a large replay", () => {
  // 12,000 events, 7.6 MB: parsed off the request thread and stored in about 50 chunks of rows
  // (at most 250 rows each), so /health gets its turns in between. Sized for a busy machine: the import
  // threads run at nice 10 (threads/pool.ts), and under a parallel test run a 35 MB replay starved
  // past the test's minute; the size is not what this asserts, the interleaving is.
  it("is parsed and stored while /health answers, and the conversation appears whole, never in part", { timeout: 180_000 }, async () => {
    const template = exampleEvents();
    const events = Array.from({ length: 150 }, (_, copy) => template.map((e) => ({ ...e, id: e.id.replace(/^.{8}/, copy.toString(16).padStart(8, "0")) }))).flat();
    const id = crypto.randomUUID();
    const body = JSON.stringify({ conversation_id: id, replay_json: events.map((e) => JSON.stringify(e)).join("\n") });
    expect(body.length).toBeGreaterThan(5 * 1024 * 1024);

    // The answer, and the moment the whole body has left (the server has it all from then on).
    let sent!: () => void;
    const bodySent = new Promise<void>((resolve) => (sent = resolve));
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${t.url}/api/conversations`, { method: "POST", headers: { "X-Session-API-Key": KEY, "Content-Type": "application/json" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      });
      req.on("error", reject);
      req.end(body, () => sent());
    });
    await bodySent;
    // Meanwhile the conversation does not exist, in part or at all.
    const partial: number[] = [];
    const watching = (async () => {
      let settled = false;
      void answer.finally(() => (settled = true));
      while (!settled) {
        const info = await fetch(`${t.url}/api/conversations/${id}`, { headers: { "X-Session-API-Key": KEY } });
        if (info.status === 200 && !settled) partial.push(((await info.json()) as { event_count: number }).event_count);
        else await info.arrayBuffer();
      }
    })();
    const answers = await healthAnswersWhile(answer);
    await watching;
    const { status, text } = await answer;
    expect(status, text.slice(0, 300)).toBe(200);
    expect(partial.filter((count) => count !== events.length)).toEqual([]);
    const info = await fetch(`${t.url}/api/conversations/${id}`, { headers: { "X-Session-API-Key": KEY } });
    expect(((await info.json()) as { event_count: number }).event_count).toBe(events.length);
    expect(answers).toBeGreaterThanOrEqual(3);
  });
});

describe("a large body is answered as a small one", () => {
  const template = exampleEvents();
  const large = (copies: number) => Array.from({ length: copies }, (_, copy) => template.map((e) => ({ ...e, id: e.id.replace(/^.{8}/, copy.toString(16).padStart(8, "0")) }))).flat();
  const post = (body: string) => t.call("POST", "/api/conversations", { body, headers: { "Content-Type": "application/json" } });

  it("422 at the event and field of a bad event, at the position of a syntax error, at a repeated id; 409 for a taken id", async () => {
    const events = large(60) as Array<Record<string, unknown>>;
    events[2_345] = { ...events[2_345], timestamp: "yesterday" };
    const bad = await post(JSON.stringify({ replay_json: events.map((e) => JSON.stringify(e)).join("\n") }));
    expect(bad.status, bad.text.slice(0, 300)).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["body", "replay_json", 2_345, "timestamp"]);

    const valid = large(60);
    const text = JSON.stringify({ replay_json: valid.map((e) => JSON.stringify(e)).join("\n") });
    const syntax = await post(text.slice(0, -1));
    expect(syntax.body.detail[0]).toMatchObject({ loc: ["body", [...text].length - 1], type: "json_invalid" });

    const repeated = [...valid.slice(0, 3_000), { ...valid[10]! }];
    const duplicate = await post(JSON.stringify({ replay_json: JSON.stringify(repeated) }));
    expect(duplicate.body.detail[0].loc).toEqual(["body", "replay_json", 3_000, "id"]);

    const id = crypto.randomUUID();
    expect((await post(JSON.stringify({ conversation_id: id, replay_json: text.length && JSON.parse(text).replay_json }))).status).toBe(200);
    const taken = await post(JSON.stringify({ conversation_id: id.replace(/-/g, ""), replay_json: JSON.parse(text).replay_json }));
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ detail: `Conversation already exists: ${id}` });
  });

  it("a compressed body takes the same way; a corrupt one is a 422, one over the limit a 413", async () => {
    const small = await startTestServer(["--json-limit-bytes", String(1024 * 1024)]);
    try {
      // Copies of the example events sized to the limit (the catalogue decides how large one copy is):
      // about half of it, and then three times it.
      const copyBytes = JSON.stringify(template).length;
      const half = Math.floor(512 * 1024 / copyBytes);
      const replay = large(half).map((e) => JSON.stringify(e)).join("\n");
      const gzipped = gzipSync(JSON.stringify({ replay_json: replay }));
      const send = (body: Uint8Array, encoding = "gzip") =>
        small.call("POST", "/api/conversations", { body: new Uint8Array(body), headers: { "Content-Type": "application/json", "Content-Encoding": encoding } });
      const created = await send(gzipped);
      expect(created.status, created.text).toBe(200);
      expect((await small.call("GET", `/api/conversations/${created.body.conversation_id}`)).body.event_count).toBe(half * template.length);
      const corrupt = await send(gzipped.subarray(0, gzipped.length / 2));
      expect(corrupt.status, corrupt.text).toBe(422);
      expect(corrupt.body.detail[0].loc).toEqual(["body"]);
      const tooLarge = await send(gzipSync(JSON.stringify({ replay_json: large(6 * half).map((e) => JSON.stringify(e)).join("\n") })));
      expect(tooLarge.status, tooLarge.text).toBe(413);
      const plainTooLarge = await send(Buffer.from(JSON.stringify({ replay_json: "x".repeat(2 * 1024 * 1024) })), "identity");
      expect(plainTooLarge.status, plainTooLarge.text).toBe(413);
      expect((await small.call("GET", "/health")).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});
