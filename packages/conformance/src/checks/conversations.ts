/** createConversation: every documented form of the request, read back through search. */
import { randomUUID } from "node:crypto";
import { ensure, expectConforms, type Check } from "../check.js";
import { freshTrajectory, type AnyEvent } from "../data.js";
import { expectHolds } from "../listing.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The text parts of a MessageEvent's message. */
const textsOf = (event: AnyEvent): string[] => (event.llm_message?.content ?? []).filter((c: { type: string }) => c.type === "text").map((c: { text: string }) => c.text);

export const conversationChecks: Check[] = [
  {
    id: "create.empty",
    title: "POST /api/conversations with {} creates a conversation with a UUID that search can read",
    spec: "createConversation 200 (ConversationCreateResponse)",
    async run(ctx) {
      const id = await ctx.createConversation({});
      ensure(UUID.test(id), `conversation_id ${JSON.stringify(id)} is not a UUID`);
      await ctx.searchPage(id);
    },
  },
  {
    id: "create.replay",
    title: "replay_json (JSON Lines) loads every event; search returns them as sent, in order",
    spec: "createConversation replay_json; searchEvents 200 (EventPage)",
    async run(ctx) {
      const { id, events } = await ctx.main();
      const own = expectHolds(await ctx.listing(id), events, "search after the replay");
      return `${events.length} events${own ? ` and ${own} the implementation recorded itself` : ""}`;
    },
  },
  {
    id: "create.replay-forms",
    title: "replay_json is accepted as a JSON array and as an EventPage too",
    spec: "ConversationCreateRequest.replay_json",
    async run(ctx) {
      const events = freshTrajectory(12, 0xc0f4);
      for (const [form, text] of [
        ["a JSON array", JSON.stringify(events)],
        ["an EventPage", JSON.stringify({ items: events, next_page_id: null })],
      ] as const) {
        const id = await ctx.createConversation({ replay_json: text });
        expectHolds(await ctx.listing(id), events as AnyEvent[], `replay_json as ${form}`);
      }
    },
  },
  {
    id: "create.caller-id",
    title: "a caller-supplied conversation_id (hyphenated or 32 hex digits) is the conversation's id, canonical",
    spec: "ConversationCreateRequest.conversation_id",
    async run(ctx) {
      const hyphenated = randomUUID();
      const compact = randomUUID();
      for (const [sent, canonical] of [
        [hyphenated, hyphenated],
        [compact.replace(/-/g, "").toUpperCase(), compact],
      ] as const) {
        const returned = await ctx.createConversation({ conversation_id: sent });
        ensure(returned === canonical, `sent ${sent}: the conversation_id returned is ${JSON.stringify(returned)} instead of ${canonical}`);
        await ctx.searchPage(canonical);
      }
    },
  },
  {
    id: "create.duplicate-id",
    title: "creating a conversation with an id that exists is refused with 409, not a silent overwrite",
    spec: "createConversation 409",
    async run(ctx) {
      const id = randomUUID();
      await ctx.createConversation({ conversation_id: id, initial_user_msg: "first" });
      const again = await ctx.request("POST", "/api/conversations", { json: { conversation_id: id, initial_user_msg: "second" } });
      expectConforms(ctx, "createConversation", again, 409);
      const texts = (await ctx.listing(id)).filter((e) => e.kind === "MessageEvent" && e.source === "user").flatMap(textsOf);
      ensure(texts.includes("first") && !texts.includes("second"), `after the refused duplicate the conversation's user messages are ${JSON.stringify(texts)}, not ["first"]`);
    },
  },
  {
    id: "create.initial-user-msg",
    title: "initial_user_msg becomes a user MessageEvent",
    spec: "ConversationCreateRequest.initial_user_msg",
    async run(ctx) {
      const words = `Hello from acs-conformance ${ctx.runTag}`;
      const id = await ctx.createConversation({ initial_user_msg: words });
      const listed = await ctx.listing(id);
      const message = listed.find((e) => e.kind === "MessageEvent" && e.source === "user" && e.llm_message?.role === "user");
      ensure(message, `no user MessageEvent after initial_user_msg: ${JSON.stringify(listed.map((e) => `${e.kind} from ${e.source}`))}`);
      ensure(textsOf(message).includes(words), `the user message's text is ${JSON.stringify(textsOf(message))}, not the initial_user_msg`);
    },
  },
];
