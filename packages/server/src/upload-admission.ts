/**
 * Which file parts of one upload are stored, in the order sent: the limits and the name rules
 * (upload-names.ts), apart from where the bytes go, so that the server's disk receiver (uploads.ts)
 * and a host that keeps files in memory (api/memory-files.ts) skip the same files for the same
 * reasons.
 */
import { foldedName, sanitizeFileName, type SkippedFile, type SkipReason } from "./upload-names.js";

export interface UploadLimits {
  /** Largest accepted file, in bytes; a larger one is skipped as `file_too_large`. */
  maxFileBytes: number;
  /** Most file parts of the upload field read per request; the rest are `too_many_files`. */
  maxFiles: number;
  /** Largest request body, in bytes; what comes after is `request_too_large`. */
  maxRequestBytes: number;
}

const MiB = 1024 * 1024;

/** 25 MiB per file, 100 files, 250 MiB per request. */
export const DEFAULT_UPLOAD_LIMITS: Readonly<UploadLimits> = Object.freeze({
  maxFileBytes: 25 * MiB,
  maxFiles: 100,
  maxRequestBytes: 250 * MiB,
});

export const DUPLICATE_DETAIL = "A file with this name (ignoring case) is already stored; it was not overwritten.";

/** Longest name echoed back in a `SkippedFile`, in UTF-16 code units. */
const MAX_REPORTED_NAME = 1024;
/** File parts past `maxFiles` that still get their own `too_many_files` entry (bounds the answer). */
const MAX_EXTRA_REPORTED = 1000;

/** `limits`, checked. @throws TypeError for a limit that is not a positive integer */
export function checkLimits(limits: UploadLimits): UploadLimits {
  for (const key of ["maxFileBytes", "maxFiles", "maxRequestBytes"] as const) {
    const value = limits?.[key];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      throw new TypeError(`UploadLimits.${key} must be a positive integer, got ${String(value)}`);
    }
  }
  return limits;
}

export function isMultipartFormData(contentType: string | undefined): boolean {
  return typeof contentType === "string" && /^\s*multipart\/form-data\s*(?:;|$)/iu.test(contentType);
}

/** A skipped file as reported: its name as sent, cut to MAX_REPORTED_NAME. */
export function skippedFile(raw: string | undefined, reason: SkipReason, detail: string): SkippedFile {
  const name = raw ?? "";
  return { name: name.length > MAX_REPORTED_NAME ? `${name.slice(0, MAX_REPORTED_NAME)}…` : name, reason, detail };
}

/** What becomes of one file part: stored under `name`, skipped, or not reported at all. */
type Admission = { name: string } | { skipped: SkippedFile } | undefined;

/** One request's file parts, judged in the order sent. */
export class UploadAdmission {
  /** Folded names taken by earlier parts of this request. */
  private readonly claimed = new Set<string>();
  private parts = 0;
  private reportingStopped = false;
  /** Set once the body passed `maxRequestBytes`: this part and every later one are skipped. */
  tooLarge = false;
  readonly tooLargeDetail: string;

  constructor(readonly limits: UploadLimits) {
    this.tooLargeDetail = `The request is larger than ${limits.maxRequestBytes} bytes; this file was not stored.`;
  }

  /**
   * The next file part of the upload field (`raw`: its file name as sent). Every part counts
   * toward `maxFiles`, skipped ones too; after `maxFiles` + MAX_EXTRA_REPORTED parts, later ones
   * are not reported (undefined).
   */
  admit(raw: string | undefined): Admission {
    const index = this.parts++;
    if (this.reportingStopped) return undefined;
    const { maxFiles } = this.limits;
    if (this.tooLarge) return { skipped: skippedFile(raw, "request_too_large", this.tooLargeDetail) };
    if (index >= maxFiles) {
      if (index < maxFiles + MAX_EXTRA_REPORTED) return { skipped: skippedFile(raw, "too_many_files", `The request has more than ${maxFiles} files; this file was not read.`) };
      this.reportingStopped = true;
      return { skipped: skippedFile(raw, "too_many_files", `The request has more than ${maxFiles} files; this file and the ones after it were not read.`) };
    }
    const checked = sanitizeFileName(raw ?? "");
    if (!checked.ok) return { skipped: skippedFile(raw, checked.reason, checked.detail) };
    const folded = foldedName(checked.name);
    if (this.claimed.has(folded)) return { skipped: skippedFile(raw, "duplicate_name", "A file with this name (ignoring case) comes earlier in the same upload.") };
    this.claimed.add(folded);
    return { name: checked.name };
  }
}

/** The detail of a file over `maxFileBytes`. */
export const fileTooLargeDetail = (limits: Pick<UploadLimits, "maxFileBytes">): string => `The file is larger than ${limits.maxFileBytes} bytes.`;
