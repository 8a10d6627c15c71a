/**
 * Bundles spec/ into self-contained documents.
 *
 * json-schema-ref-parser loads and parses every file; we then flatten each file's `$defs` into one
 * name table (names are unique across files, checked here) and rewrite every `$ref` and every
 * discriminator mapping to point at that table. The result has stable, readable component names
 * (`#/components/schemas/ActionEvent`) instead of the positional paths a generic bundler picks.
 */
import path from "node:path";
import { $RefParser } from "@apidevtools/json-schema-ref-parser";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Schema files in the order their definitions appear in the bundles. */
export const SCHEMA_FILES = [
  "common.yaml",
  "content.yaml",
  "actions.yaml",
  "observations.yaml",
  "tools.yaml",
  "events.yaml",
  "settings.yaml",
  "agent-settings.yaml",
  "conversations.yaml",
  "errors.yaml",
  "workspace.yaml",
  "bash.yaml",
] as const;

export interface Bundles {
  /** Every definition of spec/schemas, by name, refs pointing at `#/$defs/<name>`. */
  defs: Record<string, JsonObject>;
  openapi: JsonObject;
  asyncapi: JsonObject;
  /** JSON Schema 2020-12 document for Event (root) with every definition it needs. */
  eventsSchema: JsonObject;
}

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** Maps a `$ref` found in `fromFile` to the definition name it targets, or undefined for a local document ref. */
function targetName(ref: string, fromFile: string, defFiles: Map<string, string>): string | undefined {
  const [filePart, pointer = ""] = ref.split("#");
  const file = filePart ? path.resolve(path.dirname(fromFile), filePart) : fromFile;
  const match = /^\/\$defs\/([^/]+)$/.exec(pointer);
  if (!match) {
    if (filePart) throw new Error(`${fromFile}: $ref "${ref}" must point at a definition (#/$defs/Name)`);
    return undefined;
  }
  const name = match[1]!;
  const owner = defFiles.get(name);
  if (owner === undefined) throw new Error(`${fromFile}: $ref "${ref}" names no definition`);
  if (owner !== file) throw new Error(`${fromFile}: $ref "${ref}" points at ${file}, but ${name} lives in ${owner}`);
  return name;
}

function rewrite(node: Json, fromFile: string, defFiles: Map<string, string>, prefix: string): Json {
  if (Array.isArray(node)) return node.map((item) => rewrite(item, fromFile, defFiles, prefix));
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema") continue;
    if (key === "$ref" && typeof value === "string") {
      const name = targetName(value, fromFile, defFiles);
      out[key] = name === undefined ? value : prefix + name;
    } else if (key === "discriminator" && isObject(value) && isObject(value.mapping)) {
      const mapping: JsonObject = {};
      for (const [tag, ref] of Object.entries(value.mapping)) {
        mapping[tag] = prefix + targetName(String(ref), fromFile, defFiles)!;
      }
      out[key] = { ...value, mapping };
    } else {
      out[key] = rewrite(value, fromFile, defFiles, prefix);
    }
  }
  return out;
}

/** Names of the definitions reachable from `roots`, in table order. */
export function reachable(defs: Record<string, JsonObject>, roots: string[]): string[] {
  const seen = new Set<string>();
  const visit = (node: Json): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/$defs/")) {
        const name = value.slice("#/$defs/".length);
        if (!seen.has(name)) {
          seen.add(name);
          visit(defs[name]!);
        }
      } else visit(value);
    }
  };
  roots.forEach((root) => visit({ $ref: `#/$defs/${root}` }));
  return Object.keys(defs).filter((name) => seen.has(name));
}

/** Rewrites every `#/$defs/Name` string (refs and mapping values) with `to(Name)`. */
function retarget(node: Json, to: (name: string) => string): Json {
  if (Array.isArray(node)) return node.map((item) => retarget(item, to));
  if (!isObject(node)) return typeof node === "string" && node.startsWith("#/$defs/") ? to(node.slice(8)) : node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, retarget(v, to)]));
}

/**
 * An unquoted comma inside a YAML flow mapping (`{ description: a, b }`) silently splits the text
 * into a second key with a null value. Every key of this spec is an identifier, so a null-valued key
 * with other characters (`lower-case) UUID.`, `postgres).`) is that mistake.
 */
function assertNoSplitScalars(node: unknown, file: string, at = ""): void {
  if (Array.isArray(node)) return node.forEach((item, i) => assertNoSplitScalars(item, file, `${at}/${i}`));
  if (typeof node !== "object" || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    if (value === null && /[^A-Za-z0-9_$-]/.test(key)) {
      throw new Error(`${file}: "${key}" at ${at || "/"} looks like text split at a comma: quote the string before it`);
    }
    assertNoSplitScalars(value, file, `${at}/${key}`);
  }
}

export async function bundleSpec(specDirectory: string): Promise<Bundles> {
  const specDir = path.resolve(specDirectory);
  const defFiles = new Map<string, string>();
  const parsed = new Map<string, JsonObject>();
  for (const file of SCHEMA_FILES) {
    const abs = path.join(specDir, "schemas", file);
    const doc = (await $RefParser.parse(abs)) as JsonObject;
    assertNoSplitScalars(doc, abs);
    if (!isObject(doc.$defs)) throw new Error(`${abs}: a schema file holds its definitions under $defs`);
    for (const name of Object.keys(doc.$defs)) {
      const clash = defFiles.get(name);
      if (clash) throw new Error(`definition ${name} is declared in both ${clash} and ${abs}`);
      defFiles.set(name, abs);
    }
    parsed.set(abs, doc);
  }

  const defs: Record<string, JsonObject> = {};
  for (const [abs, doc] of parsed) {
    for (const [name, schema] of Object.entries(doc.$defs as JsonObject)) {
      defs[name] = rewrite(schema, abs, defFiles, "#/$defs/") as JsonObject;
    }
  }

  // The API documents: resolve() checks that every external file they name exists and parses.
  const load = async (file: string): Promise<JsonObject> => {
    const abs = path.join(specDir, file);
    const refs = await new $RefParser().resolve(abs);
    assertNoSplitScalars(refs.get(abs), abs);
    return rewrite(refs.get(abs) as Json, abs, defFiles, "#/components/schemas/") as JsonObject;
  };

  const openapi = await load("openapi.yaml");
  const components = isObject(openapi.components) ? openapi.components : {};
  openapi.components = {
    schemas: retarget(defs, (name) => `#/components/schemas/${name}`) as JsonObject,
    ...components,
  };

  const asyncapi = await load("asyncapi.yaml");
  const asyncRoots = new Set<string>();
  JSON.stringify(asyncapi, (key, value) => {
    if (key === "$ref" && typeof value === "string" && value.startsWith("#/components/schemas/")) {
      asyncRoots.add(value.slice("#/components/schemas/".length));
    }
    return value;
  });
  const asyncComponents = isObject(asyncapi.components) ? asyncapi.components : {};
  asyncapi.components = {
    ...asyncComponents,
    schemas: Object.fromEntries(
      reachable(defs, [...asyncRoots]).map((name) => [
        name,
        {
          schemaFormat: "application/schema+json;version=2020-12",
          // AsyncAPI 3.0 reads plain schemas as its own draft-07 dialect, so each one is wrapped as a
          // multi-format schema declaring JSON Schema 2020-12; refs point inside the wrapper.
          schema: retarget(defs[name]!, (ref) => `#/components/schemas/${ref}/schema`) as JsonObject,
        },
      ]),
    ),
  };

  const eventDefs = reachable(defs, ["Event", "EventPage"]);
  const eventsSchema: JsonObject = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "Agent Conversation Service events",
    description:
      "Every event kind of the Agent Conversation Service. The root validates one Event; " +
      "#/$defs/EventPage validates a page of event search. Generated from spec/ by `pnpm generate`.",
    $ref: "#/$defs/Event",
    $defs: Object.fromEntries(eventDefs.map((name) => [name, defs[name]!])),
  };

  return { defs, openapi, asyncapi, eventsSchema };
}
