/**
 * Producers get backpressure: a conversation takes at most MAX_WAITING_MESSAGES client
 * messages waiting to be recorded; past it `POST …/events` answers 429 with `Retry-After`, a
 * live-channel frame a `TooManyRequests` error frame, and nothing of the refused message is
 * stored. The queue is held by a runtime that records each message only when the test says so
 * (as the agent records a message sent during a step when the step ends).
 */
import type { MessageEvent, UserMessage } from "@acs-toolkit/schema";
import { afterEach, describe, expect, it } from "vitest";
import { connectLive, isErrorFrame, livePath } from "@acs-toolkit/test-kit/live";
import { MAX_WAITING_MESSAGES } from "../../src/core/conversations.js";
import type { ConversationRuntime, RuntimeContext } from "../../src/core/runtime.js";
import { KEY, expectConforms, startTestServer, type TestServer } from "../support/harness.js";

const CONV = "7d1c3b2a-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

/** A runtime that holds every user message until `release()`, then has the service record it. */
function holdingRuntime() {
  const held: Array<() => void> = [];
  const runtime: ConversationRuntime = {
    initialStatus: "STOPPED",
    start() {},
    async sendMessage(_conversationId: string, _message: UserMessage, _context: RuntimeContext): Promise<MessageEvent | undefined> {
      await new Promise<void>((resolve) => held.push(resolve));
      return undefined; // recorded by the service, as usual
    },
  };
  return { runtime, held, release: () => held.splice(0).forEach((resume) => resume()) };
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("backpressure on client messages", () => {
  it("answers 429 with Retry-After past the bound, stores nothing of a refused message, and accepts again once the queue drains", async () => {
    const { runtime, held, release } = holdingRuntime();
    server = await startTestServer([], {}, undefined, { runtime });
    expectConforms("createConversation", await server.call("POST", "/api/conversations", { json: { conversation_id: CONV } }), 200);

    const send = (i: number) => server!.call("POST", `/api/conversations/${CONV}/events`, { json: { role: "user", content: [{ type: "text", text: `m${i}` }] } });
    const accepted = Array.from({ length: MAX_WAITING_MESSAGES }, (_, i) => send(i));
    await expect.poll(() => held.length, { timeout: 20_000 }).toBe(MAX_WAITING_MESSAGES);
    const refused = await send(MAX_WAITING_MESSAGES);
    expectConforms("sendMessage", refused, 429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.body.detail).toContain(`${MAX_WAITING_MESSAGES} messages to this conversation are waiting to be recorded`);

    // The same bound on the live channel: an error frame to that socket, the connection stays open.
    const peer = connectLive(server.url, livePath(CONV), { headers: { "X-Session-API-Key": KEY } });
    await peer.opened;
    peer.send({ role: "user", content: [{ type: "text", text: "over the socket" }] });
    const [error] = await peer.waitFor(1, isErrorFrame);
    expect(error!.value).toMatchObject({ kind: "ServerErrorEvent", code: "TooManyRequests" });

    release();
    const replies = await Promise.all(accepted);
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    const count = await server.call("GET", `/api/conversations/${CONV}/events/count`);
    expect(count.body).toBe(MAX_WAITING_MESSAGES); // neither refused message was stored

    const again = send(9_999);
    await expect.poll(() => held.length).toBe(1);
    release();
    expectConforms("sendMessage", await again, 200);
    peer.ws.close();
  });
});
