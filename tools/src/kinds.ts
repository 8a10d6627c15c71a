/**
 * Renders kinds.ts: the kind constants and the type guards, read from the discriminator mappings of
 * the spec's unions so that adding a variant to spec/ is the only edit needed.
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

export function mappingOf(defs: Record<string, JsonObject>, union: string): string[] {
  const discriminator = defs[union]?.discriminator as { mapping?: Record<string, string> } | undefined;
  const mapping = discriminator?.mapping;
  if (!mapping) throw new Error(`spec: ${union} has no discriminator mapping`);
  for (const [tag, ref] of Object.entries(mapping)) {
    if (ref !== `#/$defs/${tag}`) throw new Error(`spec: ${union} maps ${tag} to ${ref}; a variant is named by its kind`);
  }
  return Object.keys(mapping);
}

export function renderKinds(defs: Record<string, JsonObject>, banner: string): string {
  const lines: string[] = [`/**\n * ${banner}\n */`, ""];
  const imports = new Set<string>(["EventSource"]);
  const body: string[] = [];

  for (const { union, constant, kindType, param } of UNIONS) {
    const kinds = mappingOf(defs, union);
    imports.add(union);
    body.push(
      `/** Every \`kind\` of ${union}, in the order of the spec. */`,
      `export const ${constant} = [${kinds.map((k) => JSON.stringify(k)).join(", ")}] as const;`,
      `/** The \`kind\` of ${article(union)} ${union}. */`,
      `export type ${kindType} = (typeof ${constant})[number];`,
      `const ${constant}_SET: ReadonlySet<string> = new Set(${constant});`,
      `/** True when \`kind\` names ${article(union)} ${union} variant. */`,
      `export function is${kindType}(kind: unknown): kind is ${kindType} {`,
      `  return typeof kind === "string" && ${constant}_SET.has(kind);`,
      `}`,
      "",
    );
    for (const kind of kinds) {
      imports.add(kind);
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
  );

  lines.push(`import type {\n${[...imports].sort().map((name) => `  ${name},`).join("\n")}\n} from "./types.js";`, "", ...body);
  return lines.join("\n") + "\n";
}
