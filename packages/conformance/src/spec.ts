/**
 * What the spec says, compiled for checking answers: one validator per documented JSON response
 * (operation × status) of the bundled OpenAPI document, and the facts the checks derive from it
 * (which operations need the key, which are extensions).
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { openapiDocument, rebaseOpenapiRefs } from "@acs-toolkit/schema/documents";
import { formatIssue, toIssues, type AjvErrorObject } from "@acs-toolkit/validator";

type Json = Record<string, unknown>;

/** The schema that holds the document's components; every `#/components/...` ref is rebased onto it. */
const COMPONENTS = "urn:acs-conformance:components";
const rebaseComponents = (schema: unknown) => rebaseOpenapiRefs(schema, COMPONENTS);

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** RFC 3339 date-time (JSON Schema's `date-time`): the zone offset is required. */
const DATE_TIME = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/** One operation of the document, as far as the checks need it. */
export interface SpecOperation {
  operationId: string;
  method: string;
  /** The path template, `/api/conversations/{conversation_id}/events/search`. */
  path: string;
  /** True when the operation cannot be called without `X-Session-API-Key` (no `{}` alternative). */
  requiresKey: boolean;
  /** Marked `x-acs-extension: true`: a documented extension of the reference server, not the interface. */
  extension: boolean;
}

function resolveRef<T>(node: unknown): T {
  if (typeof node === "object" && node !== null && "$ref" in node) {
    const ref = (node as { $ref: string }).$ref;
    return ref
      .slice(2)
      .split("/")
      .reduce<unknown>((at, token) => (at as Json)[token], openapiDocument) as T;
  }
  return node as T;
}

/** Every operation of the bundled OpenAPI document. */
export const OPERATIONS: readonly SpecOperation[] = Object.entries(openapiDocument.paths as Record<string, Json>).flatMap(([path, item]) =>
  Object.entries(item).flatMap(([method, op]) => {
    const operation = op as { operationId?: string; security?: Json[]; "x-acs-extension"?: boolean };
    if (!operation.operationId) return [];
    const security = operation.security ?? (openapiDocument.security as Json[] | undefined) ?? [];
    return [
      {
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        requiresKey: security.length > 0 && security.every((s) => Object.keys(s).length > 0),
        extension: operation["x-acs-extension"] === true,
      },
    ];
  }),
);

/** Validators of the spec's JSON responses, compiled on first use. */
export class SpecResponses {
  private readonly ajv: Ajv2020;
  private readonly schemas = new Map<string, Json>();
  private readonly compiled = new Map<string, ValidateFunction>();
  readonly operations = OPERATIONS;

  constructor() {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, discriminator: true, allowUnionTypes: true });
    this.ajv.addFormat("uuid", UUID);
    this.ajv.addFormat("date-time", DATE_TIME);
    this.ajv.addSchema({ $id: COMPONENTS, components: rebaseComponents(openapiDocument.components) });
    for (const item of Object.values(openapiDocument.paths as Record<string, Json>)) {
      for (const op of Object.values(item)) {
        const operation = op as { operationId?: string; responses?: Json };
        if (!operation.operationId) continue;
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          const schema = resolveRef<{ content?: Record<string, { schema?: Json }> }>(response).content?.["application/json"]?.schema;
          if (schema) this.schemas.set(`${operation.operationId} ${status}`, rebaseComponents(schema) as Json);
        }
      }
    }
  }

  /** Why a value does not conform to a schema of `components.schemas` (`HTTPValidationError`, `ErrorDetail`…); empty when it does. */
  componentIssues(name: string, value: unknown): string[] {
    const key = `component ${name}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile({ $id: `urn:acs-conformance:component:${name}`, $ref: `${COMPONENTS}#/components/schemas/${name}` });
      this.compiled.set(key, validate);
    }
    if (validate(value)) return [];
    return toIssues((validate.errors ?? []) as unknown as AjvErrorObject[]).map(formatIssue);
  }

  /**
   * Why a JSON response body does not conform to the spec for its operation and status: readable
   * issue lines, empty when it conforms. An undocumented status is an issue too.
   */
  responseIssues(operationId: string, status: number, body: unknown): string[] {
    const key = `${operationId} ${status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      const schema = this.schemas.get(key);
      if (!schema) return [`status ${status} is not documented for ${operationId}`];
      validate = this.ajv.compile({ $id: `urn:acs-conformance:response:${operationId}:${status}`, ...schema });
      this.compiled.set(key, validate);
    }
    if (validate(body)) return [];
    return toIssues((validate.errors ?? []) as unknown as AjvErrorObject[]).map(formatIssue);
  }
}
