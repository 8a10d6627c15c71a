/**
 * The two hot reads, searchEvents and countEvents, answered ahead of Express (Express's router,
 * its request and response objects and the general middleware cost as much as the page query):
 * the same operation (api/events.ts), called with one path match. A 200 is written here, with the
 * headers Express's middleware would add (CORS); any other reply (a 401, 422, 404, a store's 503)
 * is handed to Express and written behind the same middleware (request log, CORS) as a route's.
 * A path Express would read differently (a percent-escape, a trailing slash, other case, HEAD)
 * goes to Express untouched.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Api } from "../api/index.js";
import type { PathTemplate } from "../api/routes.js";
import type { ApiReply } from "../api/types.js";
import { noBody } from "../api/index.js";
import type { Logger } from "../log.js";
import type { WriteHealth } from "../write-health.js";
import { failureReport } from "./node-host.js";
import { parseQueryString } from "./query.js";
import { writeReply } from "./write-reply.js";

/** The reply a fast read gave that Express writes (see `writeFastReply`). */
const FAST_REPLY = Symbol("acs.fastReply");

type FastRequest = IncomingMessage & { [FAST_REPLY]?: ApiReply };

/** The searchEvents and countEvents paths, as sent (no escape, no trailing slash, no `#`). */
const READ_PATH = /^\/api\/conversations\/([^/?#%]+)\/events\/(search|count)(?:\?|$)/;
/** Characters for which Express's URL parsing (parseurl) leaves its fast parse: those URLs go to Express. */
const UNUSUAL = /[\t\n\f\r #\u00a0\ufeff]/;

interface FastReadsDeps {
  api: Api;
  /** Sets the CORS headers of an allowed origin (http/cors.ts). */
  cors: (req: IncomingMessage, res: ServerResponse) => boolean;
  log: Logger;
  writeHealth?: WriteHealth;
}

/**
 * A handler ahead of Express: answers the request and returns true, or returns false at once
 * (untouched: Express answers), or hands Express the reply to write through `express`.
 */
export function fastReads({ api, cors, log, writeHealth }: FastReadsDeps): (req: IncomingMessage, res: ServerResponse, express: () => void) => boolean {
  const find = (operationId: string) => api.templates.find((t) => t.operationId === operationId)!;
  const templates: Record<string, PathTemplate> = { search: find("searchEvents"), count: find("countEvents") };
  return (req, res, express) => {
    if (req.method !== "GET") return false;
    const url = req.url ?? "";
    const match = READ_PATH.exec(url);
    if (!match || UNUSUAL.test(url)) return false;
    // Below info, no clock is read.
    const start = log.isLevelEnabled("info") ? process.hrtime.bigint() : undefined;
    const at = url.indexOf("?");
    // The reads take no header but the key (a string: Node joins a repeated header): no copy of them.
    const request = { params: { conversation_id: match[1]! }, query: parseQueryString(at === -1 ? null : url.slice(at + 1)), headers: req.headers as Record<string, string | undefined>, body: noBody };
    void api.call(templates[match[2]!]!, request, failureReport(log, writeHealth, req)).then((reply) => {
      if (reply.status !== 200) {
        (req as FastRequest)[FAST_REPLY] = reply;
        return express();
      }
      cors(req, res);
      writeReply(res, reply);
      if (start !== undefined) log.info({ method: "GET", path: at === -1 ? url : url.slice(0, at), status: 200, ms: Number(process.hrtime.bigint() - start) / 1e6 }, "request");
    });
    return true;
  };
}

/** Express middleware: writes the reply a fast read handed over, else nothing. */
export function writeFastReply(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  const reply = (req as FastRequest)[FAST_REPLY];
  if (reply === undefined) return next();
  delete (req as FastRequest)[FAST_REPLY];
  writeReply(res, reply);
}
