/** A conversation's events: search and count (the hot reads), a user message, a batch of events. */
import type { EventBatchResponse, SendMessageRequest } from "@acs-toolkit/schema";
import { HttpError, RequestValidationError } from "../core/errors.js";
import { pageStart } from "../core/cursor.js";
import { checkEventQuery, type EventQuery, type EventQueryOperation } from "../core/event-query.js";
import { requireConversation } from "../store/types.js";
import { overflowDetails } from "../validation/query-overflow.js";
import { JSONL_MEDIA_TYPES, readJson } from "./body.js";
import type { ApiDeps } from "./deps.js";
import { jsonReply, partsReply } from "./reply.js";
import type { Operation } from "./types.js";

const encoder = new TextEncoder();
const ITEMS_OPEN = encoder.encode('{"items":[');

type EventOperations = "searchEvents" | "countEvents" | "sendMessage" | "appendEventBatch";

export function eventOperations({ store, cursors, conversations, validators }: ApiDeps): Record<EventOperations, Operation> {
  /**
   * The checked query (core/event-query.ts), or its 422. One conversation lookup per request, the
   * store's own: a page or a count that is not empty proves the conversation exists, so it is looked
   * up only when the answer is empty or before a 422 about values of the right shape (a timestamp
   * that is no instant, a page_id that is no cursor nor event): a conversation that does not exist
   * is a 404 first.
   */
  const read = async <T>(operation: EventQueryOperation, params: Record<string, string>, rawQuery: Record<string, unknown>, answer: (query: EventQuery) => Promise<T>): Promise<T> => {
    const checked = checkEventQuery(operation, { conversation_id: params.conversation_id ?? "" }, rawQuery, overflowDetails(rawQuery));
    if (!checked.ok && !checked.afterNotFound) throw new RequestValidationError(checked.detail);
    try {
      if (!checked.ok) throw new RequestValidationError(checked.detail);
      return await answer(checked.query);
    } catch (error) {
      if (error instanceof RequestValidationError) await requireConversation(store, params.conversation_id!);
      throw error;
    }
  };

  return {
    searchEvents: ({ params, query }) =>
      read("searchEvents", params, query, async (q) => {
        const scope = { conversationId: q.conversationId.toLowerCase(), order: q.order };
        const after = q.pageId === undefined ? undefined : await pageStart((id, event) => store.positionOf(id, event), cursors, scope, q.pageId);
        const page = await store.searchJson(scope.conversationId, { ...q.filters, order: scope.order, limit: q.limit, after });
        if (page.count === 0) await requireConversation(store, q.conversationId);
        const next = page.hasMore && page.last ? cursors.encode(scope, page.last) : null;
        // The events leave exactly as stored: their JSON text is spliced in as bytes, never
        // re-serialized (nor decoded: a page of 100 is about 60 KB).
        return partsReply([ITEMS_OPEN, page.json, encoder.encode(`],"next_page_id":${JSON.stringify(next)}}`)]);
      }),

    countEvents: ({ params, query }) =>
      read("countEvents", params, query, async (q) => {
        const n = await store.count(q.conversationId.toLowerCase(), q.filters);
        if (n === 0) await requireConversation(store, q.conversationId);
        return jsonReply(n);
      }),

    async sendMessage({ params, body }) {
      const message = await readJson(body);
      const { path } = validators.parameters("sendMessage", params, {});
      const id = (await requireConversation(store, path.conversation_id as string)).id;
      validators.body("sendMessage", message);
      const request = message as SendMessageRequest;
      return jsonReply(await conversations.deliverMessage(id, request, { run: request.run === true }));
    },

    // The JSONL body streams to the import thread as it arrives (ConversationService.appendBatch).
    async appendEventBatch({ params, body }) {
      const { path } = validators.parameters("appendEventBatch", params, {});
      const id = (await requireConversation(store, path.conversation_id as string)).id;
      if (!body.is(JSONL_MEDIA_TYPES)) {
        body.discard();
        throw new HttpError(415, "Unsupported Media Type: the body of a batch is application/x-ndjson (one event per line); nothing was stored");
      }
      if (!conversations.appendBatch) {
        body.discard();
        throw new HttpError(501, "Not Implemented: this host does not take event batches");
      }
      const appended = await conversations.appendBatch(id, body.chunks(JSONL_MEDIA_TYPES));
      return jsonReply({ appended: appended.count, event_count: appended.eventCount } satisfies EventBatchResponse);
    },
  };
}
