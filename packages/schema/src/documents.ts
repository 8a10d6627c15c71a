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
