/**
 * The bundled, self-contained documents generated from spec/: import them from here when you need
 * them as objects (Node ESM or CJS, bundlers), or import the `*.json` subpaths directly.
 */
import asyncapi from "./generated/asyncapi.json" with { type: "json" };
import eventsSchema from "./generated/events.schema.json" with { type: "json" };
import openapi from "./generated/openapi.json" with { type: "json" };

/** The OpenAPI 3.1 document: every endpoint, every schema under `components.schemas`. */
export const openapiDocument: Record<string, unknown> = openapi;
/** The AsyncAPI 3.0 document of the WebSocket channel (payloads are JSON Schema 2020-12). */
export const asyncapiDocument: Record<string, unknown> = asyncapi;
/** JSON Schema 2020-12 of one Event (root) with `$defs` for every kind and `$defs/EventPage`. */
export const eventsJsonSchema: Record<string, unknown> = eventsSchema;

/**
 * A schema of the OpenAPI document made usable by a JSON Schema validator outside the document:
 * every local reference (`#/components/...`) is pointed at `base`, the `$id` under which the caller
 * adds the document's components (`ajv.addSchema({ $id: base, components })`), and OpenAPI's
 * discriminator `mapping`, which AJV rejects, is dropped (the variants' `kind` consts say the same).
 * Returns a copy; the input is not changed.
 */
export function rebaseOpenapiRefs(schema: unknown, base: string): unknown {
  if (Array.isArray(schema)) return schema.map((item) => rebaseOpenapiRefs(item, base));
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === "$ref" && typeof value === "string" && value.startsWith("#/")
        ? `${base}${value}`
        : key === "discriminator"
          ? { propertyName: (value as { propertyName?: unknown }).propertyName }
          : rebaseOpenapiRefs(value, base),
    ]),
  );
}
