/** X-Session-API-Key on every /api route (event search too, unless --public-read). */
import type { RequestHandler } from "express";
import { HttpError } from "./errors.js";

export function requireSessionKey(check: (presented: string | undefined) => boolean): RequestHandler {
  return (req, _res, next) => {
    if (check(req.get("x-session-api-key"))) return next();
    next(new HttpError(401, "Unauthorized"));
  };
}
