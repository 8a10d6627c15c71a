/**
 * Turns the bundled events schema into what the AJV standalone compiler takes (build step; see
 * compile-validators.ts for the keywords it adds):
 *
 * - AJV reads `discriminator` but rejects OpenAPI's `mapping` (our mappings only restate each
 *   variant's `kind` const, so nothing is lost); the tags are kept as `x-tags` for messages.
 * - A union of a discriminated union and a variant whose kind is a pattern (`Action` = `SdkAction`
 *   | `ClientAction`, kind `ClientAction_<tool name>`) becomes, for the `full` validator, `if kind
 *   matches then … else …`, so that only the branch the kind selects reports errors; for the `fast`
 *   one, `anyOf` with the discriminated union first, so that an SDK action costs no pattern test. The
 *   two agree: no named kind matches the pattern (checked when kinds.ts is generated).
 * - Release markings (`x-acs-since`, `x-acs-core-since`, `x-acs-removed` on a union variant or a
 *   property, `x-acs-enum-since` on an enum) become the release keywords, which reject, under a
 *   profile, what that profile does not have. Markings of other definitions only document them:
 *   such a definition is reached through a marked property or variant.
 * - Every `deprecated: true` property also gets the legacy keyword.
 * - Annotations that validation never reads are dropped: the standalone code embeds the schema, and
 *   they would make up most of its size. Kept: `title`, `x-format-name`, `x-tags`, which readable
 *   messages quote.
 */
import { releaseNumber } from "../src/profile.js";
import { LEGACY_KEYWORD, RELEASE_KEYWORD, TAG_RELEASES_KEYWORD, VALUE_RELEASE_KEYWORD, type ReleaseMark, type TagReleases, type ValueReleases } from "../src/release-keywords.js";

type Schema = Record<string, unknown>;

const DROPPED_ANNOTATIONS = new Set(["description", "default", "writeOnly", "readOnly"]);
/** Release markings that only document (where the agent server loads a kind, whether it is stored). */
const DOCUMENTATION = new Set(["x-acs-loaded", "x-acs-stored", "x-acs-since", "x-acs-core-since", "x-acs-removed", "x-acs-enum-since"]);

const isSchema = (value: unknown): value is Schema => typeof value === "object" && value !== null && !Array.isArray(value);

const refName = (member: unknown): string | undefined => {
  const ref = isSchema(member) ? member.$ref : undefined;
  return typeof ref === "string" && ref.startsWith("#/$defs/") ? ref.slice("#/$defs/".length) : undefined;
};

const kindPattern = (def: Schema | undefined): string | undefined => {
  const kind = isSchema(def?.properties) ? (def.properties as Schema).kind : undefined;
  return isSchema(kind) && typeof kind.pattern === "string" ? kind.pattern : undefined;
};

/**
 * The marks of a schema (`since`, `removed`), as numbers and as text; undefined when unmarked.
 * `x-acs-core-since` is a `since` of a part of the interface catalogue (`core`).
 */
function marksOf(schema: Schema): Pick<ReleaseMark, "since" | "removed" | "sinceText" | "removedText" | "core"> | undefined {
  const later = typeof schema["x-acs-since"] === "string" ? schema["x-acs-since"] : undefined;
  const core = typeof schema["x-acs-core-since"] === "string" ? schema["x-acs-core-since"] : undefined;
  if (later !== undefined && core !== undefined) throw new Error(`${String(schema.title ?? "a schema")}: x-acs-since and x-acs-core-since contradict each other`);
  const since = later ?? core;
  const removed = typeof schema["x-acs-removed"] === "string" ? schema["x-acs-removed"] : undefined;
  if (since === undefined && removed === undefined) return undefined;
  return {
    ...(since !== undefined && { since: releaseNumber(since), sinceText: since }),
    ...(removed !== undefined && { removed: releaseNumber(removed), removedText: removed }),
    ...(core !== undefined && { core: true as const }),
  };
}

interface Unions {
  /** Variant definition → the name of the union messages call it by (`TaskAction` → `Action`). */
  unionOf: Map<string, string>;
  /** A union with a pattern variant → its pattern variant and the discriminated rest. */
  composites: Map<string, { pattern: string; patternVariant: string; rest: string }>;
}

function findUnions(defs: Record<string, Schema>): Unions {
  const unionOf = new Map<string, string>();
  const composites = new Map<string, { pattern: string; patternVariant: string; rest: string }>();
  for (const [name, def] of Object.entries(defs)) {
    const mapping = isSchema(def.discriminator) ? def.discriminator.mapping : undefined;
    if (isSchema(mapping)) for (const tag of Object.keys(mapping)) unionOf.set(tag, name);
  }
  for (const [name, def] of Object.entries(defs)) {
    const members = (def.oneOf ?? def.anyOf) as unknown[] | undefined;
    if (!Array.isArray(members) || def.discriminator !== undefined) continue;
    const names = members.map(refName);
    const patterned = names.filter((member) => member !== undefined && kindPattern(defs[member]) !== undefined) as string[];
    const rest = names.filter((member) => member !== undefined && !patterned.includes(member) && defs[member]?.discriminator !== undefined) as string[];
    if (patterned.length !== 1 || rest.length !== 1 || names.length !== 2) continue;
    composites.set(name, { pattern: kindPattern(defs[patterned[0]!])!, patternVariant: patterned[0]!, rest: rest[0]! });
    unionOf.set(patterned[0]!, name);
    for (const [variant, union] of unionOf) if (union === rest[0]) unionOf.set(variant, name);
  }
  return { unionOf, composites };
}

const releaseRange = (marks: { since?: number; removed?: number; core?: true }): TagReleases[string] =>
  marks.core ? [marks.since ?? 0, marks.removed ?? Number.MAX_SAFE_INTEGER, true] : [marks.since ?? 0, marks.removed ?? Number.MAX_SAFE_INTEGER];

/** The `x-tags-release` table of a prepared union: tag → [since, removed) as release numbers, and `core`. */
function tagReleases(union: Schema): TagReleases {
  return (union[TAG_RELEASES_KEYWORD] ??= {}) as TagReleases;
}

/**
 * Prepares the bundled events schema (root `$ref` and `$defs`) for the compiler; returns a copy.
 * `variant`: the validator it is for (`fast` stops at the first error, `full` reports every one).
 */
export function prepareSchema(eventsSchema: unknown, variant: "fast" | "full" = "full"): Schema {
  const root = eventsSchema as Schema;
  const defs = root.$defs as Record<string, Schema>;
  const { unionOf, composites } = findUnions(defs);
  const out: Schema = {};
  for (const [key, value] of Object.entries(root)) if (key !== "$defs") out[key] = prepare(value, undefined);
  const preparedDefs: Record<string, Schema> = {};
  for (const [name, def] of Object.entries(defs)) {
    const prepared = prepare(def, typeof def.title === "string" ? def.title : name) as Schema;
    const marks = marksOf(def);
    if (marks && unionOf.has(name)) prepared[RELEASE_KEYWORD] = { ...marks, subject: "kind", name, union: unionOf.get(name)! } satisfies ReleaseMark;
    preparedDefs[name] = prepared;
  }
  for (const [name, { pattern, patternVariant, rest }] of composites) {
    const union = preparedDefs[name]!;
    const branches =
      variant === "fast"
        ? { anyOf: [{ $ref: `#/$defs/${rest}` }, { $ref: `#/$defs/${patternVariant}` }] }
        : {
            if: { type: "object", required: ["kind"], properties: { kind: { type: "string", pattern } } },
            then: { $ref: `#/$defs/${patternVariant}` },
            else: { $ref: `#/$defs/${rest}` },
          };
    preparedDefs[name] = { title: union.title, type: "object", required: ["kind"], ...branches };
    // The discriminated branch speaks for the whole union in messages, and names the pattern too.
    const discriminated = preparedDefs[rest]!;
    discriminated.title = union.title;
    const patternName = ((defs[patternVariant]!.properties as Schema).kind as Schema)["x-format-name"];
    if (typeof patternName === "string") discriminated["x-tags"] = [...(discriminated["x-tags"] as string[]), patternName];
    const marks = marksOf(defs[patternVariant]!);
    if (marks && typeof patternName === "string") tagReleases(discriminated)[patternName] = releaseRange(marks);
  }
  // A union's tags with their releases: the kinds a message expects depend on the profile.
  for (const [name, def] of Object.entries(defs)) {
    const mapping = isSchema(def.discriminator) ? def.discriminator.mapping : undefined;
    if (!isSchema(mapping)) continue;
    for (const tag of Object.keys(mapping)) {
      const marks = marksOf(defs[tag] ?? {});
      if (marks) tagReleases(preparedDefs[name]!)[tag] = releaseRange(marks);
    }
  }
  out.$defs = preparedDefs;
  return out;
}

/** `owner`: the title of the nearest schema that has one (the object a property belongs to). */
function prepare(node: unknown, owner: string | undefined): unknown {
  if (Array.isArray(node)) return node.map((item) => prepare(item, owner));
  if (!isSchema(node)) return node;
  const title = typeof node.title === "string" ? node.title : owner;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    // The compiler does not track evaluated properties (see createAjv): these keywords would be wrong.
    if (key === "unevaluatedProperties" || key === "unevaluatedItems") throw new Error(`${owner ?? "a schema"}: ${key} is not supported by the compiled validators`);
    if (DROPPED_ANNOTATIONS.has(key) && typeof value !== "object") continue;
    if (key === "examples" || key === "$comment" || DOCUMENTATION.has(key)) continue;
    if (key === "discriminator") {
      const { propertyName, mapping } = value as { propertyName: string; mapping?: Record<string, string> };
      out[key] = { propertyName };
      // Kept for messages ("expected one of text, image"), under a name AJV accepts.
      if (mapping) out["x-tags"] = Object.keys(mapping);
    } else if (key === "properties" && isSchema(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([property, schema]) => {
          const prepared = prepare(schema, title) as Schema;
          const marks = isSchema(schema) ? marksOf(schema) : undefined;
          if (marks) prepared[RELEASE_KEYWORD] = { ...marks, subject: "property", name: property, ...(title !== undefined && { owner: title }) } satisfies ReleaseMark;
          return [property, prepared];
        }),
      );
    } else out[key] = prepare(value, title);
  }
  if (isSchema(node["x-acs-enum-since"])) {
    const values: ValueReleases = {};
    for (const [value, since] of Object.entries(node["x-acs-enum-since"])) values[value] = { since: releaseNumber(String(since)), sinceText: String(since) };
    out[VALUE_RELEASE_KEYWORD] = values;
  }
  if (out.deprecated === true) out[LEGACY_KEYWORD] = true;
  return out;
}
