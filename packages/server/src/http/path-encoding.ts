/**
 * Percent-escapes in the path that do not decode (`%`, `%zz`, `%FF`, a cut `%E0%A4%A`). Express
 * decodes route parameters with decodeURIComponent and fails with an error that names no
 * parameter (a 500 before this check); here such a path is matched against the spec's templates
 * first, so that the answer is a 422 naming the parameter the escape sits in, or a 404 when no
 * operation has that path.
 */
import type { RequestHandler } from "express";
import { pathEncodingProblem, type PathTemplate } from "../api/routes.js";
import { RequestValidationError } from "../validation/request-validators.js";

/** 422 `["path", <parameter>]` for a malformed escape in a parameter; 404 when no operation has the path. */
export function rejectMalformedPathEscapes(templates: readonly PathTemplate[], unknownRoute: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const problem = pathEncodingProblem(templates, req.method, req.path);
    if (!problem) return next();
    if ("unknownRoute" in problem) return unknownRoute(req, res, next);
    next(new RequestValidationError([{ loc: ["path", problem.parameter], msg: "is not valid percent-encoded UTF-8", type: "value_error" }]));
  };
}
