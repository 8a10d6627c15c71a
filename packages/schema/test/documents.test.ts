import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as documents from "@acs-toolkit/schema/documents";
import * as root from "@acs-toolkit/schema";

const generated = (name: string) => new URL(`../src/generated/${name}`, import.meta.url);
const load = (name: string): unknown => JSON.parse(readFileSync(generated(name), "utf8"));
const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

describe("@acs-toolkit/schema/documents", () => {
  it("exports the three bundled documents, the reference rebaser, and nothing else", () => {
    expect(Object.keys(documents).sort()).toEqual(["asyncapiDocument", "eventsJsonSchema", "openapiDocument", "rebaseOpenapiRefs"]);
  });

  it("rebaseOpenapiRefs points every local reference at the base and drops discriminator mappings, on a copy", () => {
    const schema = {
      oneOf: [{ $ref: "#/components/schemas/A" }, { $ref: "https://example.com/x.json" }],
      discriminator: { propertyName: "kind", mapping: { A: "#/components/schemas/A" } },
      properties: { $ref: { type: "string" } },
    };
    const before = structuredClone(schema);
    expect(documents.rebaseOpenapiRefs(schema, "urn:test")).toEqual({
      oneOf: [{ $ref: "urn:test#/components/schemas/A" }, { $ref: "https://example.com/x.json" }],
      discriminator: { propertyName: "kind" },
      properties: { $ref: { type: "string" } },
    });
    expect(schema).toEqual(before);
    const rebased = JSON.stringify(documents.rebaseOpenapiRefs(documents.openapiDocument.components, "urn:test"));
    expect(rebased).not.toMatch(/"\$ref":"#\//);
    expect(rebased).not.toContain('"mapping"');
  });

  it.each([
    ["openapiDocument", "openapi.json"],
    ["asyncapiDocument", "asyncapi.json"],
    ["eventsJsonSchema", "events.schema.json"],
  ] as const)("%s equals src/generated/%s", (name, file) => {
    expect(documents[name]).toEqual(load(file));
  });

  it("the documents are what their names say", () => {
    expect(documents.openapiDocument.openapi).toBe("3.1.0");
    expect(documents.asyncapiDocument.asyncapi).toBe("3.0.0");
    expect(documents.eventsJsonSchema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
  });

  it("the JSON subpath exports name the same files", () => {
    for (const file of ["openapi.json", "asyncapi.json", "events.schema.json"]) {
      expect(manifest.exports[`./${file}`]).toBe(`./src/generated/${file}`);
    }
  });

  it("the root entry stays free of the documents", () => {
    for (const name of Object.keys(documents)) expect(root).not.toHaveProperty(name);
  });
});
