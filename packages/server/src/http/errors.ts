/**
 * The error handler: every failure leaves in the interface's shape. Input problems are 4xx with a
 * precise `loc` (never a 500); only a bug of the server itself is a 500, logged with its stack.
 */
import type { ErrorRequestHandler, RequestHandler, Response } from "express";
import type { Logger } from "../log.js";
import { storageFullCause, storageFullDetail, type WriteHealth } from "../write-health.js";
import { ConversationNotFoundError, StoreUnavailableError } from "../store/types.js";
import { HttpError, RequestValidationError } from "../core/errors.js";

export { HttpError } from "../core/errors.js";

function sendValidationError(res: Response, detail: RequestValidationError["detail"]): void {
  res.status(422).json({ detail });
}

export function errorHandler(log: Logger, writeHealth: WriteHealth): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    const full = storageFullCause(error);
    if (full !== undefined) {
      writeHealth.failed(full);
      log.warn({ cause: full, method: req.method, path: req.path }, "write failed: the disk is full");
      return void res.status(507).json({ detail: storageFullDetail(full) });
    }
    if (error instanceof RequestValidationError) return sendValidationError(res, error.detail);
    if (error instanceof HttpError) return void res.status(error.status).set(error.headers).json({ detail: error.detail });
    if (error instanceof ConversationNotFoundError) return void res.status(404).json({ detail: error.message });
    if (error instanceof StoreUnavailableError) {
      // The database is down or slow: the client may retry; nothing of a failed write was kept.
      log.warn({ detail: error.detail, method: req.method, path: req.path }, "store unavailable");
      return void res.status(503).set("Retry-After", "1").json({ detail: error.detail });
    }
    // Express's own decoding of a route parameter (the path check before the routes catches these).
    if (error instanceof URIError) return sendValidationError(res, [{ loc: ["path"], msg: "is not valid percent-encoded UTF-8", type: "value_error" }]);
    log.error({ err: error, method: req.method, url: req.originalUrl?.split("?")[0] }, "unhandled error");
    res.status(500).json({ detail: "Internal Server Error" });
  };
}

/** 404 for routes the server does not have, in the interface's error shape. */
export const unknownRoute: RequestHandler = (req, res) => {
  res.status(404).json({ detail: "Not Found" });
};
