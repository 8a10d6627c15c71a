/** Event search and count. */
import { Router, type RequestHandler } from "express";
import type { EventKind, EventSource } from "@acs-toolkit/schema";
import type { CursorCodec } from "../cursor.js";
import { RequestValidationError, type RequestValidators } from "../http/validation.js";
import { eventTimeMicros } from "../store/time.js";
import { requireConversation, type EventStore, type SearchFilters } from "../store/types.js";

export interface EventRoutesDeps {
  store: EventStore;
  validators: RequestValidators;
  cursors: CursorCodec;
  /** Auth for reading events (a pass-through under --public-read). */
  readAuth: RequestHandler;
}

interface FilterQuery {
  kind?: string;
  source?: EventSource;
  body?: string;
  timestamp__gte?: string;
  timestamp__lt?: string;
}

/** The filters of a validated query: `kind` as its short name, timestamps as instants. */
function filtersOf(query: FilterQuery): SearchFilters {
  const filters: SearchFilters = {};
  if (query.kind) filters.kind = query.kind.slice(query.kind.lastIndexOf(".") + 1) as EventKind;
  if (query.source) filters.source = query.source;
  if (query.body !== undefined && query.body !== "") filters.body = query.body;
  for (const [name, key] of [["timestamp__gte", "timestampGte"], ["timestamp__lt", "timestampLt"]] as const) {
    const text = query[name];
    if (text === undefined) continue;
    const micros = eventTimeMicros(text);
    if (micros === undefined) throw new RequestValidationError([{ loc: ["query", name], msg: "must be a valid date-time", type: "datetime_parsing" }]);
    filters[key] = micros;
  }
  return filters;
}

const ITEMS_OPEN = Buffer.from('{"items":[');

export function eventRoutes({ store, validators, cursors, readAuth }: EventRoutesDeps): Router {
  const router = Router();

  router.get("/api/conversations/:conversation_id/events/search", readAuth, async (req, res) => {
    const { path, query } = validators.parameters("searchEvents", req.params as Record<string, string>, req.query);
    const conversation = requireConversation(store, path.conversation_id as string);
    const q = query as FilterQuery & { page_id?: string; limit?: number; sort_order?: string };
    const filters = filtersOf(q);
    const scope = { conversationId: conversation.id, order: q.sort_order === "TIMESTAMP_DESC" ? ("desc" as const) : ("asc" as const) };
    let after;
    if (q.page_id !== undefined) {
      const decoded = cursors.decode(scope, q.page_id);
      if (!decoded.ok) throw new RequestValidationError([{ loc: ["query", "page_id"], msg: `page_id ${decoded.reason}`, type: "value_error" }]);
      after = decoded.position;
    }
    const page = await store.searchJsonAsync(conversation.id, { ...filters, order: scope.order, limit: q.limit ?? 100, after });
    const next = page.hasMore && page.last ? cursors.encode(scope, page.last) : null;
    // The events leave exactly as stored: their JSON text is spliced in as bytes, never
    // re-serialized (nor decoded: a page of 100 is about 60 KB).
    const body = Buffer.concat([ITEMS_OPEN, page.json, Buffer.from(`],"next_page_id":${JSON.stringify(next)}}`)]);
    res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": body.length }).end(body);
  });

  router.get("/api/conversations/:conversation_id/events/count", readAuth, async (req, res) => {
    const { path, query } = validators.parameters("countEvents", req.params as Record<string, string>, req.query);
    const conversation = requireConversation(store, path.conversation_id as string);
    res.json(await store.countAsync(conversation.id, filtersOf(query as FilterQuery)));
  });

  return router;
}
