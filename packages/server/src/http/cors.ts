/** CORS for browser clients, off unless origins are configured. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestHandler } from "express";

/**
 * Sets the CORS headers of an answer to a request from an allowed origin; true when it did (the
 * fast path ahead of Express, http/fast-reads.ts, sets them with this too).
 */
export function corsHeaders(origins: readonly string[]): (req: IncomingMessage, res: ServerResponse) => boolean {
  const any = origins.includes("*");
  const allowed = new Set(origins);
  return (req, res) => {
    const origin = req.headers.origin;
    if (!origin || !(any || allowed.has(origin))) return false;
    res.setHeader("Access-Control-Allow-Origin", any ? "*" : origin);
    if (!any) {
      const vary = res.getHeader("Vary");
      res.setHeader("Vary", vary === undefined ? "Origin" : [...(Array.isArray(vary) ? vary : [String(vary)]), "Origin"]);
    }
    res.setHeader("Access-Control-Expose-Headers", "Content-Length, Content-Disposition");
    return true;
  };
}

export function cors(origins: readonly string[]): RequestHandler {
  const headers = corsHeaders(origins);
  return (req, res, next) => {
    if (headers(req, res) && req.method === "OPTIONS" && req.headers["access-control-request-method"]) {
      res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      // Whatever headers the page asks for (tracing, request ids) besides the two the API reads.
      res.setHeader("Access-Control-Allow-Headers", req.headers["access-control-request-headers"] ?? "Content-Type, X-Session-API-Key");
      res.setHeader("Access-Control-Max-Age", "600");
      return void res.status(204).end();
    }
    next();
  };
}
