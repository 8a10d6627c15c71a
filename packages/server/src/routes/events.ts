/** Event search and count. */
import type { ServerResponse } from "node:http";
import { Router, type RequestHandler } from "express";
import type { EventKind, operations } from "@acs-toolkit/schema";
import { instantError, instantMicros, kindShortName } from "@acs-toolkit/validator";
import { NOT_A_CURSOR, type CursorCodec, type CursorScope } from "../cursor.js";
import { RequestValidationError, type RequestValidators } from "../http/validation.js";
import { requireConversation, type EventStore, type Position, type SearchFilters } from "../store/types.js";

export interface EventRoutesDeps {
  store: EventStore;
  validators: RequestValidators;
  cursors: CursorCodec;
  /** Auth for reading events (a pass-through under --public-read). */
  readAuth: RequestHandler;
}

/** The validated query of searchEvents and of countEvents (whose parameters are the filters), typed by the spec. */
type SearchQuery = NonNullable<operations["searchEvents"]["parameters"]["query"]>;
type FilterQuery = NonNullable<operations["countEvents"]["parameters"]["query"]>;

/**
 * The filters of a validated query: `kind` as its short name (a kind never stored matches nothing),
 * timestamps as instants (every form the agent server accepts, see instantMicros; no offset is UTC).
 */
function filtersOf(query: FilterQuery): SearchFilters {
  const filters: SearchFilters = {};
  if (query.kind) filters.kind = kindShortName(query.kind) as EventKind;
  if (query.source) filters.source = query.source;
  if (query.body !== undefined && query.body !== "") filters.body = query.body;
  for (const [name, key] of [["timestamp__gte", "timestampGte"], ["timestamp__lt", "timestampLt"]] as const) {
    const text = query[name];
    if (text === undefined) continue;
    const micros = instantMicros(text);
    if (micros === undefined) throw new RequestValidationError([{ loc: ["query", name], msg: `must be ${instantError(text)}`, type: "datetime_parsing" }]);
    filters[key] = micros;
  }
  return filters;
}

/**
 * Where a page starts: strictly after the position a `next_page_id` carries, or AT an event given
 * by its id (the agent server's meaning of `page_id`: that event comes first if the filters keep
 * it, in the page's order, and it may be one they do not keep). Anything else is a 422 where the
 * agent server silently starts over.
 */
async function pageStart(store: EventStore, cursors: CursorCodec, scope: CursorScope, pageId: string): Promise<Position> {
  const decoded = cursors.decode(scope, pageId);
  if (decoded.ok) return decoded.position;
  const at = await store.positionOf(scope.conversationId, pageId);
  // The position just before the event in the page's order (seqs are unique), so that it is the first considered.
  if (at) return { ts: at.ts, seq: scope.order === "asc" ? at.seq - 1 : at.seq + 1 };
  const reason = decoded.reason === NOT_A_CURSOR ? "is neither a next_page_id of this server nor the id of an event of this conversation" : decoded.reason;
  throw new RequestValidationError([{ loc: ["query", "page_id"], msg: `page_id ${reason}`, type: "value_error" }]);
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
export function eventReads({ store, validators, cursors }: Omit<EventRoutesDeps, "readAuth">): EventReads {
  const notFoundFirst = async <T>(conversationId: string, read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch (error) {
      if (error instanceof RequestValidationError) await requireConversation(store, conversationId);
      throw error;
    }
  };
  return {
    async search(params, rawQuery) {
      const { path, query } = validators.parameters("searchEvents", params, rawQuery);
      const given = path.conversation_id as string;
      const q = query as SearchQuery;
      return notFoundFirst(given, async () => {
        const filters = filtersOf(q);
        const scope = { conversationId: given.toLowerCase(), order: q.sort_order === "TIMESTAMP_DESC" ? ("desc" as const) : ("asc" as const) };
        const after = q.page_id === undefined ? undefined : await pageStart(store, cursors, scope, q.page_id);
        const page = await store.searchJson(scope.conversationId, { ...filters, order: scope.order, limit: q.limit ?? 100, after });
        if (page.count === 0) await requireConversation(store, given);
        const next = page.hasMore && page.last ? cursors.encode(scope, page.last) : null;
        // The events leave exactly as stored: their JSON text is spliced in as bytes, never
        // re-serialized (nor decoded: a page of 100 is about 60 KB).
        return [ITEMS_OPEN, page.json, Buffer.from(`],"next_page_id":${JSON.stringify(next)}}`)];
      });
    },
    async count(params, rawQuery) {
      const { path, query } = validators.parameters("countEvents", params, rawQuery);
      const given = path.conversation_id as string;
      return notFoundFirst(given, async () => {
        const n = await store.count(given.toLowerCase(), filtersOf(query as FilterQuery));
        if (n === 0) await requireConversation(store, given);
        return n;
      });
    },
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

export function eventRoutes({ store, validators, cursors, readAuth, reads = eventReads({ store, validators, cursors }) }: EventRoutesDeps & { reads?: EventReads }): Router {
  const router = Router();

  router.get("/api/conversations/:conversation_id/events/search", readAuth, async (req, res) => {
    sendParts(res, await reads.search(req.params as Record<string, string>, req.query));
  });

  router.get("/api/conversations/:conversation_id/events/count", readAuth, async (req, res) => {
    res.json(await reads.count(req.params as Record<string, string>, req.query));
  });

  return router;
}
