import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleSpec, reachable, SCHEMA_FILES, type Bundles } from "../src/bundle.js";
import { loadGenerated, refsOf, resolvePointer, specDir, walk, type Json } from "./helpers.js";

const openapi = loadGenerated("openapi.json");
const asyncapi = loadGenerated("asyncapi.json");
const eventsSchema = loadGenerated("events.schema.json");
const bundles = { "openapi.json": openapi, "asyncapi.json": asyncapi, "events.schema.json": eventsSchema };

describe("references in the bundles", () => {
  it("every $ref of openapi.json points at an existing #/components/... target", () => {
    const refs = refsOf(openapi);
    expect(refs.length).toBeGreaterThan(100);
    for (const { ref, at } of refs) {
      expect(ref, at).toMatch(/^#\/components\//);
      expect(resolvePointer(openapi, ref), `${at}: ${ref}`).toBeDefined();
    }
  });

  it.each(Object.entries(bundles))("%s: every $ref is local and resolves (none points at a file)", (_, doc) => {
    for (const { ref, at } of refsOf(doc)) {
      expect(ref, at).toMatch(/^#\//);
      expect(ref, at).not.toMatch(/\.ya?ml|\.json/);
      expect(resolvePointer(doc, ref), `${at}: ${ref}`).toBeDefined();
    }
  });

  it.each(Object.entries(bundles))("%s: every discriminator mapping target exists and agrees with oneOf", (_, doc) => {
    const unions: string[] = [];
    walk(doc, (node, at) => {
      const discriminator = node.discriminator;
      if (!discriminator) return;
      unions.push(at.split("/").filter((t) => t !== "schema").at(-1)!);
      for (const [tag, ref] of Object.entries<string>(discriminator.mapping)) {
        const target = resolvePointer(doc, ref);
        expect(target, `${at}: ${tag} -> ${ref}`).toBeDefined();
        const property = target.properties[discriminator.propertyName];
        expect(property.const ?? property.enum, `${at}: ${tag}`).toEqual(property.const === undefined ? [tag] : tag);
      }
      expect(node.oneOf.map((branch: Json) => branch.$ref), at).toEqual(Object.values(discriminator.mapping));
    });
    // Action is SdkAction (discriminated) or ClientAction (a kind pattern). ConfirmationPolicy is a
    // request body's (POST …/confirmation_policy), not an event's: only in the OpenAPI document, as
    // BashEvent (the bash-events socket's frames, whose messages name each kind).
    expect(unions.sort()).toEqual(doc === openapi ? ["AnyThinkingBlock", "BashEvent", "ConfirmationPolicy", "Content", "Event", "Observation", "SdkAction", "ToolDefinition"] : ["AnyThinkingBlock", "Content", "Event", "Observation", "SdkAction", "ToolDefinition"]);
  });

  it("the AsyncAPI schemas point inside their multi-format wrappers", () => {
    for (const { ref, at } of refsOf(asyncapi.components.schemas)) {
      expect(ref, at).toMatch(/^#\/components\/schemas\/[^/]+\/schema$/);
    }
  });
});

describe("the events schema", () => {
  it("holds exactly the definitions reachable from Event and EventPage", () => {
    // Computed over the full component table, so a missing definition and an extra one both show.
    const table: Record<string, Json> = openapi.components.schemas;
    const seen = new Set<string>();
    const visit = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      for (const { ref } of refsOf(table[name])) visit(ref.replace("#/components/schemas/", ""));
    };
    visit("Event");
    visit("EventPage");
    expect(Object.keys(eventsSchema.$defs).sort()).toEqual([...seen].sort());
    expect(seen.has("Settings")).toBe(false);
  });

  it("its definitions are the OpenAPI components with refs retargeted", () => {
    for (const [name, schema] of Object.entries<Json>(eventsSchema.$defs)) {
      const retargeted = JSON.stringify(openapi.components.schemas[name]).replaceAll("#/components/schemas/", "#/$defs/");
      expect(JSON.stringify(schema), name).toBe(retargeted);
    }
  });

  it("reachable() agrees with the bundled $defs", async () => {
    const { defs } = await bundleSpec(specDir);
    expect(reachable(defs, ["Event", "EventPage"])).toEqual(Object.keys(eventsSchema.$defs));
  });
});

describe("bundleSpec()", () => {
  let first: Bundles;
  beforeAll(async () => {
    first = await bundleSpec(specDir);
  });

  it("is deterministic: bundling twice gives identical output", async () => {
    const second = await bundleSpec(specDir);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });

  it("gives the documents that are checked in", () => {
    expect(first.openapi).toEqual(openapi);
    expect(first.asyncapi).toEqual(asyncapi);
    expect(first.eventsSchema).toEqual(eventsSchema);
  });

  it("keeps the definitions in the order of SCHEMA_FILES", async () => {
    const names: string[] = [];
    for (const file of SCHEMA_FILES) {
      const text = await readFile(path.join(specDir, "schemas", file), "utf8");
      names.push(...[...text.matchAll(/^ {2}([A-Za-z][A-Za-z0-9]*):\s*$/gm)].map((m) => m[1]!));
    }
    expect(Object.keys(first.defs)).toEqual(names);
  });

  it("accepts a relative spec dir", async () => {
    await bundleSpec(path.relative(process.cwd(), specDir));
  });
});

describe("bundleSpec() rejects a broken spec", () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), "acs-spec-"));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  /** A copy of spec/ in which `file` is passed through `edit`. */
  async function brokenSpec(file: string, edit: (text: string) => string): Promise<string> {
    const dir = await mkdtemp(path.join(scratch, "spec-"));
    await cp(specDir, dir, { recursive: true });
    const target = path.join(dir, file);
    const before = await readFile(target, "utf8");
    const after = edit(before);
    expect(after, "the edit changed nothing").not.toBe(before);
    await writeFile(target, after);
    return dir;
  }

  const replaceOnce = (from: string, to: string) => (text: string) => text.replace(from, to);

  it("accepts an unedited copy", async () => {
    const dir = await mkdtemp(path.join(scratch, "spec-"));
    await cp(specDir, dir, { recursive: true });
    await expect(bundleSpec(dir)).resolves.toHaveProperty("eventsSchema");
  });

  it("a definition name declared in two files", async () => {
    const dir = await brokenSpec("schemas/errors.yaml", (text) =>
      text.replace(/^\$defs:\n/m, "$defs:\n  TextContent:\n    type: object\n"),
    );
    await expect(bundleSpec(dir)).rejects.toThrow(/definition TextContent is declared in both .*content\.yaml and .*errors\.yaml/);
  });

  it.each([
    ["a schema file", "schemas/events.yaml", replaceOnce('"common.yaml#/$defs/EventId"', '"common.yaml#/$defs/EventIdentifier"')],
    ["a local ref in a schema file", "schemas/events.yaml", replaceOnce('$ref: "#/$defs/PauseEvent"', '$ref: "#/$defs/PausedEvent"')],
    ["a discriminator mapping", "schemas/actions.yaml", replaceOnce('FinishAction: "#/$defs/FinishAction"', 'FinishAction: "#/$defs/Finish"')],
    ["openapi.yaml", "openapi.yaml", replaceOnce("settings.yaml#/$defs/Settings", "settings.yaml#/$defs/UserSettings")],
    ["asyncapi.yaml", "asyncapi.yaml", replaceOnce("conversations.yaml#/$defs/UserMessage", "conversations.yaml#/$defs/UserMesage")],
  ])("a $ref in %s that names a missing definition", async (_, file, edit) => {
    const dir = await brokenSpec(file, edit);
    await expect(bundleSpec(dir)).rejects.toThrow(/names no definition/);
  });

  it("a $ref that names a definition in the wrong file", async () => {
    const dir = await brokenSpec("openapi.yaml", replaceOnce(`settings.yaml#/$defs/Settings"`, `errors.yaml#/$defs/Settings"`));
    await expect(bundleSpec(dir)).rejects.toThrow(/but Settings lives in .*settings\.yaml/);
  });

  it("a description split at an unquoted comma in a flow mapping", async () => {
    const dir = await brokenSpec(
      "schemas/errors.yaml",
      replaceOnce(`description: "The store in use (sqlite, postgres)." }`, `description: The store in use (sqlite, postgres). }`),
    );
    await expect(bundleSpec(dir)).rejects.toThrow(/"postgres\)\." at .* looks like text split at a comma/);
  });

  it("a $ref into a schema file that is not a definition", async () => {
    const dir = await brokenSpec("openapi.yaml", replaceOnce(`settings.yaml#/$defs/Settings"`, `settings.yaml#/$defs"`));
    await expect(bundleSpec(dir)).rejects.toThrow(/must point at a definition/);
  });
});

describe("release markings (x-acs-since, x-acs-core-since, x-acs-removed, x-acs-loaded, x-acs-enum-since, x-acs-stored)", () => {
  const RELEASE = /^1\.(\d+)\.(\d+)$/;
  const number = (release: string) => {
    const [, minor, patch] = RELEASE.exec(release)!;
    return Number(minor) * 1000 + Number(patch);
  };
  const marked: Array<{ at: string; node: Json }> = [];
  walk(openapi.components.schemas, (node, at) => {
    if (["x-acs-since", "x-acs-core-since", "x-acs-removed", "x-acs-loaded", "x-acs-enum-since", "x-acs-stored"].some((key) => key in node)) marked.push({ at, node });
  });

  it("are releases from 1.9.0 on, a removal after its addition, a load no earlier than the addition", () => {
    expect(marked.length).toBeGreaterThan(60);
    for (const { at, node } of marked) {
      for (const key of ["x-acs-since", "x-acs-removed"]) {
        if (key in node) expect(node[key], `${at} ${key}`).toMatch(RELEASE);
      }
      if ("x-acs-since" in node) expect(number(node["x-acs-since"]), at).toBeGreaterThanOrEqual(number("1.9.0"));
      if ("x-acs-removed" in node && "x-acs-since" in node) expect(number(node["x-acs-removed"]), at).toBeGreaterThan(number(node["x-acs-since"]));
      if ("x-acs-loaded" in node) {
        expect("x-acs-since" in node, `${at}: x-acs-loaded without x-acs-since`).toBe(true);
        if (node["x-acs-loaded"] !== "never") expect(number(node["x-acs-loaded"]), at).toBeGreaterThan(number(node["x-acs-since"]));
      }
      if ("x-acs-enum-since" in node) for (const value of Object.keys(node["x-acs-enum-since"])) expect(node.enum, at).toContain(value);
      if ("x-acs-stored" in node) expect(node["x-acs-stored"], at).toBe(false);
      // A part of the core (the catalogue of 1.11.5) that came after the first release the markings cover.
      if ("x-acs-core-since" in node) {
        expect(node["x-acs-core-since"], at).toMatch(RELEASE);
        expect(number(node["x-acs-core-since"]), at).toBeGreaterThan(number("1.9.0"));
        expect(number(node["x-acs-core-since"]), at).toBeLessThanOrEqual(number("1.11.5"));
        expect("x-acs-since" in node, `${at}: x-acs-core-since and x-acs-since`).toBe(false);
      }
    }
  });

  it("the interface 0.1.0 catalogue is what carries no x-acs-since: 14 event kinds", () => {
    const events = Object.keys(eventsSchema.$defs.Event.discriminator.mapping);
    expect(events.filter((kind) => !("x-acs-since" in eventsSchema.$defs[kind]))).toHaveLength(14);
    expect(events).toHaveLength(19);
  });
});
