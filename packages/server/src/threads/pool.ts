/**
 * Worker threads for the work that must not hold the request thread (no request may hold
 * the event loop for more than 50 ms): heavy reads (read-worker.ts) and the parsing of large
 * replays (import-worker.ts). A pool starts its threads on first use, hands each job to an idle
 * thread (FIFO otherwise), and delivers every message the job posts until its last one. A thread
 * that dies fails its job and is replaced on the next one.
 *
 * Entry points: built, `dist/<name>.js` next to the bundle (tsup entries); from sources (tests),
 * `src/workers/<name>.ts` through tsx, which a worker does not inherit from its parent.
 */
import { readlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { getPriority, setPriority } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker, type Transferable } from "node:worker_threads";

/** What a worker posts for a job: `last` ends it. */
export interface JobMessage {
  job: number;
  last: boolean;
  /** A failure of the job (the worker goes on): a message, and the error's `code` if it had one. */
  error?: { message: string; code?: string; name?: string; detail?: unknown };
  [key: string]: unknown;
}

/** The error a job failed with in its worker, rebuilt on this side. */
export class WorkerJobError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    name = "WorkerJobError",
    /** The `detail` of the error thrown in the worker (a RequestValidationError's entries). */
    readonly detail?: unknown,
  ) {
    super(message);
    this.name = name;
  }
}

interface Job {
  payload: Record<string, unknown>;
  transfer: Transferable[];
  onMessage: (message: JobMessage) => void;
  resolve: () => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  job?: { id: number } & Job;
}

/**
 * A worker thread's entry: built, `<name>.js` next to the bundle (tsup.config.ts names it); from
 * the sources (the tests), `source`, run through tsx.
 */
export interface WorkerEntry {
  name: string;
  source: URL;
}

function spawn({ name, source }: WorkerEntry, workerData: unknown): Worker {
  const here = import.meta.url;
  if (!here.endsWith(".ts")) return new Worker(new URL(`./${name}.js`, here), { workerData });
  const tsx = createRequire(here).resolve("tsx/package.json");
  const api = pathToFileURL(path.join(path.dirname(tsx), "dist/esm/api/index.mjs")).href;
  const entry = source.href;
  const code = `import { register } from ${JSON.stringify(api)}; register(); await import(${JSON.stringify(entry)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`), { workerData });
}

export class WorkerPool {
  private readonly threads: Thread[] = [];
  private readonly queue: Job[] = [];
  private nextJob = 1;
  private closed = false;

  /**
   * @param entry the worker's entry
   * @param size threads at most
   * @param workerData handed to every thread
   */
  constructor(
    private readonly entry: WorkerEntry,
    private readonly size: number,
    private readonly workerData: unknown,
  ) {}

  /**
   * Runs a job: `payload` is posted to a thread (with `transfer` moved, not copied); each message
   * it posts for the job goes to `onMessage`. Resolves after the last one; rejects when the job
   * reports an error (WorkerJobError) or its thread dies.
   */
  run(payload: Record<string, unknown>, onMessage: (message: JobMessage) => void, transfer: Transferable[] = []): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`the ${this.entry.name} pool is closed`));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ payload, transfer, onMessage, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let thread = this.threads.find((t) => t.job === undefined);
      if (!thread && this.threads.length < this.size) thread = this.start();
      if (!thread) return;
      const job = { id: this.nextJob++, ...this.queue.shift()! };
      thread.job = job;
      thread.worker.ref(); // a job in flight keeps the process alive; an idle pool does not
      thread.worker.postMessage({ job: job.id, ...job.payload }, job.transfer);
    }
  }

  private start(): Thread {
    const thread: Thread = { worker: spawn(this.entry, this.workerData) };
    thread.worker.unref();
    thread.worker.on("message", (message: JobMessage) => {
      const job = thread.job;
      if (!job || message.job !== job.id) return;
      if (message.error) {
        this.finish(thread);
        job.reject(new WorkerJobError(message.error.message, message.error.code, message.error.name, message.error.detail));
        return;
      }
      try {
        job.onMessage(message);
      } catch (error) {
        this.finish(thread);
        job.reject(error as Error);
        return;
      }
      if (message.last) {
        this.finish(thread);
        job.resolve();
      }
    });
    const die = (error: Error) => {
      const index = this.threads.indexOf(thread);
      if (index === -1) return;
      this.threads.splice(index, 1);
      thread.job?.reject(error);
      thread.job = undefined;
      this.dispatch();
    };
    thread.worker.on("error", die);
    thread.worker.on("exit", (code) => die(new Error(`the ${this.entry.name} thread exited (code ${code})`)));
    this.threads.push(thread);
    return thread;
  }

  private finish(thread: Thread): void {
    thread.job = undefined;
    thread.worker.unref();
    this.dispatch();
  }

  /** Ends every thread; jobs still queued or running are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error(`the ${this.entry.name} pool is closed`));
    const threads = this.threads.splice(0);
    for (const thread of threads) thread.job?.reject(new Error(`the ${this.entry.name} pool is closed`));
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }
}

/**
 * Lowers the priority of the calling thread (nice 10) so that on a busy machine the request
 * thread gets the CPU first: a worker's job may take long, a request must not wait. Linux only
 * (a thread's id from /proc/thread-self); elsewhere, and without the right, nothing changes.
 */
function yieldToRequestThread(): void {
  try {
    const tid = Number(path.basename(readlinkSync("/proc/thread-self")));
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.max(getPriority(tid), 10));
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

/** The worker side: answers each job with `handle` (which posts through `post`), errors included. */
export function serveJobs(
  port: { on(event: "message", listener: (message: Record<string, unknown> & { job: number }) => void): void; postMessage(message: unknown, transfer?: Transferable[]): void },
  handle: (message: Record<string, unknown>, post: (message: Record<string, unknown>, last: boolean, transfer?: Transferable[]) => void) => void | Promise<void>,
): void {
  yieldToRequestThread();
  port.on("message", (message) => {
    const post = (body: Record<string, unknown>, last: boolean, transfer: Transferable[] = []) => port.postMessage({ ...body, job: message.job, last }, transfer);
    const fail = (error: unknown) => {
      const e = error as { message?: string; code?: unknown; name?: string; detail?: unknown };
      const code = typeof e?.code === "string" ? e.code : undefined;
      port.postMessage({ job: message.job, last: true, error: { message: String(e?.message ?? error), code, name: e?.name, detail: e?.detail } });
    };
    try {
      const done = handle(message, post);
      if (done) done.catch(fail);
    } catch (error) {
      fail(error);
    }
  });
}
