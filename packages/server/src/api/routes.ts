/**
 * The spec's operations by method and path: which operation a request names, its path parameters,
 * and whether it needs the session key. Read from the OpenAPI document, so that an operation added
 * to the spec is routed without another table.
 */
import type { OperationId } from "./types.js";

export interface PathTemplate {
  method: string;
  /** The spec's path, e.g. `/api/conversations/{conversation_id}`. */
  path: string;
  operationId: OperationId;
  /** Matches the raw (still encoded) path; a trailing slash is allowed. */
  pattern: RegExp;
  /** Parameter name by segment index (undefined for literal segments). */
  parameters: Array<string | undefined>;
  /** The operation needs X-Session-API-Key; `optional` when the spec also allows none (`--public-read`). */
  key: "required" | "optional" | "none";
}

interface OperationObject {
  operationId?: string;
  security?: Array<Record<string, unknown>>;
}

/**
 * Which of two templates a path both match is meant: at the first segment where one is literal and
 * the other a parameter, the literal one (`/api/conversations/search` before
 * `/api/conversations/{conversation_id}`), as FastAPI's routes are declared. Negative: `a` first.
 */
function moreSpecific(a: PathTemplate, b: PathTemplate): number {
  for (let i = 0; i < Math.min(a.parameters.length, b.parameters.length); i++) {
    const aLiteral = a.parameters[i] === undefined;
    if (aLiteral !== (b.parameters[i] === undefined)) return aLiteral ? -1 : 1;
  }
  return 0;
}

/** The path templates of the document's operations, literal segments before parameters (see moreSpecific). */
export function pathTemplates(document: { paths?: Record<string, Record<string, unknown>>; security?: unknown }): PathTemplate[] {
  const templates: PathTemplate[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const segments = path.split("/");
    const pattern = new RegExp(`^${segments.map((s) => (/^\{.+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))).join("/")}/?$`);
    const parameters = segments.map((s) => /^\{(.+)\}$/.exec(s)?.[1]);
    for (const [method, value] of Object.entries(item)) {
      const operation = value as OperationObject;
      const security = operation.security ?? (document.security as OperationObject["security"]) ?? [];
      const named = security.some((alternative) => Object.keys(alternative).length > 0);
      const key = !named ? "none" : security.some((alternative) => Object.keys(alternative).length === 0) ? "optional" : "required";
      templates.push({ method: method.toUpperCase(), path, operationId: operation.operationId as OperationId, pattern, parameters, key });
    }
  }
  return templates.sort(moreSpecific);
}

const decodes = (segment: string) => {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
};

export type PathEncodingProblem = { parameter: string } | { unknownRoute: true };

/** What is wrong with the percent-encoding of `rawPath` (without its query), or undefined when it decodes. */
export function pathEncodingProblem(templates: readonly PathTemplate[], method: string, rawPath: string): PathEncodingProblem | undefined {
  if (!rawPath.includes("%")) return undefined;
  const segments = rawPath.split("/");
  const bad = segments.findIndex((segment) => !decodes(segment));
  if (bad === -1) return undefined;
  const template = templates.find((t) => t.method === method.toUpperCase() && t.pattern.test(rawPath));
  const parameter = template?.parameters[bad];
  return parameter === undefined ? { unknownRoute: true } : { parameter };
}

/** A request's operation and its path parameters (decoded). */
export interface RouteMatch {
  template: PathTemplate;
  params: Record<string, string>;
}

/**
 * The operation `method` `rawPath` names (HEAD as GET), or undefined. Call after
 * {@link pathEncodingProblem}: a parameter that does not decode throws URIError.
 */
export function matchRoute(templates: readonly PathTemplate[], method: string, rawPath: string): RouteMatch | undefined {
  const wanted = method === "HEAD" ? "GET" : method;
  // The most specific match, whatever the order of `templates`.
  let template: PathTemplate | undefined;
  for (const t of templates) if (t.method === wanted && t.pattern.test(rawPath) && (!template || moreSpecific(t, template) < 0)) template = t;
  if (!template) return undefined;
  const params: Record<string, string> = {};
  rawPath.split("/").forEach((segment, index) => {
    const name = template.parameters[index];
    if (name !== undefined) params[name] = decodeURIComponent(segment);
  });
  return { template, params };
}
