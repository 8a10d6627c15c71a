/**
 * The data directory is private to the server's user: folders 0700, files 0600, set explicitly
 * (chmod after creating), so that neither a directory that already existed with 0755 nor the
 * process's umask leaves the store, the keys or the uploads readable by others.
 */
import { chmodSync, closeSync, existsSync, fchmodSync, mkdirSync, openSync, statSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import path from "node:path";

export const PRIVATE_DIRECTORY_MODE = 0o700;
/** A folder others may pass through but not list (the way to a sandboxed agent's workspace). */
export const SEARCHABLE_DIRECTORY_MODE = 0o711;
export const PRIVATE_FILE_MODE = 0o600;

const windows = process.platform === "win32";

/**
 * Creates `dir` (and missing parents) with `mode` (default 0700), or sets an existing one to it.
 * @returns the mode it had when that gave group or others more, for a warning; undefined otherwise
 */
export function privateDirectorySync(dir: string, mode = PRIVATE_DIRECTORY_MODE): number | undefined {
  mkdirSync(dir, { recursive: true, mode });
  if (windows) return undefined;
  const was = statSync(dir).mode & 0o777;
  if (was === mode) return undefined;
  chmodSync(dir, mode);
  return (was & 0o077 & ~mode) !== 0 ? was : undefined;
}

/** Creates `dir` and its missing parents, each created one 0700 whatever the umask. */
export async function privateDirectory(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  if (first === undefined || windows) return;
  // Every level from the first one created down to `dir`.
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    await chmod(at, PRIVATE_DIRECTORY_MODE);
    if (at === path.resolve(first) || at === path.dirname(at)) break;
  }
}

/** Sets a file to 0600 (created empty when missing), e.g. a database before SQLite opens it. */
export function privateFileSync(file: string): void {
  if (existsSync(file)) {
    if (!windows) chmodSync(file, PRIVATE_FILE_MODE);
    return;
  }
  const fd = openSync(file, "a", PRIVATE_FILE_MODE);
  try {
    if (!windows) fchmodSync(fd, PRIVATE_FILE_MODE);
  } finally {
    closeSync(fd);
  }
}

/** Sets a file to 0600 when it exists. */
export function privateIfExistsSync(file: string): void {
  if (!windows && existsSync(file)) chmodSync(file, PRIVATE_FILE_MODE);
}
