/**
 * The request checks compiled by AJV, for Node: from the build's standalone code where it was
 * built from the same document (precompiled-validators.ts), compiled here otherwise.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { ValidationIssue } from "@acs-toolkit/validator";
import { COMPONENTS, issuesOf, rebaseComponents, RequestChecks, UUID, type Json } from "./request-checks.js";

export { UUID, type Json, type PrecompiledValidators } from "./request-checks.js";
export { ERROR_TYPES, RequestValidationError, toValidationError, type Location } from "../core/errors.js";

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


/** The request checks compiled by AJV (in Node), from build-time code where given; also checks responses. */
export class RequestValidators extends RequestChecks {
  /** The AJV instance for JSON bodies and responses (no type coercion). */
  private readonly json: Ajv2020;

  /**
   * @param document the bundled OpenAPI document
   * @param precompiled validators compiled at build time, by schema `$id`; the others are compiled here
   */
  constructor(document: Json, precompiled?: ReadonlyMap<string, ValidateFunction>) {
    // Path and query values arrive as text and are coerced ("10" → 10); bodies and responses are
    // JSON and never are (42 is not a string).
    const components = rebaseComponents(document.components) as Json;
    const json = RequestValidators.ajv(false, components);
    let params: Ajv2020 | undefined;
    super(document, (schema, coerceTypes) => precompiled?.get(schema.$id as string) ?? (coerceTypes ? (params ??= RequestValidators.ajv(true, components)) : json).compile(schema), components);
    this.json = json;
  }

  /** An AJV instance of the request validators, with the document's components; `code` for the build's standalone code. */
  static ajv(coerceTypes: boolean, components: Json, code?: NonNullable<ConstructorParameters<typeof Ajv2020>[0]>["code"]): Ajv2020 {
    const ajv = new Ajv2020({ ...ajvOptions(coerceTypes), ...(code && { code }) });
    ajv.addFormat("uuid", UUID);
    ajv.addSchema({ $id: COMPONENTS, components });
    return ajv;
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
}

