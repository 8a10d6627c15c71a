/**
 * Request validation derived from the bundled OpenAPI document: for every operation, one validator
 * for its path and query parameters and one for its JSON body, each made once, on first use.
 * Failures become FastAPI-shaped entries (`{ loc, msg, type }`) whose `loc` points at the culprit.
 * No validator compiler is imported here (request-validators.ts compiles with AJV in Node).
 */
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { toIssues, type AjvErrorObject, type ValidationIssue } from "@acs-toolkit/validator";
import { RequestValidationError, toValidationError } from "../core/errors.js";
import type { ValidationError } from "@acs-toolkit/schema";
import { rebaseOpenapiRefs } from "@acs-toolkit/schema/documents";
import { overflowDetails } from "./query-overflow.js";

export type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: Json;
}

/**
 * A validator compiled when first needed. Request validators are all compiled up front by
 * `sharedRequestValidators` (a compile takes up to about 130 ms, which on a request would hold
 * the event loop past its 50 ms budget); response validators stay lazy (only tests read them).
 */
export type Lazy = () => ValidateFunction;

/**
 * Request validators compiled at build time (scripts/request-validators.ts →
 * dist/request-validators.cjs, AJV standalone code) by their schemas' `$id`s: a start loads them
 * instead of compiling them (~100–150 ms of every server and mock start).
 */
export type PrecompiledValidators = ReadonlyMap<string, ValidateFunction>;

/** The validators of one operation (compiled on first use). */
export interface OperationValidators {
  path?: Lazy;
  query?: Lazy;
  body?: Lazy;
  /**
   * JSON response bodies by status code: schemas now, compiled on first use (only tests and
   * conformance checks read responses, so a server start does not pay for them).
   */
  responses: Map<string, Json | ValidateFunction>;
  /** Query parameter names, to report repeated ones precisely. */
  queryNames: Set<string>;
  /** Query parameters whose schema is an array: given once or repeated (`ids=a&ids=b`). */
  queryArrays: Set<string>;
}

/** The schema that holds the document's components; every `#/components/...` ref is rebased onto it. */
export const COMPONENTS = "urn:acs:components";
export const rebaseComponents = (schema: unknown) => rebaseOpenapiRefs(schema, COMPONENTS);

/** The `uuid` format (the build's standalone code defines the same). */
export const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Resolves a `#/components/...` reference of the document. */
function resolveRef<T>(document: Json, node: T | { $ref: string }): T {
  if (typeof node === "object" && node !== null && "$ref" in node) {
    const target = node.$ref
      .slice(2)
      .split("/")
      .reduce<unknown>((at, token) => (at as Json)[token], document);
    return target as T;
  }
  return node as T;
}

/**
 * The request checks of a document: path and query parameters (coerced) and JSON bodies of every
 * operation, against the validators `validatorFor` gives (compiled by AJV in Node, the build's
 * precompiled ones in a browser). Failures become FastAPI-shaped entries whose `loc` points at the
 * culprit. Imports no validator compiler: the browser mock checks with it.
 */
export class RequestChecks {
  protected readonly byOperation = new Map<string, OperationValidators>();
  /** Every path, query and body schema, with whether its values are coerced (what the build compiles). */
  readonly requestSchemas: Array<{ schema: Json; coerceTypes: boolean }> = [];
  /** The document's components, rebased (what every schema's refs point into). */
  readonly components: Json;

  /**
   * @param document the bundled OpenAPI document
   * @param validatorFor the validator of a request schema (by its `$id`), asked for on first use
   * @param components the document's components rebased (given when the caller made them already)
   */
  constructor(document: Json, validatorFor: (schema: Json, coerceTypes: boolean) => ValidateFunction, components = rebaseComponents(document.components) as Json) {
    this.components = components;
    const request = (schema: Json, coerceTypes: boolean): Lazy => {
      this.requestSchemas.push({ schema, coerceTypes });
      let compiled: ValidateFunction | undefined;
      return () => (compiled ??= validatorFor(schema, coerceTypes));
    };
    for (const pathItem of Object.values(document.paths as Record<string, Json>)) {
      for (const op of Object.values(pathItem)) {
        const operation = op as { operationId?: string; parameters?: unknown[]; requestBody?: unknown };
        if (!operation.operationId) continue;
        const parameters = (operation.parameters ?? []).map((p) => resolveRef<Parameter>(document, p as Parameter));
        const group = (where: "path" | "query") => {
          const list = parameters.filter((p) => p.in === where);
          if (list.length === 0) return undefined;
          return request(
            {
              $id: `urn:acs:operation:${operation.operationId}:${where}`,
              type: "object",
              properties: Object.fromEntries(list.map((p) => [p.name, rebaseComponents(p.schema ?? {})])),
              required: list.filter((p) => p.required).map((p) => p.name),
            },
            true,
          );
        };
        const body = resolveRef<{ content?: Record<string, { schema?: Json }> }>(document, operation.requestBody ?? {});
        const jsonSchema = body.content?.["application/json"]?.schema;
        const responses = new Map<string, Json | ValidateFunction>();
        for (const [status, response] of Object.entries((op as { responses?: Json }).responses ?? {})) {
          const schema = resolveRef<{ content?: Record<string, { schema?: Json }> }>(document, response as Json).content?.["application/json"]?.schema;
          if (schema) responses.set(status, { $id: `urn:acs:operation:${operation.operationId}:response:${status}`, ...(rebaseComponents(schema) as Json) });
        }
        this.byOperation.set(operation.operationId, {
          responses,
          path: group("path"),
          query: group("query"),
          body: jsonSchema ? request({ $id: `urn:acs:operation:${operation.operationId}:body`, ...(rebaseComponents(jsonSchema) as Json) }, false) : undefined,
          queryNames: new Set(parameters.filter((p) => p.in === "query").map((p) => p.name)),
          queryArrays: new Set(parameters.filter((p) => p.in === "query" && (p.schema as { type?: unknown } | undefined)?.type === "array").map((p) => p.name)),
        });
      }
    }
  }


  /**
   * Compiles every path, query and body validator now, so that no request pays for a compile.
   * Idempotent.
   */
  compileRequests(): this {
    for (const operation of this.byOperation.values()) for (const compile of [operation.path, operation.query, operation.body]) compile?.();
    return this;
  }

  protected operation(operationId: string): OperationValidators {
    const found = this.byOperation.get(operationId);
    if (!found) throw new Error(`no operation ${operationId} in the OpenAPI document`);
    return found;
  }

  /**
   * Validates and coerces path and query parameters; returns the coerced values.
   * @throws RequestValidationError
   */
  parameters(operationId: string, path: Record<string, string>, query: Record<string, unknown>): { path: Json; query: Json } {
    const validators = this.operation(operationId);
    const errors: ValidationError[] = [];
    const pathValues: Json = { ...path };
    const queryValues: Json = {};
    errors.push(...overflowDetails(query));
    for (const [name, value] of Object.entries(query)) {
      if (!validators.queryNames.has(name)) continue; // unknown query parameters are ignored, as FastAPI does
      if (validators.queryArrays.has(name)) {
        queryValues[name] = Array.isArray(value) ? value : [value]; // ids=a&ids=b, or one ids=a
        continue;
      }
      if (Array.isArray(value)) {
        errors.push({ loc: ["query", name], msg: "must be given once, got it " + value.length + " times", type: "value_error" });
        continue;
      }
      queryValues[name] = value;
    }
    for (const [where, compiled, values] of [
      ["path", validators.path, pathValues],
      ["query", validators.query, queryValues],
    ] as const) {
      const validate = compiled?.();
      if (validate && !validate(values)) errors.push(...issuesOf(validate.errors).map((i) => toValidationError(where, [], i)));
    }
    if (errors.length) throw new RequestValidationError(errors);
    return { path: pathValues, query: queryValues };
  }

  /** Validates a parsed JSON body. @throws RequestValidationError */
  body(operationId: string, body: unknown): void {
    const validate = this.operation(operationId).body?.();
    if (!validate) return;
    if (body === undefined) {
      throw new RequestValidationError([{ loc: ["body"], msg: "a JSON body is required", type: "missing" }]);
    }
    if (!validate(body)) throw new RequestValidationError(issuesOf(validate.errors).map((i) => toValidationError("body", [], i)));
  }
}

/**
 * Readable issues; the value of a secret field (`x-secret` / `writeOnly` in the spec) is never
 * echoed into a message.
 */
export function issuesOf(errors: ErrorObject[] | null | undefined): ValidationIssue[] {
  const list = (errors ?? []) as unknown as AjvErrorObject[];
  const secret = new Set(
    list.filter((e) => e.parentSchema?.["x-secret"] === true || e.parentSchema?.writeOnly === true).map((e) => e.instancePath),
  );
  return toIssues(list).map((issue) => (secret.has(issue.pointer) ? { ...issue, message: issue.message.replace(/, got .*$/s, "") } : issue));
}
