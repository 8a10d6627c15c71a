/**
 * Every failure of an operation as a reply in the interface's shape: input problems are 4xx with a
 * precise `loc` (never a 500); only a bug of the server itself is a 500. What a host logs or
 * remembers of a failure (a full disk, a store that does not answer) goes to its {@link FailureReport}.
 */
import { HttpError, RequestValidationError } from "../core/errors.js";
import { ConversationNotFoundError, StoreUnavailableError } from "../store/types.js";
import { jsonReply } from "./reply.js";
import type { ApiReply } from "./types.js";

/** The codes that mean "no space left": the file system's, and SQLite's. */
const STORAGE_FULL = new Set(["ENOSPC", "EDQUOT", "SQLITE_FULL"]);

/** The cause of a write that failed because storage is full (`ENOSPC: …`), or undefined for any other error. */
export function storageFullCause(error: unknown): string | undefined {
  const code = typeof error === "object" && error !== null && "code" in error ? String((error as { code: unknown }).code) : undefined;
  if (code === undefined || !STORAGE_FULL.has(code)) return undefined;
  const message = error instanceof Error ? error.message.replace(/^[A-Z_]+: /, "") : "";
  return message ? `${code}: ${message}` : code;
}

/** The `detail` of a 507: what happened, that nothing was stored, and that writes resume by themselves. */
export function storageFullDetail(cause: string): string {
  return `Insufficient Storage: the server's disk is full (${cause}); nothing of this request was stored. Writes resume once space is freed.`;
}

/** What a host does with failures besides answering them (logging; remembering a full disk). */
export interface FailureReport {
  storageFull?(cause: string): void;
  storeUnavailable?(detail: string): void;
  unexpected?(error: unknown): void;
}

/** The reply to an operation's error. */
export function errorReply(error: unknown, report: FailureReport = {}): ApiReply {
  const full = storageFullCause(error);
  if (full !== undefined) {
    report.storageFull?.(full);
    return jsonReply({ detail: storageFullDetail(full) }, 507);
  }
  if (error instanceof RequestValidationError) return jsonReply({ detail: error.detail }, 422);
  if (error instanceof HttpError) return jsonReply({ detail: error.detail }, error.status, error.headers);
  if (error instanceof ConversationNotFoundError) return jsonReply({ detail: error.message }, 404);
  if (error instanceof StoreUnavailableError) {
    // The database is down or slow: the client may retry; nothing of a failed write was kept.
    report.storeUnavailable?.(error.detail);
    return jsonReply({ detail: error.detail }, 503, { "Retry-After": "1" });
  }
  // A route parameter's decoding (the path check before routing catches these).
  if (error instanceof URIError) return jsonReply({ detail: [{ loc: ["path"], msg: "is not valid percent-encoded UTF-8", type: "value_error" }] }, 422);
  report.unexpected?.(error);
  return jsonReply({ detail: "Internal Server Error" }, 500);
}
