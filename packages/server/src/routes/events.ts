/** Event search and count. */
import type { ServerResponse } from "node:http";
import { Router, type RequestHandler } from "express";
import { pageStart, type CursorCodec } from "../core/cursor.js";
import { checkEventQuery, type EventQuery, type EventQueryOperation } from "../core/event-query.js";
import { overflowDetails } from "../validation/query-overflow.js";
import { RequestValidationError } from "../validation/request-validators.js";
import { requireConversation, type EventStore } from "../store/types.js";

interface EventRoutesDeps {
  store: EventStore;
  cursors: CursorCodec;
  /** Auth for reading events (a pass-through under --public-read). */
  readAuth: RequestHandler;
}

const ITEMS_OPEN = Buffer.from('{"items":[');

/** The answers of searchEvents and countEvents, from a request's path parameters and parsed query. */
export interface EventReads {
  /**
   * The body of a 200: the page as bytes, in parts to be written in order (one write: the page's
   * JSON is not copied into a body). @throws RequestValidationError, ConversationNotFoundError, a store's errors
   */
  search(params: Record<string, string>, query: Record<string, unknown>): Promise<Uint8Array[]>;
  /** The count a 200 answers. @throws as `search` */
  count(params: Record<string, string>, query: Record<string, unknown>): Promise<number>;
}

/**
 * The two reads, shared by the routes and the fast path ahead of Express (http/fast-reads.ts). One
 * conversation lookup per request, the store's own: a page or a count that is not empty proves the
 * conversation exists, so it is looked up only when the answer is empty (a 404 or an empty
 * answer) or before a 422 (a conversation that does not exist is a 404 first, as before).
 */
export function eventReads({ store, cursors }: Omit<EventRoutesDeps, "readAuth">): EventReads {
  /**
   * The checked query (core/event-query.ts, shared with the browser mock), or its 422; a 422 about
   * values of the right shape (a timestamp that is no instant, a page_id that is no cursor nor
   * event) comes after the 404 of a conversation that does not exist.
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
    search: (params, rawQuery) =>
      read("searchEvents", params, rawQuery, async (q) => {
        const scope = { conversationId: q.conversationId.toLowerCase(), order: q.order };
        const after = q.pageId === undefined ? undefined : await pageStart((id, event) => store.positionOf(id, event), cursors, scope, q.pageId);
        const page = await store.searchJson(scope.conversationId, { ...q.filters, order: scope.order, limit: q.limit, after });
        if (page.count === 0) await requireConversation(store, q.conversationId);
        const next = page.hasMore && page.last ? cursors.encode(scope, page.last) : null;
        // The events leave exactly as stored: their JSON text is spliced in as bytes, never
        // re-serialized (nor decoded: a page of 100 is about 60 KB).
        return [ITEMS_OPEN, page.json, Buffer.from(`],"next_page_id":${JSON.stringify(next)}}`)];
      }),
    count: (params, rawQuery) =>
      read("countEvents", params, rawQuery, async (q) => {
        const n = await store.count(q.conversationId.toLowerCase(), q.filters);
        if (n === 0) await requireConversation(store, q.conversationId);
        return n;
      }),
  };
}

/**
 * A 200 of JSON in parts: written in one writev with the head (Node corks the socket until the next
 * tick), never copied into one buffer first (a page of 100 is about 60 KB).
 */
export function sendParts(res: ServerResponse, parts: readonly Uint8Array[]): void {
  let length = 0;
  for (const part of parts) length += part.byteLength;
  res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": length });
  for (let i = 0; i < parts.length - 1; i++) res.write(parts[i]);
  res.end(parts.at(-1));
}

export function eventRoutes({ store, cursors, readAuth, reads = eventReads({ store, cursors }) }: EventRoutesDeps & { reads?: EventReads }): Router {
  const router = Router();

  router.get("/api/conversations/:conversation_id/events/search", readAuth, async (req, res) => {
    sendParts(res, await reads.search(req.params as Record<string, string>, req.query));
  });

  router.get("/api/conversations/:conversation_id/events/count", readAuth, async (req, res) => {
    res.json(await reads.count(req.params as Record<string, string>, req.query));
  });

  return router;
}
