/**
 * What a call rejects with. Every error is a `ClientError` naming the operation; the kinds tell an
 * answer of the server (`ApiError`) apart from a request that never got one (`NetworkError`,
 * `AbortError`) and from an answer that is not what the spec says (`InvalidResponseError`).
 */
import type { ValidationIssue } from "./validator-types.js";
import type { ErrorBody, ErrorStatus, OperationId, ValidationErrorDetail } from "./types.js";

/** The base of every error of this client. */
export class ClientError extends Error {
  override name = "ClientError";
  constructor(
    /** The `operationId` of the call that failed. */
    readonly operation: OperationId,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${operation}: ${message}`, options);
  }
}

/**
 * The server answered with a status that is not 2xx.
 *
 * `body` is typed as the union of the error bodies the spec documents for the operation (as
 * openapi-fetch types `error`); use `is(status)` to narrow it to one status. A status the spec does
 * not document for the operation (a proxy's 502, say) is an `ApiError` too: then `body` is whatever
 * came back (parsed JSON, else the text).
 *
 * @example
 * catch (error) {
 *   if (isApiError(error, "searchEvents") && error.is(422)) console.log(error.detail[0]?.loc); // ["query", "limit"]
 * }
 */
export class ApiError<Id extends OperationId = OperationId> extends ClientError {
  override name = "ApiError";
  declare readonly operation: Id;
  /** The HTTP status. */
  readonly status: number;
  /** The parsed body of the answer (JSON), or its text when it is not JSON. */
  readonly body: ErrorBody<Id>;
  /** For a 422 answer, its `HTTPValidationError.detail`: each entry's `loc` points at the culprit. */
  readonly detail: ValidationErrorDetail[] | undefined;
  /** The response (its body is consumed). */
  readonly response: Response;

  constructor(operation: Id, response: Response, body: unknown) {
    super(operation, `${response.status}${describe(body) ? ` ${describe(body)}` : response.statusText ? ` ${response.statusText}` : ""}`);
    this.status = response.status;
    this.body = body as ErrorBody<Id>;
    this.response = response;
    const detail = (body as { detail?: unknown } | null)?.detail;
    this.detail = response.status === 422 && Array.isArray(detail) ? (detail as ValidationErrorDetail[]) : undefined;
  }

  /** True when the answer has this (documented) status; narrows `body` and `detail` to it. */
  is<Status extends ErrorStatus<Id>>(status: Status): this is ApiErrorWithStatus<Id, Status> {
    return this.status === status;
  }
}

/** An `ApiError` narrowed to one documented status: its `body` is what the spec says for it. */
export type ApiErrorWithStatus<Id extends OperationId, Status extends ErrorStatus<Id>> = Omit<ApiError<Id>, "status" | "body" | "detail"> & {
  readonly status: Status;
  readonly body: ErrorBody<Id, Status>;
  readonly detail: Status extends 422 ? ValidationErrorDetail[] : undefined;
};

/**
 * The request got no answer: the server is unreachable, the connection broke, or (in a browser) CORS
 * refused it. A browser reports all of these as one opaque `TypeError` ("Failed to fetch"); for a
 * cross-origin request the message then says so and names the reference server's `--cors-origin`.
 */
export class NetworkError extends ClientError {
  override name = "NetworkError";
  constructor(operation: OperationId, cause: unknown, baseUrl?: string) {
    super(operation, `request failed: ${reason(cause)}${corsHint(cause, baseUrl)}`, { cause });
  }
}

/**
 * In a page (there is a `location`) whose origin is not the server's, a fetch `TypeError` may be a
 * CORS refusal, which the browser does not tell apart from an unreachable server.
 */
function corsHint(cause: unknown, baseUrl: string | undefined): string {
  const page = (globalThis as { location?: { origin?: string } }).location?.origin;
  if (!(cause instanceof TypeError) || !page || page === "null" || !baseUrl) return "";
  let server: string;
  try {
    server = new URL(baseUrl, page).origin;
  } catch {
    return "";
  }
  if (server === page) return "";
  return ` (the browser does not say why: ${server} may be unreachable, or it may not allow requests from this page's origin under CORS: start the reference server with --cors-origin ${page})`;
}

/**
 * The call's `AbortSignal` fired. This is the client's own class, not a `DOMException`, but its
 * `name` is `"AbortError"` as the platform's is, so `error.name === "AbortError"` checks keep
 * working; `reason` is the signal's reason (a `TimeoutError` for `AbortSignal.timeout()`).
 */
export class AbortError extends ClientError {
  override name = "AbortError";
  constructor(
    operation: OperationId,
    /** `signal.reason`. */
    readonly reason: unknown,
  ) {
    super(operation, `aborted${reason instanceof Error && reason.name !== "AbortError" ? ` (${reason.name})` : ""}`, { cause: reason });
  }
}

/** A 2xx answer that is not what the spec says: a body that is not JSON, or (with `validate`) an invalid event. */
export class InvalidResponseError extends ClientError {
  override name = "InvalidResponseError";
}

/**
 * With `validate`, the first received event that the validator rejects: which one (`index` in its
 * page, `event`), where (`pointer`, inside the event) and every issue of that event.
 */
export class InvalidEventError extends InvalidResponseError {
  override name = "InvalidEventError";
  constructor(
    operation: OperationId,
    /** Position of the event in its page. */
    readonly index: number,
    /** The event as received. */
    readonly event: unknown,
    /** Every error of that event; pointers start at the event. */
    readonly issues: ValidationIssue[],
  ) {
    const first = issues[0];
    const id = (event as { id?: unknown } | null)?.id;
    const kind = (event as { kind?: unknown } | null)?.kind;
    const which = [typeof id === "string" ? `id ${id}` : undefined, typeof kind === "string" ? kind : undefined].filter(Boolean).join(", ");
    super(operation, `received event ${index}${which ? ` (${which})` : ""} is invalid: ${first ? `${first.pointer || "/"}: ${first.message}` : "no reason given"}`);
  }

  /** JSON pointer of the first issue inside the event, for example `/action/tab_id`. */
  get pointer(): string {
    return this.issues[0]?.pointer ?? "";
  }
}

/** True when `error` is an `ApiError`, of `operation` when one is given. */
export function isApiError<Id extends OperationId = OperationId>(error: unknown, operation?: Id): error is ApiError<Id> {
  return error instanceof ApiError && (operation === undefined || error.operation === operation);
}

function describe(body: unknown): string {
  if (typeof body === "string") return body.length > 200 ? `${body.slice(0, 200)}…` : body;
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail) && detail.length > 0) {
    const first = detail[0] as Partial<ValidationErrorDetail>;
    const where = Array.isArray(first.loc) ? first.loc.join(".") : "";
    const more = detail.length > 1 ? ` (and ${detail.length - 1} more)` : "";
    return `${where}${where ? ": " : ""}${first.msg ?? ""}${more}`;
  }
  return "";
}

function reason(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // Node's fetch says "fetch failed" and puts the reason (ECONNREFUSED, ...) in its cause.
  const inner = cause.cause instanceof Error ? `: ${(cause.cause as Error & { code?: string }).code ?? cause.cause.message}` : "";
  return `${cause.message}${inner}`;
}
