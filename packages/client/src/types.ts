/**
 * Types of the client, all derived from the generated openapi-typescript `operations` of
 * `@acs-toolkit/schema`: nothing here restates a request or response shape by hand.
 */
import type { components, operations } from "@acs-toolkit/schema";

/** The `operationId` of every endpoint of the spec (the interface's five and the server's extensions). */
export type OperationId = keyof operations;

export type Responses<Id extends OperationId> = operations[Id]["responses"];

/** Status codes that mean success. */
export type SuccessCode = 200 | 201 | 202 | 203 | 204 | 205 | 206;

/** The body of a response object: its JSON content, else its only content type, else `undefined`. */
export type ContentOf<R> = R extends { content: { "application/json": infer Body } }
  ? Body
  : R extends { content: infer Content }
    ? Content[keyof Content]
    : undefined;

/** The documented success status of an operation (200 for every operation of this spec). */
export type SuccessStatus<Id extends OperationId> = Extract<keyof Responses<Id>, SuccessCode>;

/** The documented error statuses of an operation, for example `401 | 404 | 422` for `searchEvents`. */
export type ErrorStatus<Id extends OperationId> = Extract<Exclude<keyof Responses<Id>, SuccessCode>, number>;

/** What a successful call of an operation answers, as the spec documents it. */
export type OperationResult<Id extends OperationId> = ContentOf<Responses<Id>[SuccessStatus<Id>]>;

/**
 * The error body an operation documents for `Status` (by default the union over all its error
 * statuses): `HTTPValidationError` for 422, `ErrorDetail` for 401/404/409, `Health` for a 503 of
 * `getHealth`.
 */
export type ErrorBody<Id extends OperationId, Status extends ErrorStatus<Id> = ErrorStatus<Id>> = Status extends unknown
  ? ContentOf<Responses<Id>[Status]>
  : never;

/** The query parameters of an operation (`{}` when it has none). */
export type OperationQuery<Id extends OperationId> = NonNullable<operations[Id]["parameters"]["query"]>;

/** The JSON (or multipart) request body of an operation. */
export type OperationBody<Id extends OperationId> = operations[Id] extends { requestBody: { content: infer Content } }
  ? Content[keyof Content]
  : never;

/** One entry of a 422 answer's `detail`: `loc` (where), `msg` (what), `type` (which rule). */
export type ValidationErrorDetail = components["schemas"]["ValidationError"];

/** The body of every 422 answer. */
export type HTTPValidationError = components["schemas"]["HTTPValidationError"];

/** Query of event search: every filter, `limit`, `sort_order` and the `page_id` cursor. */
export type SearchEventsQuery = OperationQuery<"searchEvents">;

/** The filters of `iterateEvents`: a search query without its cursor (`limit` is the page size). */
export type EventFilters = Omit<SearchEventsQuery, "page_id">;

/** Query of event count: the same filters as a search, without paging and order. */
export type CountEventsQuery = OperationQuery<"countEvents">;

/** One page of event search. */
export type EventPage = OperationResult<"searchEvents">;

/** One event as event search returns it (assignable to `Event` of `@acs-toolkit/schema`). */
export type SearchedEvent = EventPage["items"][number];

/** Options of every call. */
export interface CallOptions {
  /** Aborts the call (and, for `iterateEvents`, the iteration): it rejects with an `AbortError`. */
  signal?: AbortSignal;
  /** Extra request headers for this call. */
  headers?: Record<string, string>;
}
