/**
 * The live-events channel `/sockets/events/{conversation_id}` (spec/asyncapi.yaml and the
 * live-events protocol): the first frame, replay (`resend_all`, `resend_mode`, `after_id`), live
 * events, resume without gap or duplicate, inbound messages, authentication and close codes. A
 * conversation may record events of its own while a check runs (an agent): every check compares
 * the frames with the conversation as search lists it from where the stream began, so live events
 * of the implementation's own are allowed wherever they fall in order.
 */
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { LIVE_CLOSE_CODES } from "@acs-toolkit/schema";
import { formatIssue, validateEvent } from "@acs-toolkit/validator";
import { ensure, expectSameIds, fail, type Check } from "../check.js";
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
  ensure(state.value.id === conversationId, `full_state.id is ${JSON.stringify(state.value.id)}, not ${conversationId} (the agent server's clients read it)`);
  return { id: state.id, count: state.value.event_count, lastId: state.value.last_event_id };
}

/**
 * full_state describes the conversation as search lists it (count and last event) at the moment the
 * stream began, which lies between two listings (the conversation may grow: an implementation's
 * agent records events of its own). The suite's conversations list in append order.
 */
function expectStateBetween(state: { count: number; lastId: string | null }, before: readonly AnyEvent[], after: readonly AnyEvent[]): void {
  ensure(state.count >= before.length && state.count <= after.length, `full_state.event_count is ${state.count}, search lists ${before.length === after.length ? before.length : `${before.length} events before and ${after.length} after`} events`);
  const last = state.count > 0 ? (after[state.count - 1]?.id ?? null) : null;
  ensure(state.lastId === last, `full_state.last_event_id is ${JSON.stringify(state.lastId)}, the event search lists at position ${state.count} is ${JSON.stringify(last)}`);
}

/**
 * Whatever arrives for a moment (where the protocol sends nothing unasked) is a live event: one
 * recorded after the stream began, in order, as search lists it from position `from` on. An
 * implementation with an agent may record some; a replay nobody asked for fails.
 */
async function expectOnlyLive(ctx: CheckContext, socket: LiveSocket, conversationId: string, from: number, what: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  const frames: Frame[] = [];
  while (socket.pending > 0) frames.push(await socket.next(0));
  if (frames.length === 0) return;
  const received = frames.map((frame) => eventOf(frame, what));
  expectStream(received, await ctx.listing(conversationId), from, `${what}: frames that are not events recorded after the stream began`);
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

/**
 * Frames (each a valid event) up to the first that `wanted` accepts, which is returned last; the
 * ones before it must be live events recorded by the implementation (checked by the caller's
 * stream comparison), at most `max`.
 */
async function eventsThrough(socket: LiveSocket, wanted: (event: AnyEvent) => boolean, what: string, max = 1_000): Promise<AnyEvent[]> {
  const received: AnyEvent[] = [];
  for (;;) {
    if (received.length === max) fail(`${what}: ${max} frames without it`);
    const event = eventOf(await socket.next(FRAME_TIMEOUT_MS, what), what);
    received.push(event);
    if (wanted(event)) return received;
  }
}

/** A fresh conversation of `size` replayed events (none: created empty). */
async function seeded(ctx: CheckContext, size: number): Promise<{ id: string; events: AnyEvent[] }> {
  if (size === 0) return { id: await ctx.createConversation({}), events: [] };
  return ctx.seed(freshTrajectory(size));
}

/**
 * Opens a socket between two listings (sending an auth frame first when given its key), and reads
 * its full_state: where the stream began.
 */
async function openBetween(ctx: CheckContext, conversationId: string, options: Parameters<CheckContext["socket"]>[1] & { authFrame?: string } = {}) {
  let state!: { id: string; count: number; lastId: string | null };
  const { before, result: socket, after } = await ctx.between(conversationId, async () => {
    const socket = await ctx.socket(conversationId, options);
    if (options.authFrame !== undefined) socket.send({ type: "auth", session_api_key: options.authFrame });
    state = await expectFullState(ctx, socket, conversationId);
    return socket;
  });
  expectStateBetween(state, before, after);
  return { socket, state, before, after };
}

/** The server closes the connection with this code (after accepting the upgrade). */
async function expectCloseCode(socket: LiveSocket, code: number, timeoutMs: number, reasonMentions?: string): Promise<void> {
  const closed = await socket.expectClose(timeoutMs);
  ensure(closed.code === code, `${socket.description}: closed with ${closed.code} "${closed.reason}", not ${code}`);
  if (reasonMentions) ensure(closed.reason.includes(reasonMentions), `${socket.description}: the close reason "${closed.reason}" does not name ${reasonMentions}`);
}

/**
 * Frames up to the ServerErrorEvent answering an inbound frame (release 1.16.0 of the agent server):
 * a valid event of that kind whose `detail` names where the frame went wrong. The frames before it
 * must be live events (the caller compares them with the listing).
 */
async function expectErrorFrame(socket: LiveSocket, where: string, answering: string): Promise<AnyEvent[]> {
  const frames = await eventsThrough(socket, (event) => event.kind === "ServerErrorEvent", `the ServerErrorEvent answering ${answering}`);
  const error = frames.pop()!;
  ensure(typeof error.detail === "string" && error.detail.includes(where), `the ServerErrorEvent answering ${answering} does not say where (${where}): ${JSON.stringify(error).slice(0, 200)}`);
  return frames;
}

const userMessagesOf = (listed: readonly AnyEvent[]) => listed.filter((e) => e.kind === "MessageEvent" && e.source === "user");

const isUserMessage = (words: string) => (event: AnyEvent) =>
  event.kind === "MessageEvent" && event.source === "user" && event.llm_message?.content?.[0]?.text === words;

export const websocketChecks: Check[] = [
  {
    id: "ws.first-frame",
    title: "the first frame is a full_state ConversationStateUpdateEvent (count, last event, the agent server's id), not stored, then nothing unasked",
    spec: "asyncapi conversationEvents (first frame, LiveFullStateEvent)",
    needs: ["websocket"],
    async run(ctx) {
      const { id } = await ctx.main();
      const { socket, state } = await openBetween(ctx, id);
      ensure(!(await ctx.listing(id)).some((e) => e.id === state.id), `the full_state frame was stored: search lists its id ${state.id}`);
      await expectOnlyLive(ctx, socket, id, state.count, "without resend_all, resend_mode or after_id");
    },
  },
  {
    id: "ws.resend-all",
    title: "resend_all=true sends every stored event after the first frame, as search lists them",
    spec: "asyncapi conversationEvents resend_all",
    needs: ["websocket"],
    async run(ctx) {
      const { id } = await ctx.main();
      const { socket, state } = await openBetween(ctx, id, { query: { resend_all: "true" } });
      expectStream(await events(socket, state.count, "replay"), await ctx.listing(id), 0, "resend_all replay");
      await expectOnlyLive(ctx, socket, id, state.count, "after the replay");
    },
  },
  {
    id: "ws.resend-mode",
    title: "resend_mode=all sends every stored event; resend_mode=since sends those at or after after_timestamp (inclusive), none without one, and wins over resend_all",
    spec: "asyncapi conversationEvents resend_mode, after_timestamp",
    needs: ["websocket"],
    async run(ctx) {
      const { id, events: sent } = await ctx.main();
      const all = await openBetween(ctx, id, { query: { resend_mode: "all" } });
      expectStream(await events(all.socket, all.state.count, "replay"), await ctx.listing(id), 0, "resend_mode=all replay");
      await expectOnlyLive(ctx, all.socket, id, all.state.count, "after the resend_mode=all replay");
      all.socket.close();
      // Events 60 and 61 share an instant, event 59 is a second earlier: inclusive means from event 60.
      const from = sent[60]!;
      const since = await openBetween(ctx, id, { query: { resend_mode: "since", after_timestamp: from.timestamp } });
      const replayed = await events(since.socket, since.state.count - 60, "the since replay");
      ensure(replayed[0]?.id === from.id, `resend_mode=since&after_timestamp=${from.timestamp}: the first event replayed is ${replayed[0]?.id}, not ${from.id}, whose timestamp that is`);
      expectStream(replayed, await ctx.listing(id), 60, `resend_mode=since&after_timestamp=${from.timestamp} replay`);
      await expectOnlyLive(ctx, since.socket, id, since.state.count, "after the since replay");
      since.socket.close();
      const none = await openBetween(ctx, id, { query: { resend_mode: "since", resend_all: "true" } });
      await expectOnlyLive(ctx, none.socket, id, none.state.count, "resend_mode=since without after_timestamp (and resend_all=true, which it overrides)");
    },
  },
  {
    id: "ws.after-id",
    title: "after_id=X sends the stored events after X (and wins over resend_all)",
    spec: "asyncapi conversationEvents after_id",
    needs: ["websocket"],
    async run(ctx) {
      const { id, events: sent } = await ctx.main();
      const from = sent.length - 10;
      const afterId = sent[from - 1]!.id;
      for (const query of [{ after_id: afterId }, { after_id: afterId, resend_all: "true" }] as Array<Record<string, string>>) {
        const { socket, state } = await openBetween(ctx, id, { query });
        expectStream(await events(socket, state.count - from, "replay after after_id"), await ctx.listing(id), from, `replay with ${JSON.stringify(query)}`);
        await expectOnlyLive(ctx, socket, id, state.count, `after the replay with ${JSON.stringify(query)}`);
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
      const { id } = await seeded(ctx, 3);
      const clients = [await openBetween(ctx, id), await openBetween(ctx, id)];
      const appended = await ctx.append(id, "pushed live");
      for (const [i, { socket, state }] of clients.entries()) {
        const received = await eventsUntil(socket, [appended.id], `the live event on client ${i + 1}`);
        expectStream(received, await ctx.listing(id), state.count, `client ${i + 1}`);
      }
    },
  },
  {
    id: "ws.inbound-message",
    title: "a Message sent on the socket is recorded as a user MessageEvent and pushed to every client, the sender too",
    spec: "asyncapi sendUserMessage",
    needs: ["websocket"],
    async run(ctx) {
      const { id } = await seeded(ctx, 0);
      const sender = await openBetween(ctx, id);
      const other = await openBetween(ctx, id);
      const words = `sent on the socket ${ctx.runTag}`;
      sender.socket.send(userMessage(words));
      const mine = await eventsThrough(sender.socket, isUserMessage(words), "the sender's own message");
      const theirs = await eventsThrough(other.socket, isUserMessage(words), "the message on another client");
      ensure(isDeepStrictEqual(mine.at(-1), theirs.at(-1)), "the two clients received different events for the one message");
      const listed = await ctx.listing(id);
      expectStream(mine, listed, sender.state.count, "the sender's frames up to its message");
      expectStream(theirs, listed, other.state.count, "the other client's frames up to the message");
    },
  },
  {
    id: "ws.inbound-invalid",
    title: "an invalid inbound frame gets a ServerErrorEvent saying where (to that socket, not stored), and the connection stays open",
    spec: "asyncapi conversationEvents (Error: ServerErrorEvent)",
    needs: ["websocket"],
    async run(ctx) {
      const { id } = await seeded(ctx, 0);
      const { socket, state } = await openBetween(ctx, id);
      const live: AnyEvent[] = [];
      for (const [sent, where] of [
        [JSON.stringify({ role: "robot", content: [] }), "message"],
        [JSON.stringify({ role: "assistant", content: [] }), "message.role"],
        ["this is not JSON", "message"],
      ] as const) {
        socket.send(sent);
        live.push(...(await expectErrorFrame(socket, where, sent)));
      }
      ensure(socket.isOpen, "the connection was closed after an invalid frame");
      socket.send(userMessage("valid after the invalid ones"));
      live.push(...(await eventsThrough(socket, isUserMessage("valid after the invalid ones"), "the valid message after the invalid ones")));
      const after = await ctx.listing(id);
      expectStream(live, after, state.count, "the events pushed around the error frames");
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
      const { id } = await seeded(ctx, 10);
      const first = await openBetween(ctx, id, { query: { resend_all: "true" } });
      const received = await events(first.socket, first.state.count, "the replay before the disconnect");
      expectStream(received, await ctx.listing(id), 0, "the replay before the disconnect");
      first.socket.close();
      await first.socket.closed;
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
      const { id, events: sent } = await seeded(ctx, 40);
      const appending = (async () => {
        const appended: AnyEvent[] = [];
        for (let i = 0; i < 30; i++) appended.push(await ctx.append(id, `during the replay ${i}`));
        return appended;
      })();
      const socket = await ctx.socket(id, { query: { resend_all: "true" } });
      await expectFullState(ctx, socket, id);
      const appended = await appending;
      const received = await eventsUntil(socket, [...sent, ...appended].map((e) => e.id), "the replay and the live events");
      expectStream(received, await ctx.listing(id), 0, "replay then live with appends during the replay");
    },
  },
  {
    id: "ws.auth-frame",
    title: "a client without the header authenticates with a first frame {type: auth}",
    spec: "asyncapi conversationEvents (LiveAuthFrame)",
    needs: ["key", "websocket"],
    async run(ctx) {
      const { id } = await seeded(ctx, 0);
      const { socket, state } = await openBetween(ctx, id, { key: null, authFrame: ctx.apiKey });
      // Authenticated: a message is accepted (where reading is public, only an authenticated client may send).
      socket.send(userMessage("authenticated by frame"));
      const frames = await eventsThrough(socket, isUserMessage("authenticated by frame"), "the message of the client authenticated by frame");
      expectStream(frames, await ctx.listing(id), state.count, "the frames up to the message of the client authenticated by frame");
    },
  },
  {
    id: "ws.query-key",
    title: "the deprecated session_api_key query parameter is still accepted",
    spec: "asyncapi conversationEvents session_api_key (deprecated)",
    needs: ["key", "websocket"],
    async run(ctx) {
      const { id } = await seeded(ctx, 0);
      const { socket, state } = await openBetween(ctx, id, { key: null, query: { session_api_key: ctx.apiKey! } });
      socket.send(userMessage("authenticated by query"));
      const frames = await eventsThrough(socket, isUserMessage("authenticated by query"), "the message of the client authenticated by query");
      expectStream(frames, await ctx.listing(id), state.count, "the frames up to the message of the client authenticated by query");
    },
  },
  {
    id: "ws.close-unauthorized",
    title: "a wrong key (header or auth frame) is closed with 4001",
    spec: "asyncapi conversationEvents (close 4001)",
    needs: ["key", "websocket"],
    async run(ctx) {
      const { id } = await ctx.main();
      await expectCloseCode(await ctx.socket(id, { key: "acs-conformance-wrong-key" }), LIVE_CLOSE_CODES.unauthorized, FRAME_TIMEOUT_MS);
      const framed = await ctx.socket(id, { key: null });
      framed.send({ type: "auth", session_api_key: "acs-conformance-wrong-key" });
      await expectCloseCode(framed, LIVE_CLOSE_CODES.unauthorized, FRAME_TIMEOUT_MS);
    },
  },
  {
    id: "ws.unauthenticated",
    title: "a client that never authenticates is closed with 4001 after the auth window (5 s); where reading is public it gets events but its messages are refused",
    spec: "asyncapi conversationEvents (close 4001, public read)",
    needs: ["key", "websocket"],
    async run(ctx) {
      const { id } = await seeded(ctx, 0);
      if (!(await ctx.publicRead())) {
        await expectCloseCode(await ctx.socket(id, { key: null }), LIVE_CLOSE_CODES.unauthorized, AUTH_WINDOW_MS);
        return;
      }
      const { socket } = await openBetween(ctx, id, { key: null });
      socket.send(userMessage("from a client without a key"));
      await expectErrorFrame(socket, "message", "a message from a client without a key");
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
        await expectCloseCode(await ctx.socket(id), LIVE_CLOSE_CODES.notFound, FRAME_TIMEOUT_MS);
      }
    },
  },
  {
    id: "ws.close-bad-request",
    title: "an after_id not in the conversation, or a bad resend_all, resend_mode or after_timestamp, is closed with 4400 naming the parameter",
    spec: "asyncapi conversationEvents (close 4400)",
    needs: ["websocket"],
    async run(ctx) {
      const { id } = await ctx.main();
      await expectCloseCode(await ctx.socket(id, { query: { after_id: randomUUID() } }), LIVE_CLOSE_CODES.badRequest, FRAME_TIMEOUT_MS, "after_id");
      await expectCloseCode(await ctx.socket(id, { query: { resend_all: "maybe" } }), LIVE_CLOSE_CODES.badRequest, FRAME_TIMEOUT_MS, "resend_all");
      await expectCloseCode(await ctx.socket(id, { query: { resend_mode: "everything" } }), LIVE_CLOSE_CODES.badRequest, FRAME_TIMEOUT_MS, "resend_mode");
      await expectCloseCode(await ctx.socket(id, { query: { resend_mode: "since", after_timestamp: "yesterday" } }), LIVE_CLOSE_CODES.badRequest, FRAME_TIMEOUT_MS, "after_timestamp");
    },
  },
];
