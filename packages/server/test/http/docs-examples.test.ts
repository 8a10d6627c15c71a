/**
 * The examples the API reference shows belong to their operation: a 422's `loc` names an input the
 * operation takes (a parameter, or a property of its body), and every example is valid under its
 * response's schema.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { openapiDocument, rebaseOpenapiRefs } from "@acs-toolkit/schema/documents";

type Json = Record<string, any>;
const doc = openapiDocument as Json;
const BASE = "https://acs-toolkit.test/openapi.json";
const ajv = new Ajv2020({ strict: false, discriminator: true });
ajv.addSchema({ $id: BASE, components: rebaseOpenapiRefs(doc.components, BASE) } as object);
const deref = (node: Json): Json => (typeof node?.$ref === "string" && node.$ref.startsWith("#/") ? deref(node.$ref.slice(2).split("/").reduce((at: Json, key: string) => at[key], doc)) : node);

/** The property names a body schema declares, its `allOf` parts and the branches of a conditional included. */
const propertyNames = (node: Json): string[] => {
  const schema = deref(node);
  const parts = [...((schema.allOf ?? []) as Json[]), ...[schema.then, schema.else].filter(Boolean)] as Json[];
  return [...Object.keys(schema.properties ?? {}), ...parts.flatMap(propertyNames)];
};

const examples = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
  Object.entries(item as Json).flatMap(([method, op]) =>
    Object.entries((op as Json).responses ?? {}).flatMap(([status, raw]) => {
      const response = deref(raw as Json);
      return Object.values(response.content ?? {}).flatMap((media) => ("example" in (media as Json) ? [{ operation: (op as Json).operationId as string, path, method, status, op: op as Json, schema: (media as Json).schema, example: (media as Json).example }] : []));
    }),
  ),
);

describe("response examples of the OpenAPI document", () => {
  it("exist for every 422 of every operation", () => {
    const with422 = Object.values(doc.paths as Json).flatMap((item) => Object.values(item as Json).filter((op: Json) => op.responses?.["422"]).map((op: Json) => op.operationId));
    expect(examples.filter((e) => e.status === "422").map((e) => e.operation).sort()).toEqual(with422.sort());
  });

  it.each(examples.map((e) => [`${e.operation} ${e.status}`, e] as const))("%s is valid under its schema", (_name, { schema, example }) => {
    const validate = ajv.compile(rebaseOpenapiRefs(schema, BASE) as object);
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each(examples.filter((e) => e.status === "422").map((e) => [e.operation, e] as const))("%s: each 422 loc names an input of the operation", (_name, { op, example }) => {
    const parameters = ((op.parameters ?? []) as Json[]).map(deref);
    const body = deref(op.requestBody?.content ? (Object.values(op.requestBody.content)[0] as Json).schema : {});
    // A JSON Lines body: `loc` is ["body", <line number>, ...the path in that line's event].
    const lines = Object.keys(op.requestBody?.content ?? {}).includes("application/x-ndjson");
    for (const { loc } of example.detail as Array<{ loc: [string, string | number] }>) {
      const [where, name] = loc;
      if (where === "body" && lines) expect(Number.isInteger(name) && (name as number) >= 1, `body line ${name}`).toBe(true);
      else if (where === "body") expect(propertyNames(body), `body.${name}`).toContain(name);
      else expect(parameters.filter((p) => p.in === where).map((p) => p.name), `${where}.${name}`).toContain(name);
    }
  });
});
