/**
 * @openhands/typescript-client (pinned 1.39.0, from npm) against the reference server and the mock:
 * its own calls and URL patterns, as an application drives them. Search with every filter, paging,
 * count, full sync, the live socket, send message, execution status and stats.
 */
import { ConversationExecutionStatus, EventSortOrder, RemoteConversation, RemoteWorkspace, type Agent } from "@openhands/typescript-client";
import type { Event } from "@acs-toolkit/schema";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { expectedSearchIds } from "@acs-toolkit/test-kit/trajectory";
import { createConversation, listing, recording, STATS_SNAPSHOT, TARGETS, WORD, type Target } from "./support.js";

type Filters = { kind?: string; source?: string; body?: string; timestamp__gte?: string; timestamp__lt?: string };

const ids = (events: ReadonlyArray<{ id: string }>) => events.map((e) => e.id);

describe.each(TARGETS.map((start) => [start.name === "startReference" ? "the reference server" : "the mock", start] as const))("against %s", (_name, start) => {
  let target: Target;
  let id: string;
  let stored: Event[];
  let conversation: RemoteConversation;
  const received: Event[] = [];

  beforeAll(async () => {
    target = await start();
    id = await createConversation(target, recording(31));
    stored = await listing(target, id);
    const workspace = new RemoteWorkspace({ host: target.url, workingDir: "/workspace", apiKey: target.key });
    // The agent only matters to start(), which creates a conversation: this one exists.
    conversation = new RemoteConversation({} as Agent, workspace, { conversationId: id, callback: (event) => received.push(event as unknown as Event) });
    await conversation.start(); // GET /api/conversations/{id}: verifies that it exists
  });
  afterAll(async () => {
    await conversation?.close();
    await target?.close();
  });

  it.each<[string, Filters & { sort_order?: EventSortOrder }]>([
    ["kind (short)", { kind: "ActionEvent" }],
    ["kind (the agent server's qualified path)", { kind: "openhands.sdk.event.llm_convertible.message.MessageEvent" }],
    ["kind of a later release, none stored", { kind: "openhands.sdk.event.acs_compat.NotYetAnEvent" }],
    ["source", { source: "agent" }],
    ["source hook", { source: "hook" }],
    ["body", { body: WORD }],
    ["timestamp__gte", { timestamp__gte: "" }],
    ["timestamp__lt", { timestamp__lt: "" }],
    ["every filter at once, newest first", { kind: "MessageEvent", source: "user", body: WORD, timestamp__gte: "", sort_order: EventSortOrder.TIMESTAMP_DESC }],
  ])("search by %s lists what the filters keep, page after page", async (_what, query) => {
    const filters = { ...query };
    // Timestamps as the client's users pass them: an event's own (naive) timestamp.
    if (filters.timestamp__gte === "") filters.timestamp__gte = stored[20]!.timestamp;
    if (filters.timestamp__lt === "") filters.timestamp__lt = stored[20]!.timestamp;
    const { sort_order: order, ...countFilters } = filters;
    const expected = expectedSearchIds(stored, countFilters, order === EventSortOrder.TIMESTAMP_DESC);
    expect(expected.length > 0, "the recording holds events this search keeps").toBe(!query.kind?.endsWith("NotYetAnEvent"));
    const pages: Event[] = [];
    for (let pageId: string | undefined, n = 0; ; n++) {
      expect(n).toBeLessThan(100);
      const page = await conversation.state.events.search({ ...filters, limit: 7, ...(pageId && { page_id: pageId }) });
      pages.push(...(page.items as unknown as Event[]));
      if (!page.next_page_id) break;
      pageId = page.next_page_id;
    }
    expect(ids(pages)).toEqual(expected);
    expect(await conversation.state.events.count(countFilters)).toBe(expected.length);
  });

  it("search from an event id as page_id starts at that event, as the agent server reads it", async () => {
    const page = await conversation.state.events.search({ page_id: stored[12]!.id, limit: 4 });
    expect(ids(page.items)).toEqual(ids(stored.slice(12, 16)));
  });

  it("full sync (getEvents) returns every stored event, as stored", async () => {
    const all = (await conversation.state.events.getEvents()) as unknown as Event[];
    expect(all).toEqual(stored);
  });

  it("getExecutionStatus() and conversationStats() read the recorded state", async () => {
    expect(await conversation.state.getExecutionStatus()).toBe(ConversationExecutionStatus.FINISHED);
    expect(await conversation.conversationStats()).toEqual({ usage_to_metrics: { agent: { ...STATS_SNAPSHOT, costs: [], response_latencies: [], token_usages: [] } } });
    expect(await conversation.state.getConfirmationPolicy()).toEqual({ kind: "NeverConfirm" });
    expect(await conversation.state.getActivatedKnowledgeSkills()).toEqual([]);
  });

  it("the live socket opens with the full_state, then delivers a message sent with sendMessage (run not recorded)", async () => {
    await conversation.startWebSocketClient();
    await vi.waitFor(() => expect(received.some((e) => e.kind === "ConversationStateUpdateEvent" && e.key === "full_state")).toBe(true), { timeout: 10_000, interval: 20 });
    const fullState = received.find((e) => e.kind === "ConversationStateUpdateEvent" && e.key === "full_state") as Extract<Event, { kind: "ConversationStateUpdateEvent" }>;
    expect(fullState.value).toMatchObject({ id, execution_status: "finished", stats: { usage_to_metrics: { agent: expect.any(Object) } } });
    // The state the client keeps from the socket answers as the REST call did.
    await conversation.state.refresh();
    expect(await conversation.state.getExecutionStatus()).toBe(ConversationExecutionStatus.FINISHED);

    await conversation.sendMessage("Hello from @openhands/typescript-client");
    const isMine = (e: Event) => e.kind === "MessageEvent" && e.source === "user" && e.llm_message.content?.[0]?.type === "text" && e.llm_message.content[0].text === "Hello from @openhands/typescript-client";
    await vi.waitFor(() => expect(received.some(isMine)).toBe(true), { timeout: 10_000, interval: 20 });
    const live = received.find(isMine) as Extract<Event, { kind: "MessageEvent" }>;
    expect(live.llm_message).toEqual({ role: "user", content: [{ type: "text", text: "Hello from @openhands/typescript-client" }] });
    const now = await listing(target, id);
    expect(now.find((e) => e.id === live.id)).toEqual(live);
    // Only what was recorded after the socket opened came live (no replay was asked), once each.
    const liveEvents = received.filter((e) => !(e.kind === "ConversationStateUpdateEvent" && e.key === "full_state"));
    expect(ids(liveEvents)).toEqual(ids(now.slice(stored.length)));
    await conversation.stopWebSocketClient();
  });
});
