import {
  DEFAULT_EVENT_SOURCE,
  EVENT_KINDS,
  isActionEvent,
  isEventKind,
  isObservationEvent,
  isTerminalAction,
  type Event,
  type EventPage,
  type paths,
} from "@acs-toolkit/schema";
import { eventsJsonSchema, openapiDocument } from "@acs-toolkit/schema/documents";

// Types and guards: a guard narrows the Event union, so each branch sees that kind's fields.
export function summarize(event: Event): string {
  if (isActionEvent(event)) {
    return isTerminalAction(event.action) ? `$ ${event.action.command}` : `calls ${event.tool_name}`;
  }
  if (isObservationEvent(event)) {
    return `${event.observation.kind} for action ${event.action_id}`;
  }
  return `${event.kind} from ${event.source ?? DEFAULT_EVENT_SOURCE[event.kind]}`;
}

// Constants: every kind, in spec order, and a predicate for untrusted input.
export const kindOptions: readonly string[] = EVENT_KINDS;
export const parseKind = (input: string) => (isEventKind(input) ? input : undefined);

// paths: the query parameters and responses of every endpoint, as types.
type Search = paths["/api/conversations/{conversation_id}/events/search"]["get"];
export type SearchQuery = NonNullable<Search["parameters"]["query"]>;

export async function searchEvents(baseUrl: string, conversationId: string, query: SearchQuery): Promise<EventPage> {
  const params = new URLSearchParams(Object.entries(query).map(([key, value]) => [key, String(value)]));
  const response = await fetch(`${baseUrl}/api/conversations/${conversationId}/events/search?${params}`);
  if (!response.ok) throw new Error(`event search failed: ${response.status}`);
  return (await response.json()) as EventPage;
}

// Documents: the bundled OpenAPI, AsyncAPI and JSON Schema as plain objects.
export const servedSpec = JSON.stringify(openapiDocument);
export const eventSchemaId = eventsJsonSchema.$schema;
