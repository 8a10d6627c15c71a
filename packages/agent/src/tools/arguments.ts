/**
 * Tool arguments from the spec. The function schema the LLM sees is the spec's Action schema (its
 * fields, types, enums and bounds, `kind` removed, references inlined) with the LLM-facing
 * descriptions of OpenHands laid over it; an Action is built from the LLM's arguments with the
 * spec's defaults and checked by the spec's own validator. No Action shape is typed here.
 */
import { SECURITY_RISKS, type Action, type ActionKind, type ToolAnnotations, type ToolDefinition } from "@acs-toolkit/schema";
import { eventsJsonSchema } from "@acs-toolkit/schema/documents";
import { formatIssue, validateEvent } from "@acs-toolkit/validator";
import { ToolArgumentError } from "./tool.js";

type Schema = Record<string, unknown>;

const defs = (eventsJsonSchema as { $defs: Record<string, Schema> }).$defs;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A copy of `schema` with `$ref`s to `$defs` inlined and `title` / `examples` removed. */
function inline(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(inline);
  if (!isObject(schema)) return schema;
  if (typeof schema.$ref === "string" && schema.$ref.startsWith("#/$defs/")) {
    const { $ref, ...rest } = schema;
    return { ...(inline(defs[$ref.slice("#/$defs/".length)]) as Schema), ...(inline(rest) as Schema) };
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "title" || key === "examples") continue;
    out[key] = key === "properties" ? Object.fromEntries(Object.entries(value as Schema).map(([name, sub]) => [name, inline(sub)])) : inline(value);
  }
  return out;
}

const actionSchemas = new Map<ActionKind, Schema>();

/** The spec's schema of an Action kind, `kind` removed and references inlined (computed once per kind; do not change it). */
function actionSchema(kind: ActionKind): Schema {
  let cached = actionSchemas.get(kind);
  if (!cached) actionSchemas.set(kind, (cached = inlineAction(kind)));
  return cached;
}

function inlineAction(kind: ActionKind): Schema {
  const schema = inline(defs[kind]) as Schema;
  const properties = { ...(schema.properties as Schema) };
  delete properties.kind;
  const required = ((schema.required as string[] | undefined) ?? []).filter((name) => name !== "kind");
  const { description: _description, ...rest } = schema;
  return { ...rest, properties, required };
}

/** Property descriptions the LLM reads, by JSON pointer-ish path (`command`, `task_list.items.title`). */
type ParameterDescriptions = Record<string, string>;

/** The LLM's function schema for an Action kind: the spec's schema with `descriptions` laid over. */
export function llmParameters(kind: ActionKind, descriptions: ParameterDescriptions): Schema {
  const schema = structuredClone(actionSchema(kind));
  for (const [path, description] of Object.entries(descriptions)) {
    let node: Schema | undefined = schema;
    for (const part of path.split(".")) node = (part === "items" ? node?.items : (node?.properties as Schema | undefined)?.[part]) as Schema | undefined;
    if (!node) throw new Error(`no property ${path} in ${kind}`);
    node.description = description;
  }
  return schema;
}

/**
 * The `security_risk` property as the SDK renders it (openhands-sdk/openhands/sdk/tool/tool.py
 * `create_action_type_with_risk`): the built-in tools' schema comes from a pydantic field whose
 * reference to the SecurityRisk enum takes the enum's own description; an MCP tool's is written out
 * (mcp/tool.py `_get_tool_schema`). Optional: UNKNOWN when left out.
 */
const SECURITY_RISK = {
  builtIn: {
    type: "string",
    description: "Security risk levels for actions.\n\nBased on OpenHands security risk levels but adapted for agent-sdk.\nInteger values allow for easy comparison and ordering.",
    enum: [...SECURITY_RISKS],
  },
  mcp: { type: "string", description: "The LLM's assessment of the safety risk of this action.", enum: [...SECURITY_RISKS] },
};

const SUMMARY = {
  type: "string",
  description:
    "A concise summary (approximately 10 words) describing what this specific action does. Focus on the key operation and target. Example: 'List all Python files in current directory'",
};

/**
 * The parameters OpenHands adds to every tool's schema (openhands-sdk/openhands/sdk/tool/tool.py
 * `_get_tool_schema`): `security_risk` on every tool that is not read-only, whatever the security
 * analyzer (the agent always asks, openhands-sdk/openhands/sdk/agent/utils.py), and `summary`; both
 * first, so that an answer cut short by the output limit still has them.
 */
export function withCommonParameters(parameters: Schema, options: { securityRisk: "builtIn" | "mcp" | false }): Schema {
  const properties: Schema = {
    ...(options.securityRisk ? { security_risk: SECURITY_RISK[options.securityRisk] } : {}),
    summary: SUMMARY,
    ...(parameters.properties as Schema),
  };
  return { ...parameters, properties, required: [...((parameters.required as string[]) ?? [])] };
}

/**
 * Pydantic's lax mode, which OpenHands' actions parse with: numbers and booleans given as strings,
 * and arrays or objects given as JSON text (`fix_malformed_tool_arguments`), become what the schema
 * asks for. Anything else is left for the validator to report.
 */
function coerce(value: unknown, schema: Schema | undefined): unknown {
  if (!schema) return value;
  const types = ([] as unknown[]).concat(schema.type ?? []);
  if (typeof value === "string") {
    if ((types.includes("integer") || types.includes("number")) && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) {
      const number = Number(value);
      if (!types.includes("integer") || Number.isInteger(number)) return number;
    }
    if (types.includes("boolean") && /^(true|false)$/i.test(value)) return value.toLowerCase() === "true";
    if ((types.includes("array") || types.includes("object")) && /^\s*[[{]/.test(value)) {
      try {
        return coerce(JSON.parse(value), schema);
      } catch {
        return value;
      }
    }
    return value;
  }
  if (Array.isArray(value) && isObject(schema.items)) return value.map((item) => coerce(item, schema.items as Schema));
  if (isObject(value) && isObject(schema.properties)) {
    const properties = schema.properties as Record<string, Schema>;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = coerce(item, properties[key]);
    // Defaults of the spec, as pydantic fills them; nulls are dropped, as the reference dumps actions.
    for (const [key, property] of Object.entries(properties)) if (!(key in out) && "default" in property) out[key] = structuredClone(property.default);
    for (const [key, item] of Object.entries(out)) if (item === null) delete out[key];
    return out;
  }
  return value;
}

/** A well-formed ActionEvent around `action`, to check the action with the spec's validator. */
function probeEvent(action: unknown): unknown {
  return {
    id: "00000000-0000-4000-8000-000000000000",
    timestamp: "2026-01-01T00:00:00",
    source: "agent",
    thought: [],
    action,
    tool_name: "probe",
    tool_call_id: "probe",
    tool_call: { id: "probe", name: "probe", arguments: "{}", origin: "completion" },
    llm_response_id: "probe",
    kind: "ActionEvent",
  };
}

/**
 * The Action of `kind` for the LLM's arguments: coerced, defaults filled, nulls dropped, and valid
 * against the spec.
 * @throws ToolArgumentError naming each problem by field
 */
export function buildAction(kind: ActionKind, args: Record<string, unknown>): Action {
  const schema = actionSchema(kind);
  const action = { ...(coerce(args, schema) as Record<string, unknown>), kind } as Action;
  const result = validateEvent(probeEvent(action));
  if (!result.ok) {
    const problems = result.errors.map((issue) => formatIssue({ ...issue, pointer: issue.pointer.replace(/^\/action/, "") || "/" }));
    throw new ToolArgumentError(problems.join("; "));
  }
  return action;
}

/**
 * A built-in tool's definition as SystemPromptEvent records it: its Action and Observation kinds
 * read from the spec's ToolDefinition variant, the rest given.
 */
export function toolDefinition<K extends Exclude<ToolDefinition["kind"], "MCPToolDefinition">>(
  kind: K,
  fields: { title: string; description: string; annotations: ToolAnnotations },
): Extract<ToolDefinition, { kind: K }> {
  const properties = defs[kind]!.properties as Record<string, { const?: string; enum?: unknown[] }>;
  const observationType = properties.observation_type!.enum!.find((value) => typeof value === "string");
  return {
    description: fields.description,
    action_type: properties.action_type!.const,
    observation_type: observationType,
    annotations: fields.annotations,
    kind,
    title: fields.title,
  } as Extract<ToolDefinition, { kind: K }>;
}
