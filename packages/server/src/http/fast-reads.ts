/**
 * The two hot reads, searchEvents and countEvents, answered ahead of Express (Express's
 * router, its request and response objects and the general middleware cost as much as the page
 * query). Only a request the Express route would answer 200 is answered here, with the same bytes
 * and headers; everything else goes on to Express untouched (a path with a percent-escape, a
 * trailing slash or other case, HEAD, a missing or wrong key), and an error raised here (a 422 of
 * the spec-derived validators, a 404, a store's 503) goes to Express's error handler as the route's
 * own would, behind the same middleware (request log, CORS).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../log.js";
import { sendParts, type EventReads } from "../routes/events.js";
import { parseQueryString } from "./query.js";

/** The error a fast read raised, for Express's error handler (see `failedFastRead`). */
const FAST_READ_ERROR = Symbol("acs.fastReadError");

type FastRequest = IncomingMessage & { [FAST_READ_ERROR]?: unknown };

/** The searchEvents and countEvents paths, as sent (no escape, no trailing slash, no `#`). */
const READ_PATH = /^\/api\/conversations\/([^/?#%]+)\/events\/(search|count)(?:\?|$)/;
/** Characters for which Express's URL parsing (parseurl) leaves its fast parse: those URLs go to Express. */
const UNUSUAL = /[\t\n\f\r #\u00a0\ufeff]/;

interface FastReadsDeps {
  reads: EventReads;
  /** Whether a request may read events (its X-Session-API-Key, or --public-read). */
  mayRead: (req: IncomingMessage) => boolean;
  /** Sets the CORS headers of an allowed origin (http/cors.ts). */
  cors: (req: IncomingMessage, res: ServerResponse) => boolean;
  log: Logger;
}

/**
 * A handler ahead of Express: answers the request and returns true, or returns false at once
 * (untouched: Express answers), or answers later through `express` with the error it met.
 */
export function fastReads({ reads, mayRead, cors, log }: FastReadsDeps): (req: IncomingMessage, res: ServerResponse, express: () => void) => boolean {
  return (req, res, express) => {
    if (req.method !== "GET") return false;
    const url = req.url ?? "";
    const match = READ_PATH.exec(url);
    if (!match || UNUSUAL.test(url) || !mayRead(req)) return false;
    // Below info, no clock is read.
    const start = log.isLevelEnabled("info") ? process.hrtime.bigint() : undefined;
    const at = url.indexOf("?");
    const params = { conversation_id: match[1]! };
    const answer = (async () => {
      const query = parseQueryString(at === -1 ? null : url.slice(at + 1));
      const parts = match[2] === "search" ? await reads.search(params, query) : [Buffer.from(JSON.stringify(await reads.count(params, query)))];
      cors(req, res);
      sendParts(res, parts);
    })();
    answer.then(
      () => {
        if (start !== undefined) log.info({ method: "GET", path: at === -1 ? url : url.slice(0, at), status: 200, ms: Number(process.hrtime.bigint() - start) / 1e6 }, "request");
      },
      (error: unknown) => {
        (req as FastRequest)[FAST_READ_ERROR] = error;
        express();
      },
    );
    return true;
  };
}

/** Express middleware: passes on the error a fast read met (to the error handler), else nothing. */
export function failedFastRead(req: IncomingMessage, _res: unknown, next: (error?: unknown) => void): void {
  const error = (req as FastRequest)[FAST_READ_ERROR];
  if (error === undefined) return next();
  delete (req as FastRequest)[FAST_READ_ERROR];
  next(error);
}
