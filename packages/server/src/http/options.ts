/**
 * OPTIONS requests that are not CORS preflights (cors.ts answers those): 204 with the path's
 * methods in `Allow`, or the JSON 404 when no operation has the path. (Express's own answer is a
 * text/plain list of methods: the interface's answers are JSON or empty.)
 */
import type { RequestHandler } from "express";
import type { PathTemplate } from "../api/routes.js";

export function answerOptions(templates: readonly PathTemplate[], unknownRoute: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (req.method !== "OPTIONS") return next();
    const methods = templates.filter((t) => t.pattern.test(req.path)).map((t) => t.method);
    if (methods.length === 0) return unknownRoute(req, res, next);
    res.setHeader("Allow", [...new Set([...methods, "OPTIONS"])].join(", "));
    res.status(204).end();
  };
}
