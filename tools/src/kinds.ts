/**
 * Renders kinds.ts: the kind constants, the type guards and the release of each kind, read from the
 * discriminator mappings and release markings of the spec's unions so that adding a variant to
 * spec/ is the only edit needed.
 */
import type { JsonObject } from "./bundle.js";

interface UnionSpec {
  /** Definition name of the union in spec/. */
  union: string;
  constant: string;
  kindType: string;
  /** The guards' parameter type. */
  param: string;
}

const UNIONS: UnionSpec[] = [
  { union: "Event", constant: "EVENT_KINDS", kindType: "EventKind", param: "Event" },
  { union: "Action", constant: "ACTION_KINDS", kindType: "ActionKind", param: "Action | null | undefined" },
  { union: "Observation", constant: "OBSERVATION_KINDS", kindType: "ObservationKind", param: "Observation | null | undefined" },
  { union: "ToolDefinition", constant: "TOOL_KINDS", kindType: "ToolKind", param: "ToolDefinition | null | undefined" },
];

const ENUMS: Array<[definition: string, constant: string]> = [
  ["EventSource", "EVENT_SOURCES"],
  ["SecurityRisk", "SECURITY_RISKS"],
  ["ConversationStatus", "CONVERSATION_STATUSES"],
  ["ProviderType", "PROVIDER_TYPES"],
];

const article = (word: string) => (/^[AEIOU]/.test(word) ? "an" : "a");

/** A variant whose `kind` is any string with a fixed prefix (`ClientAction_<tool name>`). */
interface PatternVariant {
  /** Definition name of the variant. */
  name: string;
  prefix: string;
}

/**
 * The prefix of a kind pattern `^<prefix>.+$`, or undefined for any other pattern. Shared with the
 * type generation, which types such a string as the template literal `` `<prefix>${string}` ``.
 */
export function patternPrefix(pattern: unknown): string | undefined {
  return typeof pattern === "string" ? /^\^([A-Za-z0-9_]+)\.\+\$$/.exec(pattern)?.[1] : undefined;
}

const refName = (member: unknown): string => {
  const ref = (member as { $ref?: unknown }).$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/$defs/")) throw new Error(`spec: a union member must be a $ref to a definition, got ${JSON.stringify(member)}`);
  return ref.slice("#/$defs/".length);
};

/**
 * The variants of a union: the tags of its discriminator mapping, or, for a union of unions
 * (`Action` = `SdkAction` | `ClientAction`), the tags of each discriminated member plus the
 * variants whose kind is a pattern.
 */
function variantsOf(defs: Record<string, JsonObject>, union: string): { kinds: string[]; patterns: PatternVariant[] } {
  const schema = defs[union];
  const discriminator = schema?.discriminator as { mapping?: Record<string, string> } | undefined;
  if (discriminator?.mapping) {
    for (const [tag, ref] of Object.entries(discriminator.mapping)) {
      if (ref !== `#/$defs/${tag}`) throw new Error(`spec: ${union} maps ${tag} to ${ref}; a variant is named by its kind`);
    }
    return { kinds: Object.keys(discriminator.mapping), patterns: [] };
  }
  const members = (schema?.oneOf ?? schema?.anyOf) as unknown[] | undefined;
  if (!Array.isArray(members)) throw new Error(`spec: ${union} has no discriminator mapping`);
  const kinds: string[] = [];
  const patterns: PatternVariant[] = [];
  for (const member of members) {
    const name = refName(member);
    const kind = (defs[name]?.properties as JsonObject | undefined)?.kind as JsonObject | undefined;
    const prefix = patternPrefix(kind?.pattern);
    if (prefix !== undefined) patterns.push({ name, prefix });
    else kinds.push(...variantsOf(defs, name).kinds);
  }
  // A pattern variant must not swallow a named kind, or `kind` would not tell the variants apart.
  for (const { name, prefix } of patterns) {
    const clash = kinds.find((kind) => kind.startsWith(prefix));
    if (clash) throw new Error(`spec: ${union}: the kind ${clash} matches the pattern of ${name}`);
  }
  return { kinds, patterns };
}

/** The tags of a union (see {@link variantsOf}); pattern variants are not listed. */
const mappingOf = (defs: Record<string, JsonObject>, union: string): string[] => variantsOf(defs, union).kinds;

/** `ClientAction` → `CLIENT_ACTION`. */
const constantCase = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();

/** The release markings of a definition, as the `KIND_RELEASES` entry shows them. */
function releaseOf(schema: JsonObject | undefined): string | undefined {
  const fields = [
    ["since", schema?.["x-acs-since"]],
    ["removed", schema?.["x-acs-removed"]],
    ["loaded", schema?.["x-acs-loaded"]],
  ].filter((entry): entry is [string, string] => typeof entry[1] === "string");
  return fields.length === 0 ? undefined : `{ ${fields.map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(", ")} }`;
}

/** The default of `ServerInfo.version`: the agent-server release the spec follows (MAJOR.MINOR.PATCH). */
function openhandsRelease(defs: Record<string, JsonObject>): string {
  const version = ((defs.ServerInfo?.properties as JsonObject | undefined)?.version as JsonObject | undefined)?.default;
  if (typeof version !== "string" || !/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`spec: ServerInfo.version needs a release (MAJOR.MINOR.PATCH) as its default, got ${JSON.stringify(version)}`);
  return version;
}

export function renderKinds(defs: Record<string, JsonObject>, banner: string): string {
  const lines: string[] = [`/**\n * ${banner}\n */`, ""];
  const imports = new Set<string>(["EventSource"]);
  const body: string[] = [];
  const releases: string[] = [];

  for (const { union, constant, kindType, param } of UNIONS) {
    const { kinds, patterns } = variantsOf(defs, union);
    imports.add(union);
    const patternTypes = patterns.map(({ prefix }) => ` | \`${prefix}\${string}\``).join("");
    const patternTests = patterns.map(({ prefix }) => ` || (kind.length > ${prefix.length} && kind.startsWith(${JSON.stringify(prefix)}))`).join("");
    body.push(
      `/** Every \`kind\` of ${union} named in the spec, in its order${patterns.length ? ` (${patterns.map((p) => `${p.name} kinds, \`${p.prefix}<name>\`, are not listed`).join("; ")})` : ""}. */`,
      `export const ${constant} = [${kinds.map((k) => JSON.stringify(k)).join(", ")}] as const;`,
      `/** The \`kind\` of ${article(union)} ${union}. */`,
      `export type ${kindType} = (typeof ${constant})[number]${patternTypes};`,
      `const ${constant}_SET: ReadonlySet<string> = new Set(${constant});`,
      `/** True when \`kind\` names ${article(union)} ${union} variant. */`,
      `export function is${kindType}(kind: unknown): kind is ${kindType} {`,
      `  return typeof kind === "string" && (${constant}_SET.has(kind)${patternTests});`,
      `}`,
      "",
    );
    for (const { name, prefix } of patterns) {
      imports.add(name);
      releases.push(`  ${JSON.stringify(`${prefix}<name>`)}: ${releaseOf(defs[name]) ?? "{}"},`);
      body.push(
        `/** The prefix of every ${name} kind: \`${prefix}\` and a name. */`,
        `export const ${constantCase(name)}_KIND_PREFIX = ${JSON.stringify(prefix)};`,
        `/** Narrows ${article(union)} ${union} to ${name} (a kind \`${prefix}<name>\`). */`,
        `export function is${name}(value: ${param}): value is ${name} {`,
        `  const kind: unknown = value?.kind;`,
        `  return typeof kind === "string" && kind.length > ${prefix.length} && kind.startsWith(${JSON.stringify(prefix)});`,
        `}`,
      );
    }
    for (const kind of kinds) {
      imports.add(kind);
      const release = releaseOf(defs[kind]);
      if (release) releases.push(`  ${kind}: ${release},`);
      body.push(
        `/** Narrows ${article(union)} ${union} to ${kind}. */`,
        `export function is${kind}(value: ${param}): value is ${kind} {`,
        `  return value?.kind === ${JSON.stringify(kind)};`,
        `}`,
      );
    }
    body.push("");
  }

  for (const [definition, constant] of ENUMS) {
    const values = defs[definition]?.enum as string[] | undefined;
    if (!values) throw new Error(`spec: ${definition} has no enum`);
    imports.add(definition);
    body.push(
      `/** Every value of ${definition}. */`,
      `export const ${constant} = [${values.map((v) => JSON.stringify(v)).join(", ")}] as const;`,
      "",
    );
  }

  // Event kinds the agent server never stores (`x-acs-stored: false`): WebSocket frames only.
  const liveOnly = mappingOf(defs, "Event").filter((kind) => defs[kind]?.["x-acs-stored"] === false);
  body.push(
    "/** Event kinds the agent server never stores: it sends them over the WebSocket only, so search and replay never return them. */",
    `export const LIVE_ONLY_EVENT_KINDS = [${liveOnly.map((k) => JSON.stringify(k)).join(", ")}] as const satisfies readonly EventKind[];`,
    "",
  );

  // The default `source` of each event kind (null where the kind requires one).
  const defaults = mappingOf(defs, "Event").map((kind) => {
    const source = (defs[kind]?.properties as JsonObject | undefined)?.source as JsonObject | undefined;
    return `  ${kind}: ${source && "default" in source ? JSON.stringify(source.default) : "null"},`;
  });
  body.push(
    "/** The `source` each event kind takes when none is given; null where the kind requires one. */",
    "export const DEFAULT_EVENT_SOURCE: { readonly [K in EventKind]: EventSource | null } = {",
    ...defaults,
    "};",
    "",
    "/** Where a kind comes from: the OpenHands releases of `x-acs-since`, `x-acs-removed` and `x-acs-loaded` in spec/. */",
    "export interface KindRelease {",
    "  /** The first release that writes the kind. */",
    "  readonly since?: string;",
    "  /** The first release that no longer writes it. */",
    "  readonly removed?: string;",
    "  /** The first release whose agent server loads it, where that differs from `since`; \"never\" for a kind only SDK-driven recordings carry. */",
    "  readonly loaded?: string;",
    "}",
    "",
    "/**",
    " * The release markings of every event, action, observation and tool kind outside the interface 0.1.0",
    " * catalogue (a kind not listed here is part of it). Pattern kinds are listed by their form (`ClientAction_<name>`).",
    " */",
    "export const KIND_RELEASES: { readonly [kind: string]: KindRelease } = {",
    ...releases,
    "};",
    "",
    "/**",
    " * The OpenHands release whose API and events the toolkit follows: the spec's default of",
    " * `ServerInfo.version`. The reference server reports it at `/server_info`, its agent runtime",
    " * records events as that release writes them, and it is the validator profile they pass.",
    " */",
    `export const OPENHANDS_RELEASE = ${JSON.stringify(openhandsRelease(defs))};`,
  );

  lines.push(`import type {\n${[...imports].sort().map((name) => `  ${name},`).join("\n")}\n} from "./types.js";`, "", ...body);
  return lines.join("\n") + "\n";
}
