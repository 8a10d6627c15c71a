/**
 * The upload and download core of the reference server (endpoint 5, `POST …/upload-files`, and the
 * `GET …/files/{file_name}` extension). It knows nothing about auth, stores or routing: it reads one
 * multipart/form-data request into a folder and answers what was stored and what was skipped, and it
 * finds a stored file again for a download.
 *
 * What the reference did badly (ground-truth §7) and what this core does instead:
 * - raw file names written under the workspace → every name goes through `sanitizeFileName`
 *   (upload-names.ts, which tells the name rules), which rejects (never "repairs") anything that
 *   is not one plain file name;
 * - bytes decoded as UTF-8 → parts are streamed to disk byte for byte, never decoded, never held
 *   in memory whole (upload-part.ts);
 * - no size limit → per-file, per-request and file-count limits ({@link UploadLimits}).
 *
 * This module is the multipart receiver; upload-folders.ts publishes files into a folder and
 * finds them again.
 */
import type { IncomingMessage } from "node:http";
import { resolve } from "node:path";
import type { Readable } from "node:stream";
import busboy from "busboy";
import { privateDirectory } from "./private-files.js";
import { checkLimits, DUPLICATE_DETAIL, isMultipartFormData, skippedFile, UploadAdmission, type UploadLimits } from "./upload-admission.js";
import { exists, removeQuietly, UploadFolders } from "./upload-folders.js";
import type { SkippedFile, SkipReason } from "./upload-names.js";
import { UploadPart, type FileOwner } from "./upload-part.js";

export interface UploadOutcome {
  /** Files stored, in the order they were sent; `name` is the stored (NFC) name. */
  stored: Array<{ name: string; bytes: number }>;
  /** Files skipped, in the order they were sent. */
  skipped: SkippedFile[];
  /** Whether any file part of the upload field was present (the route answers 422 when it was not). */
  sawField: boolean;
}

type UploadRequestErrorCode = "not_multipart" | "malformed_multipart" | "aborted";

/**
 * The request itself is unusable: not multipart/form-data, malformed multipart, or the client went
 * away before the body was complete. The caller answers 422 with `detail` (for `aborted` nobody is
 * listening any more, so the answer is only for the log). When this is thrown, nothing of the
 * request is left on disk: files it had already stored are removed again.
 */
export class UploadRequestError extends Error {
  override readonly name = "UploadRequestError";
  readonly code: UploadRequestErrorCode;
  /** One sentence for a person. */
  readonly detail: string;

  constructor(code: UploadRequestErrorCode, detail: string, options?: { cause?: unknown }) {
    super(detail, options);
    this.code = code;
    this.detail = detail;
  }
}

/** Reads and discards the rest of a request body we will not parse, so the client can get its answer. */
function discardBody(req: IncomingMessage): void {
  if (!req.readableEnded) req.resume();
}

/**
 * Reads one multipart/form-data request and stores each file part of `fieldName` (default `files`)
 * in `dir` (created when missing), streaming it byte for byte to a temporary file and renaming it
 * when complete. Parts of other fields are read and discarded.
 *
 * - Resolves with what was stored and what was skipped, in the order sent. A skip is one of the
 *   {@link SkipReason}s: a bad name, a name already in `dir` or earlier in the request
 *   (`duplicate_name`; nothing is overwritten), a file over `maxFileBytes` (discarded while
 *   streaming), file parts past `maxFiles` (every file part of the field counts, skipped ones too),
 *   and once the body passes `maxRequestBytes` the file being received and every later one
 *   (`request_too_large`). The rest of an over-large body is still read (parsed for names, data
 *   discarded) so the client receives the answer; the server's own timeouts (`requestTimeout`)
 *   bound how long that may take. After `maxFiles` + 1000 file parts, later parts are not reported.
 * - Rejects with {@link UploadRequestError} when the body is not multipart/form-data, the multipart
 *   is malformed (no boundary, bad part header, body ends early), or the client aborts mid-upload.
 *   In every rejection all temporary files are deleted and the files this request had already
 *   stored are removed again, so a 422 means nothing was stored. The promise never stays pending
 *   for a closed connection.
 * - Rejects with the file-system error itself (answer 500) when `dir` cannot be created or written.
 *
 * Text parts (no file name, not application/octet-stream) of the field are not files: they are
 * discarded and do not set `sawField`. A file part with no file name is skipped as `empty_name`.
 * Names are read from `filename*=UTF-8''…` when present, else from `filename="…"` as UTF-8. A raw
 * control byte (NUL, LF) inside a part header is not a file name but a malformed header (busboy
 * refuses it), so such a request is a 422; the same name sent percent-encoded in `filename*` is
 * parsed and skipped as `invalid_name`.
 */
export async function receiveUploads(
  req: IncomingMessage,
  options: {
    dir: string;
    limits: UploadLimits;
    fieldName?: string;
    folders?: UploadFolders;
    /** Who stored files belong to (the agent sandbox's user, for a server running as root). */
    owner?: FileOwner;
  },
): Promise<UploadOutcome> {
  const limits = checkLimits(options.limits);
  const fieldName = options.fieldName ?? "files";
  const folders = options.folders ?? new UploadFolders();
  if (req.readableEnded) throw new Error("receiveUploads: the request body was already read");
  if (!isMultipartFormData(req.headers["content-type"])) {
    discardBody(req);
    throw new UploadRequestError("not_multipart", "The request body must be multipart/form-data.");
  }
  const parser = createParser(req, limits);
  const dir = resolve(options.dir);
  try {
    await privateDirectory(dir);
  } catch (error) {
    discardBody(req);
    throw error;
  }
  return new Promise<UploadOutcome>((resolvePromise, rejectPromise) => {
    const settings: ReceiverSettings = { dir, limits, fieldName, folders, owner: options.owner };
    new MultipartReceiver(req, parser, settings, { resolve: resolvePromise, reject: rejectPromise }).listen();
  });
}

/** A busboy parser for `req`; a Content-Type without a usable boundary is a malformed request. */
function createParser(req: IncomingMessage, limits: UploadLimits): busboy.Busboy {
  try {
    return busboy({
      headers: req.headers,
      preservePath: true, // we want the name as sent, to judge it; busboy would cut it to a base name
      defParamCharset: "utf8", // clients send UTF-8 names in filename="…"; busboy's default is latin1
      limits: {
        // busboy marks a file as truncated when it reaches the limit, so one more byte tells
        // "exactly maxFileBytes" (kept) from "more than maxFileBytes" (skipped).
        fileSize: limits.maxFileBytes + 1,
        fieldSize: 0, // we keep no text field values
      },
    });
  } catch (error) {
    discardBody(req);
    throw new UploadRequestError(
      "malformed_multipart",
      "The multipart/form-data Content-Type has no usable boundary.",
      { cause: error },
    );
  }
}

/** What one receiver works with: the checked options of {@link receiveUploads}. */
interface ReceiverSettings {
  dir: string;
  limits: UploadLimits;
  fieldName: string;
  folders: UploadFolders;
  owner: FileOwner | undefined;
}

/** Where one reported file part ended up; undefined in its slot while it is being stored. */
type Slot = { stored: { name: string; bytes: number } } | { skipped: SkippedFile };

/**
 * One request being received: feeds the body to busboy, sends each file part of the upload field
 * to disk or skips it, and settles once both the body and every file in progress are done.
 */
class MultipartReceiver {
  /** One per reported file part, in the order sent. */
  private readonly slots: Array<Slot | undefined> = [];
  private readonly active = new Set<UploadPart>();
  private readonly tasks: Array<Promise<void>> = [];
  /** Files this request stored, removed again when it fails. */
  private readonly storedPaths: string[] = [];
  private received = 0;
  private readonly admission: UploadAdmission;
  private sawField = false;
  private parserDone = false; // busboy closed, or we stopped feeding it
  private requestDone = false; // the whole body arrived
  private finishing = false; // no more parts will come; waiting for the files in progress
  private failed = false;
  private failure: unknown;

  constructor(
    private readonly req: IncomingMessage,
    private readonly parser: busboy.Busboy,
    private readonly settings: ReceiverSettings,
    private readonly promise: { resolve: (outcome: UploadOutcome) => void; reject: (error: unknown) => void },
  ) {
    this.admission = new UploadAdmission(settings.limits);
  }

  /** Starts reading the body. */
  listen(): void {
    this.parser.on("file", this.onFile);
    this.parser.on("error", this.onParserError);
    this.parser.on("close", this.onParserClose);
    this.parser.on("drain", this.onParserDrain);
    this.req.on("data", this.onData);
    this.req.on("end", this.onEnd);
    this.req.on("close", this.onClose);
    this.req.on("error", this.onRequestError);
  }

  private skip(slot: number, raw: string | undefined, reason: SkipReason, detail: string): void {
    this.slots[slot] = { skipped: skippedFile(raw, reason, detail) };
  }

  private readonly onFile = (field: string, stream: Readable, info: busboy.FileInfo): void => {
    // busboy destroys the part in progress when the body ends inside it or parsing stops.
    stream.on("error", () => {});
    if (this.failed || field !== this.settings.fieldName) {
      stream.resume();
      return;
    }
    this.sawField = true;
    const raw = info.filename;
    const admission = this.admission.admit(raw);
    if (admission === undefined || "skipped" in admission) {
      if (admission) this.slots.push(admission);
      stream.resume();
      return;
    }
    const slot = this.slots.length;
    this.slots.push(undefined);
    this.tasks.push(this.storeFile(slot, raw ?? "", admission.name, stream));
  };

  /** Writes one accepted part and publishes it; a write failure fails the whole request. */
  private async storeFile(slot: number, raw: string, name: string, stream: Readable): Promise<void> {
    const { dir, limits, folders, owner } = this.settings;
    const part = new UploadPart(stream, dir, name, { maxFileBytes: limits.maxFileBytes, owner });
    this.active.add(part);
    try {
      // Cheap early answer for a name already stored; publishing is the atomic check.
      if (await exists(part.path)) part.abort("duplicate_name", DUPLICATE_DETAIL);
      if (!part.skipped) {
        const bytes = await part.write();
        if (!part.skipped && (await part.moveToFinalName(folders))) {
          this.storedPaths.push(part.path);
          this.slots[slot] = { stored: { name, bytes } };
        }
      }
      const skipped = part.skipped;
      if (skipped) this.skip(slot, raw, skipped.reason, skipped.detail);
    } catch (error) {
      part.abort("request_too_large", "The file could not be written.");
      this.fail(error);
    } finally {
      this.active.delete(part);
      await part.removeTemporaryFile();
    }
  }

  /** Stops parsing; whatever is still sent is read and discarded. */
  private stopParser(): void {
    if (this.parserDone) return;
    this.parserDone = true;
    this.parser.removeListener("drain", this.onParserDrain);
    this.parser.destroy();
    if (this.req.isPaused()) this.req.resume();
  }

  /** Settles once every file in progress is done: resolves, or rejects and removes what was stored. */
  private async settleAfterTasks(): Promise<void> {
    await Promise.allSettled(this.tasks);
    if (this.failed) {
      await Promise.all(this.storedPaths.map(removeQuietly));
      this.promise.reject(this.failure);
      return;
    }
    const stored: UploadOutcome["stored"] = [];
    const skipped: SkippedFile[] = [];
    for (const slot of this.slots) {
      if (slot === undefined) continue;
      if ("stored" in slot) stored.push(slot.stored);
      else skipped.push(slot.skipped);
    }
    this.promise.resolve({ stored, skipped, sawField: this.sawField });
  }

  private finishIfDone(): void {
    if (this.finishing || this.failed || !this.parserDone || !this.requestDone) return;
    this.finishing = true;
    this.cleanupListeners();
    void this.settleAfterTasks();
  }

  /** Makes the promise reject: aborts every file in progress; what was stored is removed. */
  private fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.failure = error;
    for (const part of this.active) part.abort("request_too_large", "The request failed.");
    this.stopParser();
    this.cleanupListeners();
    // Keep reading (and discarding) a body that is still arriving, so the client gets the answer.
    if (!this.req.readableEnded && !this.req.destroyed) {
      this.req.on("data", () => {});
      this.req.resume();
    }
    if (!this.finishing) {
      this.finishing = true;
      void this.settleAfterTasks();
    }
  }

  private readonly onParserError = (error: Error): void => {
    if (this.admission.tooLarge) {
      // The body was over the limit anyway, and the answer already says so for what remains.
      this.stopParser();
      this.finishIfDone();
      return;
    }
    this.fail(new UploadRequestError("malformed_multipart", `The multipart body is malformed: ${error.message}.`, { cause: error }));
  };

  private readonly onParserClose = (): void => {
    this.parserDone = true;
    this.finishIfDone();
  };

  private readonly onParserDrain = (): void => {
    if (!this.failed) this.req.resume();
  };

  private readonly onData = (chunk: Buffer): void => {
    this.received += chunk.length;
    if (!this.admission.tooLarge && this.received > this.settings.limits.maxRequestBytes) {
      this.admission.tooLarge = true;
      for (const part of this.active) part.abort("request_too_large", this.admission.tooLargeDetail);
    }
    if (this.parserDone) return;
    if (!this.parser.write(chunk)) this.req.pause();
  };

  private readonly onEnd = (): void => {
    this.requestDone = true;
    if (!this.parserDone) this.parser.end();
    this.finishIfDone();
  };

  // 'close' before 'end': the connection went away with the body incomplete.
  private readonly onClose = (): void => {
    if (!this.requestDone) this.fail(new UploadRequestError("aborted", "The client closed the connection before the upload was complete."));
  };

  private readonly onRequestError = (error: Error): void => {
    this.fail(new UploadRequestError("aborted", "The connection failed before the upload was complete.", { cause: error }));
  };

  private cleanupListeners(): void {
    this.req.removeListener("data", this.onData);
    this.req.removeListener("end", this.onEnd);
    this.req.removeListener("close", this.onClose);
    this.req.removeListener("error", this.onRequestError);
    this.parser.removeListener("file", this.onFile);
    this.parser.removeListener("drain", this.onParserDrain);
    this.parser.removeListener("error", this.onParserError);
    // A late error must never become an uncaught exception.
    this.parser.on("error", () => {});
    this.req.on("error", () => {});
  }
}
