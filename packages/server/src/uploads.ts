/**
 * The upload and download core of the reference server (endpoint 5, `POST …/upload-files`, and the
 * `GET …/files/{file_name}` extension). It knows nothing about auth, stores or routing: it reads one
 * multipart/form-data request into a folder and answers what was stored and what was skipped, and it
 * finds a stored file again for a download.
 *
 * What the reference did badly (ground-truth §7) and what this module does instead:
 * - raw file names written under the workspace → every name goes through {@link sanitizeFileName},
 *   which rejects (never "repairs") anything that is not one plain file name;
 * - bytes decoded as UTF-8 → parts are streamed to disk byte for byte, never decoded, never held
 *   in memory whole;
 * - no size limit → per-file, per-request and file-count limits ({@link UploadLimits}).
 *
 * Name rules (all checked after NFC normalisation; the first that applies gives the reason):
 * - `empty_name`: empty or whitespace only (a file part without a file name counts as empty).
 * - `absolute_path`: starts with `/` or `\` (this covers `\\server\share` and `//server/share`), or
 *   with a drive letter and a colon (`C:\x`, `C:x`).
 * - `path_traversal`: a `..` segment anywhere, split on `/` and `\` (`..`, `../x`, `a/../../b`, `x/..`).
 * - `invalid_name`:
 *   - a folder separator (`/` or `\`) even when it does not escape (`docs/readme.md`). Decision: we
 *     reject rather than keep the base name, because keeping it would silently turn two different
 *     names (`a/x`, `b/x`) into one and the stored folder is flat (one `file_urls` segment per file);
 *   - control characters (U+0000–U+001F, U+007F–U+009F), bidirectional embedding/override/isolate
 *     controls (U+202A–U+202E, U+2066–U+2069; they can disguise an extension) and unpaired surrogates;
 *   - only dots (`.`, `...`);
 *   - a trailing dot or space, and any of `< > : " | ? *`, and the Windows device names (`CON`,
 *     `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9`, `CONIN$`, `CONOUT$`, with or without an
 *     extension, any case). Decision: rejected on every platform, so that the same upload gives the
 *     same answer wherever the server runs and a stored folder can be copied to Windows. (Windows
 *     strips trailing dots and spaces, so `a.txt.` would alias `a.txt`; `:` opens NTFS streams.)
 *   - more than 255 bytes in UTF-8 (the usual file-system limit for one name);
 *   - a name starting with `.acs-upload-`, reserved for this module's temporary files;
 *   - an invisible or format character: format controls (Cf: U+200B zero width space, U+FEFF byte
 *     order mark, U+00AD soft hyphen, U+200D zero width joiner, bidi marks…), default-ignorable
 *     code points (U+3164 Hangul filler…), spaces other than U+0020 (U+00A0, U+3000, U+2009…),
 *     line and paragraph separators and noncharacters. Decision: refused, not stripped — a name is
 *     never repaired — because they make two different names look the same (`a.txt` and
 *     `a\u200B.txt`). This refuses the joiners that some scripts and emoji sequences use, too;
 *   - U+FFFD, the replacement character: it is what a name that was not valid UTF-8 decodes to,
 *     and keeping it would make different byte strings (`a\xFF`, `a\xFE`) one name.
 * - `duplicate_name` (besides an exact repeat): a name that differs from a stored one, or from one
 *   earlier in the request, only by case (`Report.csv`, `REPORT.CSV`; compared after full case
 *   folding, so `straße` and `STRASSE` are one name). Decision: one name per folder whatever the
 *   file system's case rules, so that a folder copies to macOS and Windows without collisions.
 * Anything else is valid, including Unicode (`résumé.pdf`, `数据.csv`), spaces inside, and a leading
 * dot (`.env`). Look-alike characters (`∕`, `／`) are plain characters on every file system, which is
 * why names are normalised to NFC and not NFKC.
 */
import { randomBytes } from "node:crypto";
import { constants, createWriteStream, fchmodSync, fchownSync, readdirSync, rmSync, type WriteStream } from "node:fs";
import { link, lstat, open, readdir, rename, unlink, type FileHandle } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { basename, dirname, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import busboy from "busboy";
import type { SkippedFile as GeneratedSkippedFile } from "@acs-toolkit/schema";
import { PRIVATE_FILE_MODE, privateDirectory } from "./private-files.js";

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

/** Why a file was skipped: the `SkippedFile.reason` enum of the spec (schemas/conversations.yaml). */
export type SkipReason = SkippedFile["reason"];

/** One skipped file, as the spec's `SkippedFile` (`name` cut to 1024 characters with "…" when longer). */
export type SkippedFile = Pick<GeneratedSkippedFile, "name" | "reason" | "detail">;

type SanitizedName = { ok: true; name: string } | { ok: false; reason: SkipReason; detail: string };

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

/** Temporary files are `<prefix><32 hex digits>.part` in the upload folder; no valid name starts so. */
export const TEMP_FILE_PREFIX = ".acs-upload-";

const MAX_NAME_BYTES = 255;
/** Longest name echoed back in a `SkippedFile`, in UTF-16 code units. */
const MAX_REPORTED_NAME = 1024;
/** File parts past `maxFiles` that still get their own `too_many_files` entry (bounds the answer). */
const MAX_EXTRA_REPORTED = 1000;

/** C0 controls, DEL and C1 controls (U+0000–U+001F, U+007F–U+009F). */
function hasControlCharacter(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u;
/** Characters that do not show (or show as a plain space): see the module comment. */
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Noncharacter_Code_Point}]|(?!\u0020)\p{Zs}/u;
const LONE_SURROGATE = /\p{Cs}/u;
const WINDOWS_FORBIDDEN = /[<>:"|?*]/u;
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(?:\s*\..*)?$/iu;

function reject(reason: SkipReason, detail: string): SanitizedName {
  return { ok: false, reason, detail };
}

/**
 * Checks one file name as sent by a client and returns it normalised to NFC, or why it is refused.
 * A refused name is never repaired into another one (see the module comment for the rules).
 */
export function sanitizeFileName(raw: string): SanitizedName {
  if (typeof raw !== "string") return reject("invalid_name", "The file name is not text.");
  if (LONE_SURROGATE.test(raw)) return reject("invalid_name", "The file name is not valid Unicode text.");
  const name = raw.normalize("NFC");
  if (name.trim() === "") return reject("empty_name", "The file has no name.");
  if (name.startsWith("/") || name.startsWith("\\")) {
    return reject("absolute_path", "The name is an absolute path, not a file name.");
  }
  if (/^[A-Za-z]:/u.test(name)) return reject("absolute_path", "The name starts with a drive letter, not a file name.");
  const segments = name.split(/[/\\]/u);
  if (segments.includes("..")) return reject("path_traversal", "The name leaves the upload folder.");
  if (segments.length > 1) {
    return reject("invalid_name", "The name contains a folder separator (/ or \\); send the plain file name.");
  }
  if (hasControlCharacter(name)) return reject("invalid_name", "The name contains a control character.");
  if (BIDI_CONTROL.test(name)) {
    return reject("invalid_name", "The name contains a bidirectional text control, which can disguise it.");
  }
  if (name.includes("\uFFFD")) {
    return reject("invalid_name", "The name is not valid UTF-8 (or holds U+FFFD, the replacement character).");
  }
  const invisible = INVISIBLE.exec(name)?.[0];
  if (invisible !== undefined) {
    const codePoint = `U+${invisible.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
    return reject("invalid_name", `The name contains an invisible or format character (${codePoint}), which makes names look alike.`);
  }
  if (/^\.+$/u.test(name)) return reject("invalid_name", "The name is only dots.");
  if (/[. ]$/u.test(name)) return reject("invalid_name", "The name ends with a dot or a space.");
  if (WINDOWS_FORBIDDEN.test(name)) {
    return reject("invalid_name", 'The name contains one of the characters < > : " | ? * that file systems forbid.');
  }
  if (WINDOWS_DEVICE.test(name)) return reject("invalid_name", "The name is a reserved device name on Windows.");
  if (Buffer.byteLength(name, "utf8") > MAX_NAME_BYTES) {
    return reject("invalid_name", `The name is longer than ${MAX_NAME_BYTES} bytes.`);
  }
  if (name.startsWith(TEMP_FILE_PREFIX)) {
    return reject("invalid_name", "The name is reserved for the server's temporary files.");
  }
  return { ok: true, name };
}

/** A stored file, open for reading: its descriptor holds the bytes even if the name is removed. */
interface OpenStoredFile {
  handle: FileHandle;
  size: number;
}

/**
 * The regular file `name` directly in `dir`, opened for a download route, or undefined when the name
 * is not a valid file name (so it cannot leave `dir`), the file does not exist, or it is not a
 * regular file (folders and symbolic links are never served). The file is opened first and checked
 * through its descriptor: a removal racing the download (an upload rolled back) either comes
 * before the open (undefined: a 404) or leaves the open descriptor reading every byte. Stream it
 * with `Content-Length: size` (stored files are never rewritten in place) and close the handle.
 */
export async function openStoredFile(dir: string, name: string): Promise<OpenStoredFile | undefined> {
  const checked = sanitizeFileName(name);
  if (!checked.ok) return undefined;
  const folder = resolve(dir);
  const path = join(folder, checked.name);
  if (dirname(path) !== folder) return undefined;
  let handle: FileHandle;
  try {
    // Non-blocking: a FIFO (an agent's `mkfifo`) would hold one of libuv's threads for ever.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stats = await handle.stat();
    if (stats.isFile()) return { handle, size: stats.size };
  } catch {
    // Unreadable: as absent.
  }
  await handle.close();
  return undefined;
}

/**
 * Removes the temporary files a killed process left in the upload folders under `root` (one folder
 * per conversation); run at start, before any upload. Returns how many were removed.
 */
export function removeTemporaryFiles(root: string): number {
  let removed = 0;
  let folders: string[];
  try {
    folders = readdirSync(root);
  } catch {
    return 0; // no uploads yet
  }
  for (const folder of folders) {
    let names: string[];
    try {
      names = readdirSync(join(root, folder));
    } catch {
      continue; // not a folder
    }
    for (const name of names) {
      if (!name.startsWith(TEMP_FILE_PREFIX) || !name.endsWith(".part")) continue;
      rmSync(join(root, folder, name), { force: true });
      removed++;
    }
  }
  return removed;
}

/** A name as compared for duplicates: full case folding (`ß` and `SS` fold alike), after NFC. */
function foldedName(name: string): string {
  return name.normalize("NFC").toUpperCase().toLowerCase();
}

/**
 * Publishing into a folder, one file at a time per folder within this process, so that a check
 * of the folder's names and the link that follows cannot interleave with another request's
 * (two names differing only by case, sent at once, would both pass the check). Pass one instance
 * to every receiveUploads call of a server.
 */
export class UploadFolders {
  private readonly queues = new Map<string, Promise<unknown>>();

  /** Runs `task` once every earlier task on `dir` is done. */
  exclusive<T>(dir: string, task: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(dir) ?? Promise.resolve();
    const run = previous.then(task, task);
    const settled = run.then(() => {}, () => {});
    this.queues.set(dir, settled);
    void settled.then(() => {
      if (this.queues.get(dir) === settled) this.queues.delete(dir);
    });
    return run;
  }
}

function checkLimits(limits: UploadLimits): UploadLimits {
  for (const key of ["maxFileBytes", "maxFiles", "maxRequestBytes"] as const) {
    const value = limits?.[key];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      throw new TypeError(`UploadLimits.${key} must be a positive integer, got ${String(value)}`);
    }
  }
  return limits;
}

function reportedName(raw: string | undefined): string {
  const name = raw ?? "";
  return name.length > MAX_REPORTED_NAME ? `${name.slice(0, MAX_REPORTED_NAME)}…` : name;
}

function isMultipartFormData(contentType: string | undefined): boolean {
  return typeof contentType === "string" && /^\s*multipart\/form-data\s*(?:;|$)/iu.test(contentType);
}

/** Reads and discards the rest of a request body we will not parse, so the client can get its answer. */
function discardBody(req: IncomingMessage): void {
  if (!req.readableEnded) req.resume();
}

/** Error codes for which `link` cannot work on this file system; we fall back to check-and-rename. */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK"]);

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if (errorCode(error) === "ENOENT") return false;
    throw error;
  }
}

async function removeQuietly(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch {
    // Already gone, or never created.
  }
}

/**
 * Moves a finished temporary file to its final name without ever overwriting: a hard link fails
 * atomically when the name exists (also when another process stores the same name concurrently).
 * A name that differs from one in the folder only by case is taken too. Returns false when the
 * name is taken.
 */
async function publish(temp: string, final: string, folders: UploadFolders): Promise<boolean> {
  const dir = dirname(final);
  const folded = foldedName(basename(final));
  return folders.exclusive(dir, async () => {
    if ((await readdir(dir)).some((name) => !name.startsWith(TEMP_FILE_PREFIX) && foldedName(name) === folded)) return false;
    try {
      await link(temp, final);
    } catch (error) {
      const code = errorCode(error);
      if (code === "EEXIST") return false;
      if (code === undefined || !NO_HARD_LINKS.has(code)) throw error;
      // File systems without hard links: check, then rename (a narrow race between two processes).
      if (await exists(final)) return false;
      await rename(temp, final);
      return true;
    }
    await removeQuietly(temp);
    return true;
  });
}

type Slot = { stored: { name: string; bytes: number } } | { skipped: SkippedFile };

/** One accepted file part on its way to disk. */
interface ActiveFile {
  /** Stops writing, drains the part, deletes the temporary file; the part is skipped with `reason`. */
  abort(reason: SkipReason, detail: string): void;
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
    owner?: { uid: number; gid: number };
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
  let parser: busboy.Busboy;
  try {
    parser = busboy({
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
  const dir = resolve(options.dir);
  try {
    await privateDirectory(dir);
  } catch (error) {
    discardBody(req);
    throw error;
  }

  return new Promise<UploadOutcome>((resolvePromise, rejectPromise) => {
    const slots: Array<Slot | undefined> = [];
    const claimed = new Set<string>();
    const active = new Set<ActiveFile>();
    const tasks: Array<Promise<void>> = [];
    const storedPaths: string[] = [];
    let received = 0;
    let tooLarge = false;
    let filePartCount = 0;
    let reportingStopped = false;
    let sawField = false;
    let parserDone = false; // busboy closed, or we stopped feeding it
    let requestDone = false; // the whole body arrived
    let finishing = false; // no more parts will come; waiting for the files in progress
    let failed = false;
    let failure: unknown;

    const skip = (slot: number, raw: string | undefined, reason: SkipReason, detail: string): void => {
      slots[slot] = { skipped: { name: reportedName(raw), reason, detail } };
    };

    const tooLargeDetail = `The request is larger than ${limits.maxRequestBytes} bytes; this file was not stored.`;
    const duplicateDetail = "A file with this name (ignoring case) is already stored; it was not overwritten.";

    /** Stops parsing; whatever is still sent is read and discarded. */
    const stopParser = (): void => {
      if (parserDone) return;
      parserDone = true;
      parser.removeListener("drain", onParserDrain);
      parser.destroy();
      if (req.isPaused()) req.resume();
    };

    /** Settles once every file in progress is done: resolves, or rejects and removes what was stored. */
    const settleAfterTasks = async (): Promise<void> => {
      await Promise.allSettled(tasks);
      if (failed) {
        await Promise.all(storedPaths.map(removeQuietly));
        rejectPromise(failure);
        return;
      }
      const stored: UploadOutcome["stored"] = [];
      const skipped: SkippedFile[] = [];
      for (const slot of slots) {
        if (slot === undefined) continue;
        if ("stored" in slot) stored.push(slot.stored);
        else skipped.push(slot.skipped);
      }
      resolvePromise({ stored, skipped, sawField });
    };

    const finishIfDone = (): void => {
      if (finishing || failed || !parserDone || !requestDone) return;
      finishing = true;
      cleanupListeners();
      void settleAfterTasks();
    };

    /** Makes the promise reject: aborts every file in progress; what was stored is removed. */
    const fail = (error: unknown): void => {
      if (failed) return;
      failed = true;
      failure = error;
      for (const file of active) file.abort("request_too_large", "The request failed.");
      stopParser();
      cleanupListeners();
      // Keep reading (and discarding) a body that is still arriving, so the client gets the answer.
      if (!req.readableEnded && !req.destroyed) {
        req.on("data", () => {});
        req.resume();
      }
      if (!finishing) {
        finishing = true;
        void settleAfterTasks();
      }
    };

    const onFile = (field: string, stream: Readable, info: busboy.FileInfo): void => {
      // busboy destroys the part in progress when the body ends inside it or parsing stops.
      stream.on("error", () => {});
      if (failed || field !== fieldName) {
        stream.resume();
        return;
      }
      sawField = true;
      const index = filePartCount++;
      const raw = info.filename;
      if (reportingStopped) {
        stream.resume();
        return;
      }
      const slot = slots.length;
      slots.push(undefined);
      if (tooLarge) {
        skip(slot, raw, "request_too_large", tooLargeDetail);
        stream.resume();
        return;
      }
      if (index >= limits.maxFiles) {
        if (index >= limits.maxFiles + MAX_EXTRA_REPORTED) {
          reportingStopped = true;
          skip(slot, raw, "too_many_files",
            `The request has more than ${limits.maxFiles} files; this file and the ones after it were not read.`);
        } else {
          skip(slot, raw, "too_many_files", `The request has more than ${limits.maxFiles} files; this file was not read.`);
        }
        stream.resume();
        return;
      }
      const checked = sanitizeFileName(raw ?? "");
      if (!checked.ok) {
        skip(slot, raw, checked.reason, checked.detail);
        stream.resume();
        return;
      }
      const folded = foldedName(checked.name);
      if (claimed.has(folded)) {
        skip(slot, raw, "duplicate_name", "A file with this name (ignoring case) comes earlier in the same upload.");
        stream.resume();
        return;
      }
      claimed.add(folded);
      tasks.push(storeFile(slot, raw ?? "", checked.name, stream));
    };

    const storeFile = (slot: number, raw: string, name: string, stream: Readable): Promise<void> => {
      const final = join(dir, name);
      const temp = join(dir, `${TEMP_FILE_PREFIX}${randomBytes(16).toString("hex")}.part`);
      let abortReason: { reason: SkipReason; detail: string } | undefined;
      let out: WriteStream | undefined;

      const file: ActiveFile = {
        abort(reason, detail) {
          if (abortReason) return;
          abortReason = { reason, detail };
          if (out) {
            stream.unpipe(out);
            out.destroy();
          }
          stream.resume();
        },
      };
      active.add(file);
      stream.once("limit", () => file.abort("file_too_large", `The file is larger than ${limits.maxFileBytes} bytes.`));
      // Destroyed by busboy (body ended inside the part, parsing stopped): the request fails as a whole.
      stream.once("close", () => {
        if (!stream.readableEnded) file.abort("request_too_large", "The file's data ended early.");
      });

      const write = (): Promise<number> =>
        new Promise<number>((done, failedWrite) => {
          const target = createWriteStream(temp, { flags: "wx", mode: PRIVATE_FILE_MODE });
          out = target;
          // Through the descriptor, not the name: in an agent's workspace a sandboxed process could
          // swap the name for a link to a host file between the write and a chmod by name.
          target.once("open", (fd: number) => {
            try {
              fchmodSync(fd, PRIVATE_FILE_MODE); // exactly 0600, whatever the umask
              if (options.owner) fchownSync(fd, options.owner.uid, options.owner.gid);
            } catch (error) {
              target.destroy(error as Error);
            }
          });
          let sourceEnded = false;
          let targetClosed = false;
          let writeError: unknown;
          const settle = (): void => {
            if (!targetClosed) return;
            if (writeError !== undefined && !abortReason) failedWrite(writeError);
            else if (sourceEnded || abortReason) done(target.bytesWritten);
            else failedWrite(new Error("the temporary file closed before the part ended"));
          };
          stream.once("end", () => {
            sourceEnded = true;
            settle();
          });
          target.once("error", (error) => {
            writeError = error;
          });
          target.once("close", () => {
            targetClosed = true;
            settle();
          });
          if (abortReason) target.destroy();
          else stream.pipe(target);
        });

      const run = async (): Promise<void> => {
        try {
          // Cheap early answer for a name already stored; `publish` is the atomic check.
          if (await exists(final)) file.abort("duplicate_name", duplicateDetail);
          if (!abortReason) {
            const bytes = await write();
            if (!abortReason) {
              if (await publish(temp, final, folders)) {
                storedPaths.push(final);
                slots[slot] = { stored: { name, bytes } };
              } else {
                abortReason = { reason: "duplicate_name", detail: duplicateDetail };
              }
            }
          }
          if (abortReason) skip(slot, raw, abortReason.reason, abortReason.detail);
        } catch (error) {
          file.abort("request_too_large", "The file could not be written.");
          fail(error);
        } finally {
          active.delete(file);
          if (out) await removeQuietly(temp);
        }
      };
      return run();
    };

    const onParserError = (error: Error): void => {
      if (tooLarge) {
        // The body was over the limit anyway, and the answer already says so for what remains.
        stopParser();
        finishIfDone();
        return;
      }
      fail(new UploadRequestError("malformed_multipart", `The multipart body is malformed: ${error.message}.`, { cause: error }));
    };

    const onParserClose = (): void => {
      parserDone = true;
      finishIfDone();
    };

    const onParserDrain = (): void => {
      if (!failed) req.resume();
    };

    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (!tooLarge && received > limits.maxRequestBytes) {
        tooLarge = true;
        for (const file of active) file.abort("request_too_large", tooLargeDetail);
      }
      if (parserDone) return;
      if (!parser.write(chunk)) req.pause();
    };

    const onEnd = (): void => {
      requestDone = true;
      if (!parserDone) parser.end();
      finishIfDone();
    };

    // 'close' before 'end': the connection went away with the body incomplete.
    const onClose = (): void => {
      if (!requestDone) fail(new UploadRequestError("aborted", "The client closed the connection before the upload was complete."));
    };

    const onRequestError = (error: Error): void => {
      fail(new UploadRequestError("aborted", "The connection failed before the upload was complete.", { cause: error }));
    };

    function cleanupListeners(): void {
      req.removeListener("data", onData);
      req.removeListener("end", onEnd);
      req.removeListener("close", onClose);
      req.removeListener("error", onRequestError);
      parser.removeListener("file", onFile);
      parser.removeListener("drain", onParserDrain);
      parser.removeListener("error", onParserError);
      // A late error must never become an uncaught exception.
      parser.on("error", () => {});
      req.on("error", () => {});
    }

    parser.on("file", onFile);
    parser.on("error", onParserError);
    parser.on("close", onParserClose);
    parser.on("drain", onParserDrain);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("close", onClose);
    req.on("error", onRequestError);
  });
}
