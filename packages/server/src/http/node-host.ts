/**
 * The API on Node: every operation of the spec as an Express route at its path (Express's own
 * matching and parameter decoding), the request handed to the operation as a plain ApiRequest and
 * its reply written back. Express is kept for what it earns here: the routing rules clients rely on
 * (case, trailing slash), the middleware in front (request log, CORS, OPTIONS), and body reading
 * through body-parser.
 */
import { Router, type Request, type Response } from "express";
import type { Api } from "../api/index.js";
import type { FailureReport } from "../api/errors.js";
import type { ApiRequest } from "../api/types.js";
import type { Logger } from "../log.js";
import type { WriteHealth } from "../write-health.js";
import { NodeRequestBody } from "./node-body.js";
import { writeReply } from "./write-reply.js";

/** Request headers by lower-case name, repeated ones joined as Node joins them. */
function headersOf(req: { headers: Record<string, string | string[] | undefined> }): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  return headers;
}

/** What the server does with an operation's failures: logs them (never a body), remembers a full disk. */
export function failureReport(log: Logger, writeHealth: WriteHealth | undefined, req: { method?: string; url?: string }): FailureReport {
  const path = req.url?.split("?")[0];
  return {
    storageFull(cause) {
      writeHealth?.failed(cause);
      log.warn({ cause, method: req.method, path }, "write failed: the disk is full");
    },
    storeUnavailable: (detail) => log.warn({ detail, method: req.method, path }, "store unavailable"),
    unexpected: (error) => log.error({ err: error, method: req.method, url: path }, "unhandled error"),
  };
}

interface NodeHostOptions {
  jsonLimitBytes: number;
  log: Logger;
  writeHealth?: WriteHealth;
}

/** An Express router answering every operation of `api`. */
export function apiRouter(api: Api, { jsonLimitBytes, log, writeHealth }: NodeHostOptions): Router {
  const router = Router();
  for (const template of api.templates) {
    const expressPath = template.path.replace(/\{([^}]+)\}/g, ":$1");
    const method = template.method.toLowerCase() as "get" | "post";
    router[method](expressPath, async (req: Request, res: Response) => {
      const request: ApiRequest = {
        params: req.params as Record<string, string>,
        query: req.query as Record<string, unknown>,
        headers: headersOf(req),
        body: new NodeRequestBody(req, res, jsonLimitBytes),
      };
      const reply = await api.call(template, request, failureReport(log, writeHealth, req));
      writeReply(res, reply, (error) => log.warn({ err: error.message, path: req.path }, "download failed while reading"));
    });
  }
  return router;
}
