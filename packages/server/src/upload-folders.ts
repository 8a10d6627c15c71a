/**
 * The folders uploads are stored in: publishing a finished temporary file under its name without
 * ever overwriting, finding a stored file again for a download, and removing the temporary files a
 * killed process left behind.
 */
import { randomBytes } from "node:crypto";
import { constants, readdirSync, rmSync, statSync } from "node:fs";
import { link, lstat, open, readdir, rename, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { foldedName, sanitizeFileName, TEMP_FILE_PREFIX } from "./upload-names.js";

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
 *
 * `olderThanMs`: only those nobody has written to for that long. Where several instances share the
 * data directory (a PostgreSQL store, `--data-dir` on one volume), another instance may be receiving
 * an upload into one of them: a receiving upload writes as its bytes arrive, and Node's request
 * timeout ends a stalled one long before.
 */
export function removeTemporaryFiles(root: string, { olderThanMs, now = Date.now() }: { olderThanMs?: number; now?: number } = {}): number {
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
      const file = join(root, folder, name);
      if (olderThanMs !== undefined && !untouchedFor(file, olderThanMs, now)) continue;
      rmSync(file, { force: true });
      removed++;
    }
  }
  return removed;
}

/** Whether nobody has written to `file` for `ms` (false once it is gone: published or removed meanwhile). */
function untouchedFor(file: string, ms: number, now: number): boolean {
  try {
    return now - statSync(file).mtimeMs >= ms;
  } catch {
    return false;
  }
}

/** A fresh temporary file name in `dir`, which no valid file name can take. */
export function temporaryFilePath(dir: string): string {
  return join(dir, `${TEMP_FILE_PREFIX}${randomBytes(16).toString("hex")}.part`);
}

/** Error codes for which `link` cannot work on this file system; we fall back to check-and-rename. */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK"]);

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if (errorCode(error) === "ENOENT") return false;
    throw error;
  }
}

export async function removeQuietly(path: string): Promise<void> {
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
export async function publish(temp: string, final: string, folders: UploadFolders): Promise<boolean> {
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
