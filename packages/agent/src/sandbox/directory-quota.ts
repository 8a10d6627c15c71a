/**
 * A size bound for a directory on a shared disk that no file system quota covers: the sandbox's
 * `/tmp` on disk. Its size (blocks in use, as `du` counts) is measured in the background while the
 * conversation's shell lives, and the owner is told when it passes the limit, to stop what writes.
 * The bound holds to within what the commands write between two measurements (one a second, or
 * less often when a walk is slow: a walk never takes more than a tenth of the time).
 *
 * The walk never follows a link and opens each folder relative to its parent's descriptor
 * (`/proc/self/fd/<n>/<name>`), so it measures what is really there however deep, and a tree
 * changed under it only makes it count less or more for one round.
 */
import { constants } from "node:fs";
import { lstat, open, readdir, type FileHandle } from "node:fs/promises";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const codeOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;

/** What {@link directorySize} found. */
export interface DirectorySize {
  /** Bytes of disk in use (512-byte blocks of every file and folder). */
  bytes: number;
  /** Entries counted. */
  entries: number;
  /** False when the walk stopped at `maxEntries` or `maxDepth` (there is more). */
  complete: boolean;
}

/** Levels of folders the walk descends (each holds a descriptor open while below it). */
const MAX_DEPTH = 256;

/** The disk space a directory's tree uses, links not followed; a missing directory is empty. */
export async function directorySize(dir: string, maxEntries = 1_000_000): Promise<DirectorySize> {
  const size: DirectorySize = { bytes: 0, entries: 0, complete: true };
  let handle: FileHandle;
  try {
    handle = await open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if (codeOf(error) === "ENOENT") return size;
    throw error;
  }
  try {
    await walk(handle, 1, size, maxEntries);
  } finally {
    await handle.close();
  }
  return size;
}

async function walk(dir: FileHandle, depth: number, size: DirectorySize, maxEntries: number): Promise<void> {
  const base = `/proc/self/fd/${dir.fd}`;
  const names = await readdir(base).catch(() => [] as string[]);
  for (const name of names) {
    if (size.entries >= maxEntries) {
      size.complete = false;
      return;
    }
    const stat = await lstat(`${base}/${name}`).catch(() => undefined);
    if (!stat) continue;
    size.entries++;
    size.bytes += stat.blocks * 512;
    if (!stat.isDirectory()) continue;
    if (depth >= MAX_DEPTH) {
      size.complete = false;
      continue;
    }
    const sub = await open(`${base}/${name}`, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK).catch(() => undefined);
    if (!sub) continue;
    try {
      await walk(sub, depth + 1, size, maxEntries);
    } finally {
      await sub.close();
    }
  }
}

interface DirectoryQuotaOptions {
  dir: string;
  /** Bytes the directory may hold. */
  limitBytes: number;
  /**
   * Called once when the directory is over `allowedBytes` (the limit, or what it already held when
   * the watch started, if more): the owner stops what writes. The watch then stops.
   */
  onOver(size: DirectorySize, allowedBytes: number): void;
  /** Called after every measurement that is not over (the size as measured). */
  onMeasured?(size: DirectorySize): void;
  /** Entries counted before a walk gives up and counts as over (default 1,000,000). */
  maxEntries?: number;
  /** Shortest time between two measurements (default 1,000 ms). */
  intervalMs?: number;
}

/** A running watch of one directory's size. */
export interface DirectoryQuota {
  stop(): void;
}

/**
 * Watches `dir` until stopped or over. What the directory already holds when the watch starts is
 * allowed (a restarted shell must be able to run `rm`); anything past that and the limit is not.
 */
export function watchDirectoryQuota(options: DirectoryQuotaOptions): DirectoryQuota {
  const minInterval = options.intervalMs ?? 1_000;
  const maxEntries = options.maxEntries ?? 1_000_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let allowed: number | undefined;
  /** Whether the first walk saw everything: from then on, too many entries to count is over. */
  let countable = true;
  const round = async () => {
    const started = performance.now();
    let size: DirectorySize;
    try {
      size = await directorySize(options.dir, maxEntries);
    } catch {
      size = { bytes: 0, entries: 0, complete: true }; // unreadable for a moment: measured again next round
    }
    if (stopped) return;
    if (allowed === undefined) {
      allowed = Math.max(options.limitBytes, size.bytes);
      countable = size.complete;
    }
    if (size.bytes > allowed || (countable && !size.complete)) {
      stopped = true;
      options.onOver(size, allowed);
      return;
    }
    options.onMeasured?.(size);
    if (stopped) return;
    const elapsed = performance.now() - started;
    timer = setTimeout(() => void round(), Math.max(minInterval, elapsed * 10));
    timer.unref();
  };
  void round();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
