/**
 * Request validation derived from the bundled OpenAPI document: for every operation, one validator
 * for its path and query parameters and one for its JSON body, each compiled once, on first use. Failures
 * become FastAPI-shaped entries (`{ loc, msg, type }`) whose `loc` points at the culprit.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { toIssues, type AjvErrorObject, type ValidationIssue } from "@acs-toolkit/validator";
import { RequestValidationError, toValidationError } from "../core/errors.js";
import type { ValidationError } from "@acs-toolkit/schema";
import { rebaseOpenapiRefs } from "@acs-toolkit/schema/documents";
import { overflowDetails } from "./query-overflow.js";

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

/**
 * Request validators compiled at build time (scripts/request-validators.ts →
 * dist/request-validators.cjs, AJV standalone code) by their schemas' `$id`s: a start loads them
 * instead of compiling them (~100–150 ms of every server and mock start).
 */
export type PrecompiledValidators = ReadonlyMap<string, ValidateFunction>;

/** The AJV options of the request validators (those of the build's standalone code too). */
function ajvOptions(coerceTypes: boolean) {
  return {
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
  } as const;
}

function lazy(ajv: () => Ajv2020, schema: Json, precompiled: PrecompiledValidators | undefined): Lazy {
  let compiled: ValidateFunction | undefined = precompiled?.get(schema.$id as string);
  return () => (compiled ??= ajv().compile(schema));
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

export class RequestValidators {
  private readonly byOperation = new Map<string, OperationValidators>();
  /** The AJV instance for JSON bodies and responses (no type coercion). */
  private readonly json: Ajv2020;
  /** Every path, query and body schema, with whether its values are coerced (what the build compiles). */
  readonly requestSchemas: Array<{ schema: Json; coerceTypes: boolean }> = [];
  /** The document's components, rebased (what every schema's refs point into). */
  readonly components: Json;

  /**
   * @param document the bundled OpenAPI document
   * @param precompiled validators compiled at build time, by schema `$id`; the others are compiled here
   */
  constructor(document: Json, precompiled?: PrecompiledValidators) {
    // Path and query values arrive as text and are coerced ("10" → 10); bodies and responses are
    // JSON and never are (42 is not a string).
    const components = rebaseComponents(document.components) as Json;
    this.components = components;
    this.json = RequestValidators.ajv(false, components);
    let params: Ajv2020 | undefined;
    const paramsAjv = () => (params ??= RequestValidators.ajv(true, components));
    const request = (schema: Json, coerceTypes: boolean): Lazy => {
      this.requestSchemas.push({ schema, coerceTypes });
      return lazy(coerceTypes ? paramsAjv : () => this.json, schema, precompiled);
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
        });
      }
    }
  }

  /** An AJV instance of the request validators, with the document's components; `code` for the build's standalone code. */
  static ajv(coerceTypes: boolean, components: Json, code?: NonNullable<ConstructorParameters<typeof Ajv2020>[0]>["code"]): Ajv2020 {
    const ajv = new Ajv2020({ ...ajvOptions(coerceTypes), ...(code && { code }) });
    ajv.addFormat("uuid", UUID);
    ajv.addSchema({ $id: COMPONENTS, components });
    return ajv;
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

/** sha256 of a document's JSON: what the build's validators were compiled from. */
export function documentHash(document: Json): string {
  return createHash("sha256").update(JSON.stringify(document)).digest("hex");
}

/** The build's file of precompiled request validators (next to the bundle in dist/; absent in src/). */
const PRECOMPILED_FILE = new URL("./request-validators.cjs", import.meta.url);

/**
 * The request validators the build compiled for `document` (dist/request-validators.cjs), by
 * schema `$id`; undefined when there is no such file (running from the sources) or it was built from
 * another document.
 */
export function loadPrecompiledValidators(document: Json, file: URL = PRECOMPILED_FILE): PrecompiledValidators | undefined {
  let built: { documentHash: string; validators: Record<string, ValidateFunction> };
  try {
    built = createRequire(import.meta.url)(fileURLToPath(file)) as typeof built;
  } catch {
    return undefined;
  }
  return built.documentHash === documentHash(document) ? new Map(Object.entries(built.validators)) : undefined;
}

const shared = new WeakMap<Json, RequestValidators>();

/**
 * The request validators of a document, compiled once per process and shared by every app, live
 * channel and recorded-state reader built over it (tests and the mock build many apps; a compile of
 * them all takes about 100 ms). Compiled before the first request is served, or loaded: the build
 * compiles them for the bundled document (loadPrecompiledValidators).
 */
export function sharedRequestValidators(document: Json): RequestValidators {
  let validators = shared.get(document);
  if (!validators) shared.set(document, (validators = new RequestValidators(document, loadPrecompiledValidators(document)).compileRequests()));
  return validators;
}
