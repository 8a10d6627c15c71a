/**
 * The parameters of searchEvents and countEvents, checked and read, for the server (routes/events.ts
 * and its fast path, http/fast-reads.ts) and the browser mock alike: a search or count query becomes
 * its filters, order, limit and page_id, or the list of 422 details the server answers for it.
 *
 * The checks are those of the spec's parameter schemas (SEARCH_PARAMETERS, pinned to the OpenAPI
 * document by test/core/event-query.test.ts), made as the server's spec-derived validator (AJV,
 * path and query values coerced from text) makes them and worded by the same `toIssues`, so the
 * `loc`s, messages and types are the ones that validator gives; then the timestamps are read as
 * instants (a value of the right shape that is no instant is a 422 of its own, answered only when
 * the conversation exists).
 */
import type { EventKind, EventSource, ValidationError } from "@acs-toolkit/schema";
import { instantError, instantMicros, kindShortName } from "@acs-toolkit/schema/search";
import { toIssues, type AjvErrorObject } from "@acs-toolkit/validator";
import type { SearchFilters } from "../store/types.js";
import { toValidationError, type Location } from "./errors.js";

/** The validation keywords of a parameter schema that the search and count parameters use. */
export type ParameterSchema = {
  type: "string" | "integer";
  format?: "uuid";
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  pattern?: string;
  "x-format-name"?: string;
};

const TIMESTAMP: ParameterSchema = {
  type: "string",
  maxLength: 64,
  pattern: "^(?:-?\\d+(?:\\.\\d+)?|\\d{4}-\\d{2}-\\d{2}(?:[Tt ]\\d{2}:\\d{2}(?::\\d{2}(?:[.,]\\d+)?)?(?:[Zz]|[+-]\\d{2}:?\\d{2})?)?)$",
  "x-format-name": "a date-time (ISO 8601, zone offset optional) or epoch seconds",
};
const FILTERS: Record<string, ParameterSchema> = {
  kind: {
    type: "string",
    maxLength: 256,
    pattern: "^(?:[A-Za-z_][A-Za-z0-9_]*\\.)*[A-Za-z_][A-Za-z0-9_]*$",
    "x-format-name": "an event kind name (short, or a fully qualified module.ClassName path)",
  },
  source: { type: "string", enum: ["agent", "user", "environment", "hook"] },
  body: { type: "string", maxLength: 1000 },
};

/**
 * The validation keywords of the parameters of searchEvents and countEvents (path, then query in
 * the spec's order), as the spec declares them.
 */
export const SEARCH_PARAMETERS = {
  searchEvents: {
    path: { conversation_id: { type: "string", format: "uuid" } },
    query: {
      page_id: { type: "string", maxLength: 512 },
      limit: { type: "integer", minimum: 1, maximum: 100 },
      ...FILTERS,
      sort_order: { type: "string", enum: ["TIMESTAMP", "TIMESTAMP_DESC"] },
      timestamp__gte: TIMESTAMP,
      timestamp__lt: TIMESTAMP,
    },
  },
  countEvents: {
    path: { conversation_id: { type: "string", format: "uuid" } },
    query: { ...FILTERS, timestamp__gte: TIMESTAMP, timestamp__lt: TIMESTAMP },
  },
} as const satisfies Record<string, { path: Record<string, ParameterSchema>; query: Record<string, ParameterSchema> }>;

export type EventQueryOperation = keyof typeof SEARCH_PARAMETERS;

/** The patterns, compiled once (as AJV compiles them: with the `u` flag). */
const PATTERNS = new Map<string, RegExp>();
const patternOf = (source: string) => PATTERNS.get(source) ?? PATTERNS.set(source, new RegExp(source, "u")).get(source)!;

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** A read query of searchEvents or countEvents. */
export interface EventQuery {
  /** The conversation id as given in the path (a UUID in any case). */
  conversationId: string;
  filters: SearchFilters;
  /** searchEvents only: */
  order: "asc" | "desc";
  limit: number;
  pageId?: string;
}

export type EventQueryCheck =
  | { ok: true; query: EventQuery }
  /**
   * `afterNotFound`: the details are about values of the right shape (a timestamp that is no
   * instant), answered only once the conversation is known to exist (a 404 comes first).
   */
  | { ok: false; detail: ValidationError[]; afterNotFound: boolean };

/**
 * The AJV errors (allErrors, verbose, coerceTypes) of one value against one parameter schema, in
 * AJV's order (type and coercion, enum, number bounds, string length, pattern, format), and the
 * value as coerced.
 */
function check(name: string, schema: ParameterSchema, given: unknown): { errors: AjvErrorObject[]; value: unknown } {
  const errors: AjvErrorObject[] = [];
  const error = (keyword: string, params: Record<string, unknown>, data: unknown) =>
    errors.push({ keyword, params, data, parentSchema: schema as Record<string, unknown>, instancePath: `/${name}`, schemaPath: "", schema: undefined } as unknown as AjvErrorObject);
  let value = given;
  if (schema.type === "integer") {
    if (!(typeof value === "number" && !(value % 1) && !isNaN(value))) {
      // AJV's coercion of a string to an integer, expression for expression.
      if (!(typeof value === "string" && value && value == (+value as unknown as string) && !((value as unknown as number) % 1))) {
        error("type", { type: "integer" }, value);
        return { errors, value };
      }
      value = +value;
    }
  } else if (typeof value === "number" || typeof value === "boolean") {
    value = `${value}`;
  } else if (typeof value !== "string") {
    error("type", { type: "string" }, value);
    return { errors, value };
  }
  if (schema.enum && !schema.enum.includes(value as string)) error("enum", { allowedValues: schema.enum }, value);
  if (typeof value === "number") {
    if (schema.maximum !== undefined && !(value <= schema.maximum)) error("maximum", { comparison: "<=", limit: schema.maximum }, value);
    if (schema.minimum !== undefined && !(value >= schema.minimum)) error("minimum", { comparison: ">=", limit: schema.minimum }, value);
  }
  if (typeof value === "string") {
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength) error("maxLength", { limit: schema.maxLength }, value);
    if (schema.pattern !== undefined && !patternOf(schema.pattern).test(value)) error("pattern", { pattern: schema.pattern }, value);
    if (schema.format === "uuid" && !UUID.test(value)) error("format", { format: "uuid" }, value);
  }
  return { errors, value };
}

/**
 * Checks and reads the parameters of searchEvents or countEvents: the path's `conversation_id` and
 * the query's values (text; an array is a parameter given more than once). Parameters the
 * operation does not have are ignored, as FastAPI does.
 * @param leading details found before the parameters were read (the server's query-string bound), answered first
 */
export function checkEventQuery(
  operation: EventQueryOperation,
  path: { conversation_id: string },
  query: Readonly<Record<string, unknown>>,
  leading: readonly ValidationError[] = [],
): EventQueryCheck {
  const { path: pathSchemas, query: querySchemas } = SEARCH_PARAMETERS[operation] as { path: Record<string, ParameterSchema>; query: Record<string, ParameterSchema> };
  const detail: ValidationError[] = [...leading];
  const values: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!Object.hasOwn(querySchemas, name)) continue;
    if (Array.isArray(value)) {
      detail.push({ loc: ["query", name], msg: "must be given once, got it " + value.length + " times", type: "value_error" });
      continue;
    }
    if (value !== undefined) values[name] = value;
  }
  for (const [where, schemas, given] of [["path", pathSchemas, path as Record<string, unknown>], ["query", querySchemas, values]] as const) {
    const errors: AjvErrorObject[] = [];
    for (const [name, schema] of Object.entries(schemas)) {
      if (given[name] === undefined) continue;
      const checked = check(name, schema, given[name]);
      errors.push(...checked.errors);
      values[name] = checked.value;
    }
    if (errors.length) detail.push(...toIssues(errors).map((issue) => toValidationError(where as Location, [], issue)));
  }
  if (detail.length) return { ok: false, detail, afterNotFound: false };

  const filters: SearchFilters = {};
  const text = (name: string) => values[name] as string | undefined;
  if (text("kind")) filters.kind = kindShortName(text("kind")!) as EventKind;
  if (text("source")) filters.source = text("source") as EventSource;
  if (text("body") !== undefined && text("body") !== "") filters.body = text("body");
  for (const [name, key] of [["timestamp__gte", "timestampGte"], ["timestamp__lt", "timestampLt"]] as const) {
    const given = text(name);
    if (given === undefined) continue;
    const micros = instantMicros(given);
    // The first only, as the server has always answered.
    if (micros === undefined) return { ok: false, detail: [{ loc: ["query", name], msg: `must be ${instantError(given)}`, type: "datetime_parsing" }], afterNotFound: true };
    filters[key] = micros;
  }
  return {
    ok: true,
    query: {
      conversationId: path.conversation_id,
      filters,
      order: text("sort_order") === "TIMESTAMP_DESC" ? "desc" : "asc",
      limit: (values.limit as number | undefined) ?? 100,
      ...(text("page_id") !== undefined && { pageId: text("page_id") }),
    },
  };
}
