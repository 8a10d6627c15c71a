/**
 * Express's error handler, for what fails before an operation is called (a path escape that does
 * not decode, Express's own parameter decoding): answered as an operation's failures are
 * (api/errors.ts), in the interface's shape.
 */
import type { ErrorRequestHandler, RequestHandler } from "express";
import { errorReply } from "../api/errors.js";
import { NOT_FOUND_REPLY } from "../api/index.js";
import type { Logger } from "../log.js";
import type { WriteHealth } from "../write-health.js";
import { failureReport } from "./node-host.js";
import { writeReply } from "./write-reply.js";

export function errorHandler(log: Logger, writeHealth: WriteHealth): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    writeReply(res, errorReply(error, failureReport(log, writeHealth, { method: req.method, url: req.originalUrl })));
  };
}

/** 404 for routes the server does not have, in the interface's error shape. */
export const unknownRoute: RequestHandler = (_req, res) => writeReply(res, NOT_FOUND_REPLY());
