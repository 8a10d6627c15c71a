/**
 * Percent-escapes in the path that do not decode (`%`, `%zz`, `%FF`, a cut `%E0%A4%A`). Express
 * decodes route parameters with decodeURIComponent and fails with an error that names no
 * parameter (a 500 before this check); here such a path is matched against the spec's templates
 * first, so that the answer is a 422 naming the parameter the escape sits in, or a 404 when no
 * operation has that path.
 */
import type { RequestHandler } from "express";
import { RequestValidationError } from "../validation/request-validators.js";

export interface PathTemplate {
  method: string;
  /** Matches the raw (still encoded) path. */
  pattern: RegExp;
  /** Parameter name by segment index (undefined for literal segments). */
  parameters: Array<string | undefined>;
}

/** The path templates of the document's operations. */
export function pathTemplates(document: { paths?: Record<string, Record<string, unknown>> }): PathTemplate[] {
  const templates: PathTemplate[] = [];
  for (const [template, item] of Object.entries(document.paths ?? {})) {
    const segments = template.split("/");
    const pattern = new RegExp(`^${segments.map((s) => (/^\{.+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))).join("/")}/?$`);
    const parameters = segments.map((s) => /^\{(.+)\}$/.exec(s)?.[1]);
    for (const method of Object.keys(item)) templates.push({ method: method.toUpperCase(), pattern, parameters });
  }
  return templates;
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

/** 422 `["path", <parameter>]` for a malformed escape in a parameter; 404 when no operation has the path. */
export function rejectMalformedPathEscapes(templates: readonly PathTemplate[], unknownRoute: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const problem = pathEncodingProblem(templates, req.method, req.path);
    if (!problem) return next();
    if ("unknownRoute" in problem) return unknownRoute(req, res, next);
    next(new RequestValidationError([{ loc: ["path", problem.parameter], msg: "is not valid percent-encoded UTF-8", type: "value_error" }]));
  };
}
