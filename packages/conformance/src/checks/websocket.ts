/**
 * The live-events channel `/sockets/events/{conversation_id}` (spec/asyncapi.yaml and the
 * live-events protocol): the first frame, replay (`resend_all`, `after_id`), live events, resume
 * without gap or duplicate, inbound messages, authentication and close codes.
 */
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { formatIssue, validateEvent } from "@acs-toolkit/validator";
import { ensure, expectLoc, expectSameIds, fail, type Check } from "../check.js";
import { FRAME_TIMEOUT_MS, type CheckContext } from "../context.js";
import { freshTrajectory, userMessage, type AnyEvent } from "../data.js";
import type { Frame, LiveSocket } from "../socket.js";

/** Longest wait for the server to close a connection it must refuse: its 5 s auth window, and a margin. */
const AUTH_WINDOW_MS = 7_000;
/** How long a channel must stay silent where no frame is due. */
const QUIET_MS = 300;

/** The frame is a valid event; returns it. */
function eventOf(frame: Frame, what: string): AnyEvent {
  ensure(frame.json !== undefined, `${what}: a frame that is not JSON: ${frame.text.slice(0, 200)}`);
  ensure(frame.json.kind !== undefined, `${what}: a frame that is not an event: ${frame.text.slice(0, 200)}`);
  const result = validateEvent(frame.json);
  ensure(result.ok, () => `${what}: the frame is not a valid event (${result.errors.map(formatIssue).slice(0, 3).join("; ")}): ${frame.text.slice(0, 200)}`);
  return frame.json;
}

/** The next `count` frames, each a valid event. */
async function events(socket: LiveSocket, count: number, what: string): Promise<AnyEvent[]> {
  const frames = await socket.take(count, FRAME_TIMEOUT_MS, what);
  return frames.map((frame) => eventOf(frame, what));
}

/** The first frame: a LiveFullStateEvent (a ConversationStateUpdateEvent `full_state`) of this conversation. */
async function expectFullState(ctx: CheckContext, socket: LiveSocket, conversationId: string): Promise<{ id: string; count: number; lastId: string | null }> {
  const frame = await socket.next(FRAME_TIMEOUT_MS, "the full_state frame");
  const state = eventOf(frame, "the first frame");
  ensure(state.kind === "ConversationStateUpdateEvent" && state.key === "full_state", `the first frame is a ${state.kind} with key ${JSON.stringify(state.key)}, not a ConversationStateUpdateEvent with key "full_state"`);
  const issues = ctx.spec.componentIssues("LiveFullStateEvent", state);
  ensure(issues.length === 0, () => `the full_state frame is not a LiveFullStateEvent (${issues.slice(0, 3).join("; ")}): ${frame.text.slice(0, 300)}`);
  ensure(state.value.conversation_id === conversationId, `full_state.conversation_id is ${JSON.stringify(state.value.conversation_id)}, not ${conversationId}`);
  return { id: state.id, count: state.value.event_count, lastId: state.value.last_event_id };
}

/** full_state describes the conversation as search lists it (count and last event). */
function expectStateOf(state: { count: number; lastId: string | null }, listed: readonly AnyEvent[]): void {
  ensure(state.count === listed.length, `full_state.event_count is ${state.count}, search lists ${listed.length} events`);
  ensure(state.lastId === (listed.at(-1)?.id ?? null), `full_state.last_event_id is ${JSON.stringify(state.lastId)}, the last event search lists is ${JSON.stringify(listed.at(-1)?.id ?? null)}`);
}

/** Nothing arrives for a moment (where the protocol sends nothing more). */
async function expectQuiet(socket: LiveSocket, what: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  if (socket.pending > 0) {
    const extra = await socket.next(0);
    fail(`${what}: an unexpected frame arrived: ${extra.text.slice(0, 200)}`);
  }
}

/**
 * The frames are the listed events from `from` on, one for one (same JSON values, same order):
 * delivery is in append order, and a listing taken afterwards holds at least what was delivered.
 */
function expectStream(received: readonly AnyEvent[], listed: readonly AnyEvent[], from: number, what: string): void {
  const expected = listed.slice(from, from + received.length);
  expectSameIds(received.map((e) => e.id), expected.map((e) => e.id), what);
  const changed = received.findIndex((event, i) => !isDeepStrictEqual(event, expected[i]));
  ensure(changed < 0, () => `${what}: event ${received[changed]!.id} differs from what search lists: ${JSON.stringify(received[changed]).slice(0, 200)}`);
}

/** Frames (each a valid event) until every id of `awaited` has arrived. */
async function eventsUntil(socket: LiveSocket, awaited: readonly string[], what: string, max = 1_000): Promise<AnyEvent[]> {
  const pending = new Set(awaited);
  const received: AnyEvent[] = [];
  while (pending.size > 0) {
    if (received.length === max) fail(`${what}: ${max} frames without ${[...pending].slice(0, 3).join(", ")}`);
    const event = eventOf(await socket.next(FRAME_TIMEOUT_MS, `${what} (${pending.size} awaited events to come)`), what);
    pending.delete(event.id);
    received.push(event);
  }
  return received;
}

/** A fresh conversation of `size` replayed events, listed once it is quiet. */
async function seeded(ctx: CheckContext, size: number): Promise<{ id: string; listed: AnyEvent[] }> {
  if (size === 0) {
    const id = await ctx.createConversation({});
    return { id, listed: await ctx.settle(id) };
  }
  const { id, listed } = await ctx.seedAndSettle(freshTrajectory(size));
  return { id, listed };
}

/** The server closes the connection with this code (after accepting the upgrade). */
async function expectCloseCode(socket: LiveSocket, code: number, timeoutMs: number, reasonMentions?: string): Promise<void> {
  const closed = await socket.expectClose(timeoutMs);
  ensure(closed.code === code, `${socket.description}: closed with ${closed.code} "${closed.reason}", not ${code}`);
  if (reasonMentions) ensure(closed.reason.includes(reasonMentions), `${socket.description}: the close reason "${closed.reason}" does not name ${reasonMentions}`);
}

/** The next frame is an error frame (LiveErrorFrame) with an entry under `loc`. */
async function expectErrorFrame(ctx: CheckContext, socket: LiveSocket, loc: ReadonlyArray<string | number>, answering: string): Promise<void> {
  const frame = await socket.next(FRAME_TIMEOUT_MS, `the error frame answering ${answering}`);
  ensure(frame.json?.type === "error" && frame.json.kind === undefined, `expected an error frame ({"type":"error"}) for ${answering}, got ${frame.text.slice(0, 200)}`);
  const issues = ctx.spec.componentIssues("LiveErrorFrame", frame.json);
  ensure(issues.length === 0, `the error frame is not a LiveErrorFrame (${issues.join("; ")}): ${frame.text.slice(0, 200)}`);
  expectLoc(frame.json.detail, { loc, prefix: true });
}

const userMessagesOf = (listed: readonly AnyEvent[]) => listed.filter((e) => e.kind === "MessageEvent" && e.source === "user");

export const websocketChecks: Check[] = [
  {
    id: "ws.first-frame",
    title: "the first frame is a full_state ConversationStateUpdateEvent (count, last event), not stored, then nothing unasked",
    spec: "asyncapi conversationEvents (first frame, LiveFullStateEvent)",
    needs: ["websocket"],
    async run(ctx) {
      const { id, listed } = await ctx.main();
      const socket = await ctx.socket(id);
      const state = await expectFullState(ctx, socket, id);
      expectStateOf(state, listed);
      ensure(!listed.some((e) => e.id === state.id), `the full_state frame has the id of a stored event (${state.id})`);
      await expectQuiet(socket, "without resend_all or after_id");
      const after = await ctx.listing(id);
      ensure(after.length === listed.length, `after connecting, search lists ${after.length} events instead of ${listed.length}: full_state was stored`);
    },
  },
  {
    id: "ws.resend-all",
    title: "resend_all=true sends every stored event after the first frame, as search lists them",
    spec: "asyncapi conversationEvents resend_all",
    needs: ["websocket"],
    async run(ctx) {
      const { id, listed } = await ctx.main();
      const socket = await ctx.socket(id, { query: { resend_all: "true" } });
      const state = await expectFullState(ctx, socket, id);
      expectStateOf(state, listed);
      expectStream(await events(socket, state.count, "replay"), listed, 0, "resend_all replay");
      await expectQuiet(socket, "after the replay");
    },
  },
  {
    id: "ws.after-id",
    title: "after_id=X sends the stored events after X (and wins over resend_all)",
    spec: "asyncapi conversationEvents after_id",
    needs: ["websocket"],
    async run(ctx) {
      const { id, listed } = await ctx.main();
      const from = listed.length - 10;
      const afterId = listed[from - 1]!.id;
      for (const query of [{ after_id: afterId }, { after_id: afterId, resend_all: "true" }] as Array<Record<string, string>>) {
        const socket = await ctx.socket(id, { query });
        await expectFullState(ctx, socket, id);
        expectStream(await events(socket, 10, "replay after after_id"), listed, from, `replay with ${JSON.stringify(query)}`);
        await expectQuiet(socket, `after the replay with ${JSON.stringify(query)}`);
        socket.close();
      }
    },
  },
  {
    id: "ws.live",
    title: "an event recorded over HTTP is pushed to every connected client, as search lists it",
    spec: "asyncapi receiveEvents (live)",
    needs: ["websocket", "append"],
    async run(ctx) {
      const { id, listed } = await seeded(ctx, 3);
      const sockets = [await ctx.socket(id), await ctx.socket(id)];
      for (const socket of sockets) expectStateOf(await expectFullState(ctx, socket, id), listed);
      const appended = await ctx.append(id, "pushed live");
      const after = await ctx.listing(id);
      ensure(after[listed.length]?.id === appended.id, `the appended event ${appended.id} is not listed right after the events that were there`);
      for (const [i, socket] of sockets.entries()) {
        expectStream(await events(socket, 1, `the live event on client ${i + 1}`), after, listed.length, `client ${i + 1}`);
      }
    },
  },
  {
    id: "ws.inbound-message",
    title: "a Message sent on the socket is recorded as a user MessageEvent and pushed to every client, the sender too",
    spec: "asyncapi sendUserMessage",
    needs: ["websocket"],
    async run(ctx) {
      const { id, listed } = await seeded(ctx, 0);
      const sender = await ctx.socket(id);
      const other = await ctx.socket(id);
      expectStateOf(await expectFullState(ctx, sender, id), listed);
      expectStateOf(await expectFullState(ctx, other, id), listed);
      const words = `sent on the socket ${ctx.runTag}`;
      sender.send(userMessage(words));
      const [mine] = await events(sender, 1, "the sender's own message");
      const [theirs] = await events(other, 1, "the message on another client");
      for (const event of [mine!, theirs!]) {
        ensure(event.kind === "MessageEvent" && event.source === "user", `expected a user MessageEvent, got ${event.kind} from ${event.source}`);
        ensure(event.llm_message?.content?.[0]?.text === words, `the pushed message's text is not the one sent: ${JSON.stringify(event.llm_message)}`);
      }
      ensure(isDeepStrictEqual(mine, theirs), "the two clients received different events for the one message");
      expectStream([mine!], await ctx.listing(id), listed.length, "the recorded message");
    },
  },
  {
    id: "ws.inbound-invalid",
    title: "an invalid inbound frame gets an error frame (loc under message), is not recorded, and the connection stays open",
    spec: "asyncapi conversationEvents (LiveErrorFrame)",
    needs: ["websocket"],
    async run(ctx) {
      const { id, listed } = await seeded(ctx, 0);
      const socket = await ctx.socket(id);
      await expectFullState(ctx, socket, id);
      for (const [sent, loc] of [
        [JSON.stringify({ role: "robot", content: [] }), ["message"]],
        [JSON.stringify({ role: "assistant", content: [] }), ["message", "role"]],
        ["this is not JSON", ["message"]],
      ] as const) {
        socket.send(sent);
        await expectErrorFrame(ctx, socket, loc, sent);
      }
      ensure(socket.isOpen, "the connection was closed after an invalid frame");
      socket.send(userMessage("valid after the invalid ones"));
      const [event] = await events(socket, 1, "the valid message after the invalid ones");
      const after = await ctx.listing(id);
      expectStream([event!], after, listed.length, "the valid message");
      const users = userMessagesOf(after);
      ensure(users.length === 1, `${users.length} user messages are recorded; only the valid one should be`);
    },
  },
  {
    id: "ws.resume",
    title: "reconnecting with after_id of the last event received gives exactly the missed events, then live ones",
    spec: "asyncapi conversationEvents after_id (resume)",
    needs: ["websocket", "append"],
    async run(ctx) {
      const { id, listed } = await seeded(ctx, 10);
      const first = await ctx.socket(id, { query: { resend_all: "true" } });
      const state = await expectFullState(ctx, first, id);
      const received = await events(first, state.count, "the replay before the disconnect");
      expectStream(received, listed, 0, "the replay before the disconnect");
      first.close();
      await first.closed;
      const missed = [await ctx.append(id, "missed 1"), await ctx.append(id, "missed 2"), await ctx.append(id, "missed 3")];
      const second = await ctx.socket(id, { query: { after_id: received.at(-1)!.id } });
      await expectFullState(ctx, second, id);
      const resumed = await eventsUntil(second, missed.map((e) => e.id), "the events missed while disconnected");
      const live = await ctx.append(id, "live after the resume");
      resumed.push(...(await eventsUntil(second, [live.id], "the live event after the resume")));
      expectStream(resumed, await ctx.listing(id), received.length, "events after the reconnect");
    },
  },
  {
    id: "ws.join",
    title: "events appended while the replay is sent arrive once each, in order: no gap, no duplicate at the join",
    spec: "asyncapi conversationEvents (replay and live join)",
    needs: ["websocket", "append"],
    async run(ctx) {
      const { id, listed } = await seeded(ctx, 40);
      const appending = (async () => {
        const appended: AnyEvent[] = [];
        for (let i = 0; i < 30; i++) appended.push(await ctx.append(id, `during the replay ${i}`));
        return appended;
      })();
      const socket = await ctx.socket(id, { query: { resend_all: "true" } });
      await expectFullState(ctx, socket, id);
      const appended = await appending;
      const received = await eventsUntil(socket, [...listed, ...appended].map((e) => e.id), "the replay and the live events");
      expectStream(received, await ctx.listing(id), 0, "replay then live with appends during the replay");
    },
  },
  {
    id: "ws.auth-frame",
    title: "a client without the header authenticates with a first frame {type: auth}",
    spec: "asyncapi conversationEvents (LiveAuthFrame)",
    needs: ["key", "websocket"],
    async run(ctx) {
      const { id, listed } = await seeded(ctx, 0);
      const socket = await ctx.socket(id, { key: null });
      socket.send({ type: "auth", session_api_key: ctx.apiKey });
      expectStateOf(await expectFullState(ctx, socket, id), listed);
      // Authenticated: a message is accepted (where reading is public, only an authenticated client may send).
      socket.send(userMessage("authenticated by frame"));
      const [event] = await events(socket, 1, "the message of the client authenticated by frame");
      ensure(event!.kind === "MessageEvent" && event!.source === "user", `expected the user's MessageEvent, got ${event!.kind}`);
    },
  },
  {
    id: "ws.query-key",
    title: "the deprecated session_api_key query parameter is still accepted",
    spec: "asyncapi conversationEvents session_api_key (deprecated)",
    needs: ["key", "websocket"],
    async run(ctx) {
      const { id, listed } = await seeded(ctx, 0);
      const socket = await ctx.socket(id, { key: null, query: { session_api_key: ctx.apiKey! } });
      expectStateOf(await expectFullState(ctx, socket, id), listed);
      socket.send(userMessage("authenticated by query"));
      const [event] = await events(socket, 1, "the message of the client authenticated by query");
      ensure(event!.kind === "MessageEvent" && event!.source === "user", `expected the user's MessageEvent, got ${event!.kind}`);
    },
  },
  {
    id: "ws.close-unauthorized",
    title: "a wrong key (header or auth frame) is closed with 4001",
    spec: "asyncapi conversationEvents (close 4001)",
    needs: ["key", "websocket"],
    async run(ctx) {
      const { id } = await ctx.main();
      await expectCloseCode(await ctx.socket(id, { key: "acs-conformance-wrong-key" }), 4001, FRAME_TIMEOUT_MS);
      const framed = await ctx.socket(id, { key: null });
      framed.send({ type: "auth", session_api_key: "acs-conformance-wrong-key" });
      await expectCloseCode(framed, 4001, FRAME_TIMEOUT_MS);
    },
  },
  {
    id: "ws.unauthenticated",
    title: "a client that never authenticates is closed with 4001 after the auth window (5 s); where reading is public it gets events but its messages are refused",
    spec: "asyncapi conversationEvents (close 4001, public read)",
    needs: ["key", "websocket"],
    async run(ctx) {
      const { id, listed } = await seeded(ctx, 0);
      const socket = await ctx.socket(id, { key: null });
      if (!(await ctx.publicRead())) {
        await expectCloseCode(socket, 4001, AUTH_WINDOW_MS);
        return;
      }
      expectStateOf(await expectFullState(ctx, socket, id), listed);
      socket.send(userMessage("from a client without a key"));
      await expectErrorFrame(ctx, socket, ["message"], "a message from a client without a key");
      const users = userMessagesOf(await ctx.listing(id));
      ensure(users.length === 0, "the message of a client without a key was recorded");
      return "reading is public: events served, the message refused";
    },
  },
  {
    id: "ws.close-not-found",
    title: "an unknown conversation (or an id that is not a UUID) is closed with 4004",
    spec: "asyncapi conversationEvents (close 4004)",
    needs: ["websocket"],
    async run(ctx) {
      for (const id of ["00000000-0000-4000-8000-00000000c0f0", "not-a-uuid"]) {
        await expectCloseCode(await ctx.socket(id), 4004, FRAME_TIMEOUT_MS);
      }
    },
  },
  {
    id: "ws.close-bad-request",
    title: "an after_id not in the conversation, or a bad resend_all, is closed with 4400 naming the parameter",
    spec: "asyncapi conversationEvents (close 4400)",
    needs: ["websocket"],
    async run(ctx) {
      const { id } = await ctx.main();
      await expectCloseCode(await ctx.socket(id, { query: { after_id: randomUUID() } }), 4400, FRAME_TIMEOUT_MS, "after_id");
      await expectCloseCode(await ctx.socket(id, { query: { resend_all: "maybe" } }), 4400, FRAME_TIMEOUT_MS, "resend_all");
    },
  },
];
