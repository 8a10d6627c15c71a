/**
 * The memory of a sandbox's processes together where no memory cgroup can be made (an
 * unprivileged server without a delegated cgroup): the process tree below the sandbox's first
 * process is measured a few times a second, and while its resident memory passes the limit the
 * largest processes are killed, as the kernel's OOM killer does in a cgroup. Each process's
 * RLIMIT_DATA still bounds it alone; this bounds their sum, late by at most what the tree allocates
 * in one interval.
 *
 * Counted per process: anonymous and shared-memory pages resident (`RssAnon` + `RssShmem` of
 * `/proc/PID/status`). Pages a fork shares copy-on-write count once per process, so the sum errs
 * high, never low. Files on disk (the page cache) do not count.
 */
import { readdir, readFile } from "node:fs/promises";

export interface ProcessMemoryWatch {
  /** Processes killed so far for passing the limit together. */
  readonly kills: number;
  stop(): void;
}

export interface ProcessMemoryWatchOptions {
  /** The first process of the tree (the sandbox's); it is measured, and killed last. */
  rootPid: number;
  limitBytes: number;
  /** Called after processes were killed, with how many and the tree's total before. */
  onKill?(killed: number, totalBytes: number): void;
  /** Default 250 ms. */
  intervalMs?: number;
  /** `/proc` (tests give their own). */
  proc?: string;
  /** Sends SIGKILL (tests give their own). */
  kill?(pid: number): void;
}

/** One process of the tree and its resident memory. */
interface ProcessMemory {
  pid: number;
  bytes: number;
}

/** Watches the tree below `rootPid` until `stop()` or until the root is gone. */
export function watchProcessMemory(options: ProcessMemoryWatchOptions): ProcessMemoryWatch {
  const { rootPid, limitBytes, intervalMs = 250, proc = "/proc" } = options;
  const kill = options.kill ?? ((pid: number) => process.kill(pid, "SIGKILL"));
  let stopped = false;
  let kills = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    const tree = await processTreeMemory(rootPid, proc);
    if (stopped) return;
    if (tree.length === 0) {
      stopped = true; // the root is gone
      return;
    }
    const total = tree.reduce((sum, entry) => sum + entry.bytes, 0);
    if (total > limitBytes) {
      const killed = victims(tree, limitBytes, rootPid);
      for (const pid of killed) {
        try {
          kill(pid);
        } catch {
          // already gone
        }
      }
      if (killed.length > 0) {
        kills += killed.length;
        options.onKill?.(killed.length, total);
      }
    }
    timer = setTimeout(run, intervalMs);
    timer.unref();
  };
  const run = () => void tick().catch(() => {});
  timer = setTimeout(run, intervalMs);
  timer.unref();
  return {
    get kills() {
      return kills;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * The processes to kill to bring `tree` to `limitBytes` or under: the largest first, the root only
 * if the others are not enough.
 */
export function victims(tree: readonly ProcessMemory[], limitBytes: number, rootPid: number): number[] {
  let total = tree.reduce((sum, entry) => sum + entry.bytes, 0);
  const order = [...tree].sort((a, b) => Number(a.pid === rootPid) - Number(b.pid === rootPid) || b.bytes - a.bytes);
  const killed: number[] = [];
  for (const entry of order) {
    if (total <= limitBytes) break;
    killed.push(entry.pid);
    total -= entry.bytes;
  }
  return killed;
}

/** `rootPid` and every process below it, each with its resident memory (empty once the root is gone). */
export async function processTreeMemory(rootPid: number, proc = "/proc"): Promise<ProcessMemory[]> {
  const found: ProcessMemory[] = [];
  const seen = new Set<number>();
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const bytes = await residentBytes(pid, proc);
    if (bytes === undefined) continue; // exited meanwhile
    found.push({ pid, bytes });
    queue.push(...(await childrenOf(pid, proc)));
  }
  return found;
}

async function residentBytes(pid: number, proc: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(`${proc}/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
  return (kib("RssAnon") + kib("RssShmem")) * 1024;
}

/** The children of every thread of `pid` (`/proc/PID/task/TID/children`). */
async function childrenOf(pid: number, proc: string): Promise<number[]> {
  let tasks: string[];
  try {
    tasks = await readdir(`${proc}/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const tid of tasks) {
    const text = await readFile(`${proc}/${pid}/task/${tid}/children`, "utf8").catch(() => "");
    for (const child of text.split(/\s+/)) if (child) children.push(Number(child));
  }
  return children;
}
