/**
 * Request validation derived from the bundled OpenAPI document: for every operation, one validator
 * for its path and query parameters and one for its JSON body, each compiled once, on first use. Failures
 * become FastAPI-shaped entries (`{ loc, msg, type }`) whose `loc` points at the culprit.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { toIssues, type AjvErrorObject, type ValidationIssue } from "@acs-toolkit/validator";
import { RequestValidationError, toValidationError } from "../core/errors.js";
import type { ValidationError } from "@acs-toolkit/schema";
import { rebaseOpenapiRefs } from "@acs-toolkit/schema/documents";
import { overflowDetails } from "./query.js";

export type Json = Record<string, unknown>;

export { ERROR_TYPES, RequestValidationError, toValidationError, type Location } from "../core/errors.js";

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
type Lazy = () => ValidateFunction;

function lazy(ajv: Ajv2020, schema: Json): Lazy {
  let compiled: ValidateFunction | undefined;
  return () => (compiled ??= ajv.compile(schema));
}

interface OperationValidators {
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
}

/** The schema that holds the document's components; every `#/components/...` ref is rebased onto it. */
const COMPONENTS = "urn:acs:components";
const rebaseComponents = (schema: unknown) => rebaseOpenapiRefs(schema, COMPONENTS);

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

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

export class RequestValidators {
  private readonly byOperation = new Map<string, OperationValidators>();
  /** The AJV instance for JSON bodies and responses (no type coercion). */
  private readonly json: Ajv2020;

  /** @param document the bundled OpenAPI document */
  constructor(document: Json) {
    // Path and query values arrive as text and are coerced ("10" → 10); bodies and responses are
    // JSON and never are (42 is not a string).
    const components = rebaseComponents(document.components) as Json;
    const [params, json] = [true, false].map((coerceTypes) => {
      const ajv = new Ajv2020({
        strict: false, // OpenAPI annotations (x-*, example, contentMediaType) are not validation keywords
        allErrors: true,
        verbose: true,
        discriminator: true,
        allowUnionTypes: true,
        coerceTypes,
        // The bundled document's schemas are checked against JSON Schema 2020-12 by the tests
        // (test/unit/config-keys-cursor.test.ts), not at every start: compiling AJV's meta-schema
        // to check them took ~140 ms of each process's first RequestValidators.
        validateSchema: false,
      });
      ajv.addFormat("uuid", UUID);
      ajv.addSchema({ $id: COMPONENTS, components });
      return ajv;
    }) as [Ajv2020, Ajv2020];
    this.json = json;

    for (const pathItem of Object.values(document.paths as Record<string, Json>)) {
      for (const op of Object.values(pathItem)) {
        const operation = op as { operationId?: string; parameters?: unknown[]; requestBody?: unknown };
        if (!operation.operationId) continue;
        const parameters = (operation.parameters ?? []).map((p) => resolveRef<Parameter>(document, p as Parameter));
        const group = (where: "path" | "query") => {
          const list = parameters.filter((p) => p.in === where);
          if (list.length === 0) return undefined;
          return lazy(params, {
            $id: `urn:acs:operation:${operation.operationId}:${where}`,
            type: "object",
            properties: Object.fromEntries(list.map((p) => [p.name, rebaseComponents(p.schema ?? {})])),
            required: list.filter((p) => p.required).map((p) => p.name),
          });
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
          body: jsonSchema ? lazy(json, { $id: `urn:acs:operation:${operation.operationId}:body`, ...(rebaseComponents(jsonSchema) as Json) }) : undefined,
          queryNames: new Set(parameters.filter((p) => p.in === "query").map((p) => p.name)),
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

  private operation(operationId: string): OperationValidators {
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

  /**
   * Issues of a JSON response body against the spec for that operation and status (empty when it
   * conforms); an undocumented status is an issue too. Used by the tests and the conformance suite.
   */
  response(operationId: string, status: number, body: unknown): ValidationIssue[] {
    const responses = this.operation(operationId).responses;
    let validate = responses.get(String(status));
    if (validate && typeof validate !== "function") responses.set(String(status), (validate = this.json.compile(validate)));
    if (!validate) return [{ pointer: "", rule: "status", message: `status ${status} is not documented for ${operationId}` }];
    return validate(body) ? [] : issuesOf(validate.errors);
  }

  /**
   * Whether a JSON value conforms to a schema of the document's components, named by its path
   * under `components/schemas` (`ExecutionStatus`, `AgentConversationState/properties/stats`).
   * Compiled on first use.
   */
  conforms(schemaPath: string, value: unknown): boolean {
    const validate = this.json.getSchema(`${COMPONENTS}#/components/schemas/${schemaPath}`);
    if (!validate) throw new Error(`no schema ${schemaPath} in the OpenAPI document's components`);
    return validate(value) as boolean;
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
function issuesOf(errors: ErrorObject[] | null | undefined): ValidationIssue[] {
  const list = (errors ?? []) as unknown as AjvErrorObject[];
  const secret = new Set(
    list.filter((e) => e.parentSchema?.["x-secret"] === true || e.parentSchema?.writeOnly === true).map((e) => e.instancePath),
  );
  return toIssues(list).map((issue) => (secret.has(issue.pointer) ? { ...issue, message: issue.message.replace(/, got .*$/s, "") } : issue));
}

const shared = new WeakMap<Json, RequestValidators>();

/**
 * The request validators of a document, compiled once per process and shared by every app, live
 * channel and recorded-state reader built over it (tests and the mock build many apps; a compile of
 * them all takes about 100 ms). Compiled before the first request is served.
 */
export function sharedRequestValidators(document: Json): RequestValidators {
  let validators = shared.get(document);
  if (!validators) shared.set(document, (validators = new RequestValidators(document).compileRequests()));
  return validators;
}
