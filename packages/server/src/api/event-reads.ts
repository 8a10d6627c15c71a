/**
 * Events by id: one (`GET …/events/{event_id}`) or several in order (`GET …/events`), in the agent
 * server's shapes (event_router.py, 1.43.1). The events leave as stored, their JSON text spliced in.
 */
import { RequestValidationError } from "../core/errors.js";
import { HttpError } from "../core/errors.js";
import { requireConversation, type EventStore } from "../store/types.js";
import { readJson } from "./body.js";
import type { ApiDeps } from "./deps.js";
import { partsReply } from "./reply.js";
import type { Operation } from "./types.js";

const encoder = new TextEncoder();
const OPEN = encoder.encode("[");
const COMMA = encoder.encode(",");
const CLOSE = encoder.encode("]");
const NULL = encoder.encode("null");

/**
 * The stored JSON text of event `eventId` of a conversation, or undefined. The store's contract
 * has no read by id: the event's position, then the one event at it (both indexed reads).
 */
async function storedJson(store: EventStore, conversationId: string, eventId: string): Promise<string | undefined> {
  const at = await store.positionOf(conversationId, eventId);
  if (!at) return undefined;
  const [event] = await store.readAfter(conversationId, at.seq - 1, 1);
  return event?.id === eventId ? event.json : undefined;
}

export function eventReadOperations({ store, validators }: ApiDeps): Record<"getEvent" | "batchGetEvents", Operation> {
  return {
    async getEvent({ params, query }) {
      const { path } = validators.parameters("getEvent", params, query);
      const eventId = path.event_id as string;
      const { id } = await requireConversation(store, path.conversation_id as string);
      const json = await storedJson(store, id, eventId);
      if (json === undefined) throw new HttpError(404, `Event not found: ${eventId}`);
      return partsReply([encoder.encode(json)]);
    },

    // The agent server reads the ids from the body of this GET; clients that cannot send one
    // (fetch, browsers) give them as `event_ids` instead.
    async batchGetEvents({ params, query, body }) {
      const inBody = await readJson(body);
      const checked = validators.parameters("batchGetEvents", params, query);
      const { id } = await requireConversation(store, checked.path.conversation_id as string);
      const inQuery = checked.query.event_ids as string[] | undefined;
      if (inQuery !== undefined && inBody !== undefined) {
        throw new RequestValidationError([{ loc: ["query", "event_ids"], msg: "give the event ids either as event_ids or as the JSON body, not both", type: "value_error" }]);
      }
      if (inQuery === undefined && inBody === undefined) {
        throw new RequestValidationError([{ loc: ["body"], msg: "is required: the event ids as a JSON array (or as repeated event_ids query parameters)", type: "missing" }]);
      }
      if (inBody !== undefined) validators.body("batchGetEvents", inBody);
      const ids = (inQuery ?? inBody) as string[];
      const events = await Promise.all(ids.map((eventId) => storedJson(store, id, eventId)));
      const parts: Uint8Array[] = [OPEN];
      events.forEach((json, i) => {
        if (i > 0) parts.push(COMMA);
        parts.push(json === undefined ? NULL : encoder.encode(json));
      });
      parts.push(CLOSE);
      return partsReply(parts);
    },
  };
}
