import SwaggerParser from "@apidevtools/swagger-parser";
import specs from "@asyncapi/specs";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { loadGenerated, type Json } from "./helpers.js";

const openapi = loadGenerated("openapi.json");
const asyncapi = loadGenerated("asyncapi.json");
const eventsSchema = loadGenerated("events.schema.json");

const edited = (doc: Json, edit: (copy: Json) => void): Json => {
  const copy = structuredClone(doc);
  edit(copy);
  return copy;
};

describe("openapi.json", () => {
  // validate() dereferences its argument in place, hence the clones.
  it("is a valid OpenAPI 3.1 document (swagger-parser)", async () => {
    await expect(SwaggerParser.validate(structuredClone(openapi))).resolves.toMatchObject({ openapi: "3.1.0" });
  });

  it.each([
    ["without info", (d: Json) => delete d.info],
    ["with a response that is not an object", (d: Json) => (d.paths["/api/settings"].post.responses["200"] = 5)],
    [
      "with a dangling $ref",
      (d: Json) => (d.paths["/api/settings"].post.requestBody.content["application/json"].schema = { $ref: "#/components/schemas/Nope" }),
    ],
  ])("a copy %s is rejected", async (_, edit) => {
    await expect(SwaggerParser.validate(edited(openapi, edit))).rejects.toThrow();
  });
});

describe("asyncapi.json", () => {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, meta: false, validateSchema: false });
  const validate = ajv.compile(specs.schemas["3.0.0"]);

  it("is valid against the official AsyncAPI 3.0.0 JSON Schema", () => {
    const valid = validate(structuredClone(asyncapi));
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it.each([
    ["without info", (d: Json) => delete d.info],
    ["with a 2.x operation action (publish)", (d: Json) => (d.operations.receiveEvents.action = "publish")],
    ["with a channel that is not an object", (d: Json) => (d.channels.conversationEvents = "events")],
  ])("a copy %s is rejected", (_, edit) => {
    expect(validate(edited(asyncapi, edit))).toBe(false);
  });

  // The AsyncAPI schema does not look inside multi-format schemas, so check the 2020-12 payloads here.
  it("every component schema is a 2020-12 multi-format schema that is itself a valid JSON Schema 2020-12", () => {
    const ajv2020 = new Ajv2020({ strict: false });
    for (const [name, wrapper] of Object.entries<Json>(asyncapi.components.schemas)) {
      expect(wrapper.schemaFormat, name).toBe("application/schema+json;version=2020-12");
      expect(ajv2020.validateSchema(wrapper.schema), `${name}: ${ajv2020.errorsText()}`).toBe(true);
    }
    expect(ajv2020.validateSchema(edited(asyncapi.components.schemas.Event.schema, (s) => (s.type = 12)))).toBe(false);
  });

  it("its messages carry the Event, UserMessage and live-channel frame payloads", () => {
    expect(asyncapi.components.messages.Event.payload).toEqual({ $ref: "#/components/schemas/Event" });
    expect(asyncapi.components.messages.UserMessage.payload).toEqual({ $ref: "#/components/schemas/UserMessage" });
    expect(asyncapi.components.messages.Auth.payload).toEqual({ $ref: "#/components/schemas/LiveAuthFrame" });
    expect(asyncapi.components.messages.Error.payload).toEqual({ $ref: "#/components/schemas/ServerErrorEvent" });
  });
});

describe("events.schema.json", () => {
  it("is a valid JSON Schema 2020-12", () => {
    const ajv2020 = new Ajv2020({ strict: false });
    expect(ajv2020.validateSchema(eventsSchema), ajv2020.errorsText()).toBe(true);
    expect(eventsSchema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(eventsSchema.$ref).toBe("#/$defs/Event");
  });
});
