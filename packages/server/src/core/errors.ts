/**
 * The errors of the conversation service and the live channel in the interface's shapes, with no
 * transport: a {@link RequestValidationError} is answered 422 `{"detail": [{loc, msg, type}]}` over
 * HTTP and a `ValidationError` error frame on the live channel; an {@link HttpError} carries its
 * status and `{"detail": string}`. The HTTP layers (the server's Express error handler, the mock's
 * MSW handlers) turn them into responses.
 */
import type { ValidationError } from "@acs-toolkit/schema";
import { pointerTokens, type ValidationIssue } from "@acs-toolkit/validator";

/** Where a value came from, the first element of `loc`. */
export type Location = "path" | "query" | "header" | "body";

/** FastAPI/pydantic-style error types, by validator rule. */
export const ERROR_TYPES: Readonly<Record<string, string>> = {
  required: "missing",
  unknownProperty: "extra_forbidden",
  type: "type_error",
  enum: "enum",
  const: "literal_error",
  minimum: "greater_than_equal",
  exclusiveMinimum: "greater_than",
  maximum: "less_than_equal",
  exclusiveMaximum: "less_than",
  minLength: "string_too_short",
  maxLength: "string_too_long",
  pattern: "string_pattern_mismatch",
  format: "value_error",
  minItems: "too_short",
  maxItems: "too_long",
  unknownKind: "union_tag_invalid",
  json: "json_invalid",
};

/** One validator issue as a FastAPI-shaped entry whose `loc` is `[location, ...prefix, ...pointer]`. */
export function toValidationError(location: Location, prefix: Array<string | number>, issue: ValidationIssue): ValidationError {
  return {
    loc: [location, ...prefix, ...pointerTokens(issue.pointer)],
    msg: issue.message,
    type: ERROR_TYPES[issue.rule] ?? "value_error",
  };
}

/** A request that failed validation; the error handler answers 422 with `detail`. */
export class RequestValidationError extends Error {
  override readonly name = "RequestValidationError";
  constructor(readonly detail: ValidationError[]) {
    super(detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "));
  }
}

/** An error with an HTTP status and a `detail` sentence (401, 404, 409, 413, …). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    /** Headers of the answer (a 429's `Retry-After`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}
