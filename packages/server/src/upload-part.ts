/**
 * One accepted file part of an upload on its way to disk: streamed byte for byte to a temporary
 * file in the upload folder, then published under its name, unless it is aborted on the way.
 */
import { createWriteStream, fchmodSync, fchownSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { PRIVATE_FILE_MODE } from "./private-files.js";
import { publish, removeQuietly, temporaryFilePath, type UploadFolders } from "./upload-folders.js";
import type { SkipReason } from "./upload-names.js";
import { DUPLICATE_DETAIL, fileTooLargeDetail } from "./upload-admission.js";

/** Who stored files belong to: a user and group id. */
export interface FileOwner {
  uid: number;
  gid: number;
}

/** Why a part is not stored. */
interface SkipCause {
  reason: SkipReason;
  detail: string;
}

/** A file part accepted for storing; the receiver aborts it when the request goes wrong. */
export class UploadPart {
  /** The part's final name in the upload folder. */
  readonly path: string;
  private readonly temp: string;
  private readonly owner: FileOwner | undefined;
  private skipCause: SkipCause | undefined;
  /** The temporary file being written; set once writing has started. */
  private out: WriteStream | undefined;

  /**
   * @param stream the part's data, as busboy gives it (it emits `limit` past its `fileSize`)
   * @param name the sanitised name to store it under in `dir`
   */
  constructor(
    private readonly stream: Readable,
    dir: string,
    name: string,
    options: { maxFileBytes: number; owner: FileOwner | undefined },
  ) {
    this.path = join(dir, name);
    this.temp = temporaryFilePath(dir);
    this.owner = options.owner;
    stream.once("limit", () => this.abort("file_too_large", fileTooLargeDetail(options)));
    // Destroyed by busboy (body ended inside the part, parsing stopped): the request fails as a whole.
    stream.once("close", () => {
      if (!stream.readableEnded) this.abort("request_too_large", "The file's data ended early.");
    });
  }

  /** Why the part is skipped, once it is. */
  get skipped(): SkipCause | undefined {
    return this.skipCause;
  }

  /** Stops writing, drains the part, deletes the temporary file; the part is skipped with `reason`. */
  abort(reason: SkipReason, detail: string): void {
    if (this.skipCause) return;
    this.skipCause = { reason, detail };
    if (this.out) {
      this.stream.unpipe(this.out);
      this.out.destroy();
    }
    this.stream.resume();
  }

  /**
   * Streams the part into its temporary file and resolves with the bytes written once the file is
   * closed: all of them, or as many as were written before an abort. Rejects when the file cannot
   * be written.
   */
  write(): Promise<number> {
    return new Promise<number>((done, failedWrite) => {
      const target = createWriteStream(this.temp, { flags: "wx", mode: PRIVATE_FILE_MODE });
      this.out = target;
      this.restrictAccess(target);
      let sourceEnded = false;
      let targetClosed = false;
      let writeError: unknown;
      const settle = (): void => {
        if (!targetClosed) return;
        if (writeError !== undefined && !this.skipCause) failedWrite(writeError);
        else if (sourceEnded || this.skipCause) done(target.bytesWritten);
        else failedWrite(new Error("the temporary file closed before the part ended"));
      };
      this.stream.once("end", () => {
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
      if (this.skipCause) target.destroy();
      else this.stream.pipe(target);
    });
  }

  /**
   * Gives the written temporary file its final name; when the name is taken (see `publish`), the
   * part is skipped as `duplicate_name` instead. Returns whether it was published.
   */
  async moveToFinalName(folders: UploadFolders): Promise<boolean> {
    if (await publish(this.temp, this.path, folders)) return true;
    this.skipCause = { reason: "duplicate_name", detail: DUPLICATE_DETAIL };
    return false;
  }

  /** Removes the temporary file, if writing ever started. */
  async removeTemporaryFile(): Promise<void> {
    if (this.out) await removeQuietly(this.temp);
  }

  /** Mode 0600 and the configured owner, as soon as the temporary file is open. */
  private restrictAccess(target: WriteStream): void {
    // Through the descriptor, not the name: in an agent's workspace a sandboxed process could
    // swap the name for a link to a host file between the write and a chmod by name.
    target.once("open", (fd: number) => {
      try {
        fchmodSync(fd, PRIVATE_FILE_MODE); // exactly 0600, whatever the umask
        if (this.owner) fchownSync(fd, this.owner.uid, this.owner.gid);
      } catch (error) {
        target.destroy(error as Error);
      }
    });
  }
}
