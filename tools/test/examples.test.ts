import { Ajv2020 } from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import { describe, expect, it } from "vitest";
import { loadGenerated, walk, type Json } from "./helpers.js";

const eventsSchema = loadGenerated("events.schema.json");
const openapi = loadGenerated("openapi.json");

/** Ajv does not implement discriminator `mapping`; it finds the branch by the `const` of each oneOf variant instead. */
function withoutMapping(node: Json): Json {
  if (Array.isArray(node)) return node.map(withoutMapping);
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]: [string, Json]) =>
      key === "discriminator" ? [key, { propertyName: value.propertyName }] : [key, withoutMapping(value)],
    ),
  );
}

const EVENTS_ID = "urn:acs:events.schema.json";
const OPENAPI_ID = "urn:acs:openapi.json";
const ajv = new Ajv2020({ strict: false, discriminator: true, allowUnionTypes: true });
ajv.addFormat("uuid", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
ajv.addSchema({ ...withoutMapping(eventsSchema), $id: EVENTS_ID });
// The OpenAPI document as a schema resource, so any schema inside it can be compiled by its pointer.
ajv.addSchema({ ...withoutMapping(openapi), $id: OPENAPI_ID });

function validator(id: string, pointer: string): ValidateFunction {
  const validate = ajv.getSchema(`${id}#${pointer}`);
  if (!validate) throw new Error(`no schema at ${id}#${pointer}`);
  return validate;
}
const def = (name: string) => validator(EVENTS_ID, `/$defs/${name}`);

function expectValid(validate: ValidateFunction, value: unknown, label: string) {
  const valid = validate(value);
  expect(validate.errors ?? [], label).toEqual([]);
  expect(valid, label).toBe(true);
}

// Action = SdkAction (discriminated by kind) | ClientAction (kind ClientAction_<tool name>).
const kindsOf = (union: string): string[] =>
  union === "Action" ? [...kindsOf("SdkAction"), "ClientAction"] : Object.keys(eventsSchema.$defs[union].discriminator.mapping);
const examplesOf = (name: string): Json[] => eventsSchema.$defs[name]?.examples ?? [];
const toolsInExamples: Json[] = examplesOf("SystemPromptEvent").flatMap((event) => event.tools);

describe("spec examples validate against the bundled events.schema.json", () => {
  const root = validator(EVENTS_ID, "");

  it.each(kindsOf("Event"))("%s: its examples are Events", (kind) => {
    expect(examplesOf(kind).length, `${kind} has examples`).toBeGreaterThan(0);
    for (const [i, example] of examplesOf(kind).entries()) {
      expect(example.kind).toBe(kind);
      expectValid(def(kind), example, `${kind} example ${i}`);
      expectValid(root, example, `${kind} example ${i} as an Event`);
    }
  });

  it("EventPage: its examples are pages", () => {
    expect(examplesOf("EventPage").length).toBeGreaterThan(0);
    for (const example of examplesOf("EventPage")) expectValid(def("EventPage"), example, "EventPage");
  });

  describe.each([
    ["Action", 1],
    ["Observation", 1],
    // tools.yaml carries no examples of its own; the tool lists of SystemPromptEvent examples are the only ones.
    ["ToolDefinition", 0],
  ] as const)("%s variants", (union, minimum) => {
    it.each(kindsOf(union))(`%s: its examples are ${union}s`, (kind) => {
      const examples = [...examplesOf(kind), ...toolsInExamples.filter((tool) => tool.kind === kind)];
      expect(examples.length, `${kind} has examples`).toBeGreaterThanOrEqual(minimum);
      for (const [i, example] of examples.entries()) {
        expectValid(def(kind), example, `${kind} example ${i}`);
        expectValid(def(union), example, `${kind} example ${i} as ${union}`);
      }
    });
  });

  it("the SystemPromptEvent examples list tools", () => {
    expect(toolsInExamples.length).toBeGreaterThan(0);
  });

  it("every other definition's examples validate too", () => {
    const unions = new Set(["Event", "Action", "SdkAction", "Observation", "ToolDefinition"]);
    const variants = new Set([...unions].flatMap(kindsOf));
    for (const [name, schema] of Object.entries<Json>(eventsSchema.$defs)) {
      if (variants.has(name) || unions.has(name) || name === "EventPage") continue;
      for (const [i, example] of (schema.examples ?? []).entries()) expectValid(def(name), example, `${name} example ${i}`);
    }
  });
});

describe("the validator is not vacuous: broken copies of examples are rejected", () => {
  const root = validator(EVENTS_ID, "");
  const first = (name: string) => structuredClone(examplesOf(name)[0]);

  it.each([
    ["an event with an unknown property", () => ({ ...first("PauseEvent"), paused_by: "me" })],
    ["an event of an unknown kind", () => ({ ...first("PauseEvent"), kind: "NoSuchEvent" })],
    ["a MessageEvent without llm_message", () => ({ ...first("MessageEvent"), llm_message: undefined })],
    ["a MessageEvent without source", () => ({ ...first("MessageEvent"), source: undefined })],
    ["an event with a bad source", () => ({ ...first("ActionEvent"), source: "system" })],
    ["a TerminalAction with command 5", () => ({ ...first("ActionEvent"), action: { kind: "TerminalAction", command: 5 } })],
    ["an action of an unknown kind", () => ({ ...first("ActionEvent"), action: { kind: "FlyAction" } })],
    ["a BrowserScrollAction scrolling left", () => ({ ...first("ActionEvent"), action: { kind: "BrowserScrollAction", direction: "left" } })],
    ["an observation with an unknown property", () => {
      const event = first("ObservationEvent");
      event.observation.extra = true;
      return event;
    }],
    ["a CriticResult score above 1", () => ({ ...first("ActionEvent"), critic_result: { score: 1.5, message: null } })],
    ["a Condensation with a negative summary_offset", () => ({ ...first("Condensation"), summary_offset: -1 })],
    ["a client tool's action without a tool name", () => ({ ...first("ActionEvent"), action: { kind: "ClientAction_" } })],
    ["an event whose parent is not an event id", () => ({ ...first("PauseEvent"), parent_id: "root" })],
    ["a classification of an unknown kind", () => ({ ...first("AgentErrorEvent"), classification: { kind: "oops", retryable: false } })],
    ["a HookExecutionEvent of an unknown hook event type", () => ({ ...first("HookExecutionEvent"), hook_event_type: "PreCommit" })],
    ["a never released kind (SystemPromptUpdateEvent, branch fix-tools)", () => ({ ...first("SystemPromptEvent"), kind: "SystemPromptUpdateEvent" })],
  ])("%s", (_, make) => {
    // JSON round trip: `undefined` fields disappear as they would on the wire.
    expect(root(JSON.parse(JSON.stringify(make())))).toBe(false);
  });
});

describe("examples in openapi.json validate against their schemas", () => {
  it("every `examples` array inside components.schemas", () => {
    let count = 0;
    walk(openapi.components.schemas, (node, pointer) => {
      if (!Array.isArray(node.examples)) return;
      const validate = validator(OPENAPI_ID, `/components/schemas${pointer}`);
      for (const [i, example] of node.examples.entries()) {
        expectValid(validate, example, `#/components/schemas${pointer} example ${i}`);
        count++;
      }
    });
    expect(count).toBeGreaterThan(50);
  });

  it("every media-type and parameter example", () => {
    let count = 0;
    walk(openapi, (node, pointer) => {
      if (!node.schema || pointer.startsWith("/components/schemas")) return;
      const validate = validator(OPENAPI_ID, `${pointer}/schema`);
      const values = [
        ...("example" in node ? [node.example] : []),
        ...Object.values<Json>(node.examples ?? {}).map((example) => example.value),
      ];
      for (const value of values) {
        expectValid(validate, value, `${pointer}: ${JSON.stringify(value)}`);
        count++;
      }
    });
    expect(count).toBeGreaterThanOrEqual(5);
  });
});
