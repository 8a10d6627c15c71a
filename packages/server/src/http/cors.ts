/** CORS for browser clients, off unless origins are configured. */
import type { RequestHandler } from "express";

export function cors(origins: readonly string[]): RequestHandler {
  const any = origins.includes("*");
  const allowed = new Set(origins);
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin && (any || allowed.has(origin))) {
      res.setHeader("Access-Control-Allow-Origin", any ? "*" : origin);
      if (!any) res.append("Vary", "Origin");
      res.setHeader("Access-Control-Expose-Headers", "Content-Length, Content-Disposition");
      if (req.method === "OPTIONS" && req.headers["access-control-request-method"]) {
        res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        // Whatever headers the page asks for (tracing, request ids) besides the two the API reads.
        res.setHeader("Access-Control-Allow-Headers", req.headers["access-control-request-headers"] ?? "Content-Type, X-Session-API-Key");
        res.setHeader("Access-Control-Max-Age", "600");
        return void res.status(204).end();
      }
    }
    next();
  };
}
