/**
 * The OpenHands web client's connection, made exactly as it makes it (OpenHands/OpenHands frontend:
 * `buildWebSocketUrl` + `useWebSocket`): a plain WebSocket to `/sockets/events/{id}` whose query
 * carries the key as `session_api_key` after the replay parameters, messages sent as JSON text
 * frames, every frame parsed as an event and de-duplicated by id. Three ways it asks for history:
 *  - the main conversation after its REST history: `resend_mode=since&after_timestamp=<timestamp of
 *    the newest event it has>` (inclusive: that event comes again), or `resend_mode=all` when the
 *    history is empty;
 *  - the planning sub-conversation: `resend_all=true`, counting frames up to `…/events/count`.
 * Against both the reference server and the mock, while events are being appended: the history
 * comes once, in order, then the live events, each once.
 */
import { WebSocket } from "ws";
import type { Event } from "@acs-toolkit/schema";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { call, createConversation, listing, recording, TARGETS, type Target } from "./support.js";

const ids = (events: ReadonlyArray<{ id: string }>) => events.map((e) => e.id);

/** A socket as the web client opens it: URLSearchParams of its query params, in its order. */
function connect(target: Target, id: string, queryParams: Record<string, string | boolean>) {
  const params = new URLSearchParams(Object.fromEntries(Object.entries({ ...queryParams, session_api_key: target.key }).map(([k, v]) => [k, String(v)])));
  const socket = new WebSocket(`${target.url.replace(/^http/, "ws")}/sockets/events/${id}?${params.toString()}`);
  const frames: any[] = [];
  socket.onmessage = (message) => frames.push(JSON.parse(String(message.data)));
  const opened = new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error("the socket failed"));
  });
  return { socket, frames, opened };
}

/** Frames that are events of the conversation: not the full_state snapshot, once by id (as the web client's store keeps them). */
function eventsOf(frames: readonly any[]): Event[] {
  const seen = new Set<string>();
  return frames.filter((f) => !(f.kind === "ConversationStateUpdateEvent" && f.key === "full_state") && !seen.has(f.id) && seen.add(f.id));
}

/** Appends `count` user messages over HTTP, one after another, as another client would meanwhile. */
async function appendMessages(target: Target, id: string, count: number, tag: string): Promise<string[]> {
  const appended: string[] = [];
  for (let i = 0; i < count; i++) appended.push((await call(target, "POST", `/api/conversations/${id}/events`, { role: "user", content: [{ type: "text", text: `${tag} ${i}` }] })).id);
  return appended;
}

describe.each(TARGETS.map((start) => [start.name === "startReference" ? "the reference server" : "the mock", start] as const))("against %s", (_name, start) => {
  let target: Target;
  beforeAll(async () => void (target = await start()));
  afterAll(() => target?.close());

  it("main conversation: REST history, then resend_mode=since&after_timestamp=<newest> — the newest again, then live events, once each, in order", async () => {
    const id = await createConversation(target, recording(41));
    const history = await listing(target, id); // what the web client loads over REST first
    const newest = history.at(-1)!;
    const { socket, frames, opened } = connect(target, id, { resend_mode: "since", after_timestamp: newest.timestamp });
    const during = appendMessages(target, id, 15, "during the connect");
    await opened;
    const appended = await during;
    // A message on the socket runs the agent: the mock's answers it, after the message.
    socket.send(JSON.stringify({ role: "user", content: [{ type: "text", text: "sent on the socket" }] }));
    const isSent = (f: any) => f.kind === "MessageEvent" && f.source === "user" && f.llm_message.content[0]?.text === "sent on the socket";
    await vi.waitFor(() => expect(frames.some(isSent)).toBe(true), { timeout: 10_000, interval: 20 });
    const events = frames.slice(1, frames.findIndex(isSent) + 1);
    const sent = events.at(-1)!;
    const final = await listing(target, id);
    const upToSent = final.slice(0, final.findIndex((e) => e.id === sent.id) + 1);
    expect(frames[0]).toMatchObject({ kind: "ConversationStateUpdateEvent", key: "full_state", value: { id, execution_status: expect.any(String) } });
    // Every frame is a different event (nothing sent twice), and together they are what search lists
    // from the newest event the history had (inclusive) on, in that order.
    expect(new Set(ids(events)).size).toBe(events.length);
    expect(ids(events)).toEqual(ids(upToSent.slice(upToSent.findIndex((e) => e.id === newest.id))));
    expect(ids(events)).toEqual(expect.arrayContaining(appended));
    expect(events).toEqual(upToSent.slice(-events.length)); // each as stored
    // REST history + socket, de-duplicated by id as the web client does: the whole conversation once.
    expect(ids(eventsOf([...history, ...events]))).toEqual(ids(upToSent));
    socket.close();
  });

  it("main conversation before its REST history is loaded (or when that failed): resend_mode=all — every event once, in order, then live ones", async () => {
    const id = await createConversation(target, recording(43));
    const { socket, frames, opened } = connect(target, id, { resend_mode: "all" });
    const during = appendMessages(target, id, 15, "during the connect");
    await opened;
    await during;
    const final = await listing(target, id);
    await vi.waitFor(() => expect(frames.length).toBe(1 + final.length), { timeout: 10_000, interval: 20 });
    expect(frames[0]).toMatchObject({ kind: "ConversationStateUpdateEvent", key: "full_state" });
    expect(frames.slice(1)).toEqual(final);
    socket.close();
  });

  it("planning sub-conversation: resend_all=true — as many history frames as …/events/count says, in order, then live ones", async () => {
    const id = await createConversation(target, recording(47));
    const expectedCount = await call(target, "GET", `/api/conversations/${id}/events/count`);
    const { socket, frames, opened } = connect(target, id, { resend_all: true });
    await opened;
    await vi.waitFor(() => expect(frames.length).toBe(1 + expectedCount), { timeout: 10_000, interval: 20 });
    const history = await listing(target, id);
    expect(frames.slice(1)).toEqual(history);
    const [live] = await appendMessages(target, id, 1, "live");
    await vi.waitFor(() => expect(frames.length).toBe(2 + expectedCount), { timeout: 10_000, interval: 20 });
    expect(frames.at(-1)!.id).toBe(live);
    socket.close();
  });
});
