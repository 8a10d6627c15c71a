/**
 * Renders settings.ts: the table of the Settings fields (JSON type, default, secret, kept when null)
 * read from `#/$defs/Settings` so that a scalar field added to spec/ is stored, returned and typed by
 * the server with no other edit. Fails when the spec is inconsistent in a way the server would
 * otherwise get silently wrong (a secret without its `*_set` flag in SettingsView, a property of a
 * type the table cannot describe).
 */
import type { JsonObject } from "./bundle.js";

const SCALAR_TYPES = ["string", "number", "integer", "boolean"] as const;
type ScalarType = (typeof SCALAR_TYPES)[number];

/** One scalar field of Settings as the generated table describes it. */
interface SettingsFieldEntry {
  type: ScalarType;
  default: string | number | boolean | null;
  secret: boolean;
  keepWhenNull: boolean;
}

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** `[T, "null"]` or `T` → T when T is a scalar type; undefined for anything else (objects, refs, unions). */
function scalarType(schema: JsonObject): ScalarType | undefined {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const named = types.filter((type) => type !== "null");
  return named.length === 1 && (SCALAR_TYPES as readonly unknown[]).includes(named[0]) ? (named[0] as ScalarType) : undefined;
}

/** A property whose value is a reference to a definition, possibly nullable (`anyOf: [$ref, null]`). */
function isReference(schema: JsonObject): boolean {
  if (typeof schema.$ref === "string") return true;
  const members = schema.anyOf ?? schema.oneOf;
  return (
    Array.isArray(members) &&
    members.every((member) => isObject(member) && (typeof member.$ref === "string" || member.type === "null")) &&
    members.some((member) => isObject(member) && typeof member.$ref === "string")
  );
}

/**
 * The table: every property of Settings in the spec's order, scalar ones described, those that hold
 * a definition (`secrets_store`, `mcp_config`) listed as structured (the server handles each by hand
 * and its type check fails when one is added).
 */
export function settingsTable(defs: Record<string, JsonObject>): { properties: string[]; scalars: Map<string, SettingsFieldEntry>; structured: string[] } {
  const settings = defs.Settings;
  const view = defs.SettingsView;
  if (!isObject(settings?.properties)) throw new Error("spec: #/$defs/Settings has no properties");
  if (!isObject(view?.properties)) throw new Error("spec: #/$defs/SettingsView has no properties");
  const viewProperties = view.properties;
  const viewRequired = Array.isArray(view.required) ? view.required : [];

  const properties: string[] = [];
  const scalars = new Map<string, SettingsFieldEntry>();
  const structured: string[] = [];
  for (const [name, schema] of Object.entries(settings.properties)) {
    if (!isObject(schema)) throw new Error(`spec: Settings.${name} is not a schema`);
    properties.push(name);
    const type = scalarType(schema);
    if (type === undefined) {
      if (!isReference(schema)) throw new Error(`spec: Settings.${name} is neither a scalar (string, number, integer, boolean) nor a reference to a definition`);
      structured.push(name);
      continue;
    }
    const secret = schema["x-secret"] === true || schema.writeOnly === true;
    if (secret !== (schema["x-secret"] === true && schema.writeOnly === true)) {
      throw new Error(`spec: Settings.${name} is a secret: mark it with both x-secret and writeOnly`);
    }
    if (secret && type !== "string") throw new Error(`spec: the secret Settings.${name} must be a string: secrets are stored sealed as text`);
    if (secret) {
      // GET /api/settings blanks a secret and reports it by its flag: both must be in SettingsView.
      const blank = viewProperties[name];
      const flag = viewProperties[`${name}_set`];
      if (!isObject(blank) || blank.type !== "null" || !isObject(flag) || flag.type !== "boolean" || !viewRequired.includes(`${name}_set`)) {
        throw new Error(`spec: the secret Settings.${name} needs \`${name}: { type: "null" }\` and a required \`${name}_set: { type: boolean }\` in SettingsView`);
      }
    }
    const fallback = schema.default ?? null;
    if (fallback !== null && typeof fallback !== (type === "integer" ? "number" : type)) {
      throw new Error(`spec: the default of Settings.${name} is not a ${type}`);
    }
    if (secret && fallback !== null) throw new Error(`spec: the secret Settings.${name} cannot have a default`);
    const keep = schema["x-keep-when-null"];
    if (keep !== undefined && typeof keep !== "boolean") throw new Error(`spec: x-keep-when-null of Settings.${name} must be a boolean`);
    if (keep === true && fallback !== null) throw new Error(`spec: Settings.${name} has both a default and x-keep-when-null: null can mean only one`);
    scalars.set(name, { type, default: fallback as SettingsFieldEntry["default"], secret, keepWhenNull: keep === true });
  }
  return { properties, scalars, structured };
}

/** The default of MCPSHTTPServer.timeout, the only scalar default inside the structured fields that the server fills in. */
function shttpTimeoutDefault(defs: Record<string, JsonObject>): number {
  const timeout = (defs.MCPSHTTPServer?.properties as JsonObject | undefined)?.timeout;
  const fallback = isObject(timeout) ? timeout.default : undefined;
  if (typeof fallback !== "number") throw new Error("spec: MCPSHTTPServer.timeout has no numeric default");
  return fallback;
}

export function renderSettings(defs: Record<string, JsonObject>, banner: string): string {
  const { properties, scalars, structured } = settingsTable(defs);
  const rows = [...scalars].map(
    ([name, field]) =>
      `  ${name}: { type: ${JSON.stringify(field.type)}, default: ${JSON.stringify(field.default)}, secret: ${field.secret}, keepWhenNull: ${field.keepWhenNull} },`,
  );
  return [
    `/**\n * ${banner}\n */`,
    "",
    "/** One scalar field of Settings: what the server needs to store it, default it and return it. */",
    "export interface SettingsField {",
    "  /** Its JSON type in the spec (every Settings field is also nullable). */",
    '  readonly type: "string" | "number" | "integer" | "boolean";',
    "  /** Its `default` in the spec; null when it has none. Absent or null in a request stores this. */",
    "  readonly default: string | number | boolean | null;",
    "  /** Marked `x-secret` and `writeOnly`: stored sealed, returned as null with a `<name>_set` flag. */",
    "  readonly secret: boolean;",
    "  /** Marked `x-keep-when-null`: absent or null in a request keeps the stored value. */",
    "  readonly keepWhenNull: boolean;",
    "}",
    "",
    "/** Every property of Settings, in the spec's order. */",
    "export const SETTINGS_PROPERTIES = [",
    ...properties.map((name) => `  ${JSON.stringify(name)},`),
    "] as const;",
    "",
    "/** The Settings properties that hold a definition of their own, handled field by field by the server. */",
    `export const SETTINGS_STRUCTURED_FIELDS = [${structured.map((name) => JSON.stringify(name)).join(", ")}] as const;`,
    "",
    "/** Every scalar Settings property with its type, default and policies, in the spec's order. */",
    "export const SETTINGS_FIELDS = {",
    ...rows,
    "} as const satisfies { readonly [name: string]: SettingsField };",
    "",
    "/** The default `timeout` (seconds) of an MCP streamable-HTTP server. */",
    `export const MCP_SHTTP_DEFAULT_TIMEOUT = ${shttpTimeoutDefault(defs)};`,
  ].join("\n") + "\n";
}
