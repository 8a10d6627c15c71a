/**
 * Whether the server's file I/O answers. Node runs file system calls on libuv's thread pool (4
 * threads by default); a call that never returns (a blocking open of a FIFO, a hung network file
 * system) holds a thread for ever, and once every thread is held, uploads, downloads and agent runs
 * wait without end while the event loop still answers. /health asks this probe: one `stat` of the
 * data directory on the pool, which must answer within `boundMs`.
 */
import { stat } from "node:fs/promises";

export interface FileIoHealthOptions {
  /** The directory the probe stats (the data directory). */
  dir: string;
  /** How long the probe may take before the file I/O counts as stuck (default 2,000 ms). */
  boundMs?: number;
  /** The probe itself (default: `stat(dir)`); tests pass one that never answers. */
  probe?: (dir: string) => Promise<unknown>;
}

export interface FileIoStuck {
  /** ISO-8601 time the unanswered probe was sent. */
  since: string;
}

export class FileIoHealth {
  private pending: { sent: number; done: Promise<void> } | undefined;
  private readonly boundMs: number;
  private readonly probe: (dir: string) => Promise<unknown>;

  constructor(private readonly options: FileIoHealthOptions) {
    this.boundMs = options.boundMs ?? 2_000;
    this.probe = options.probe ?? stat;
  }

  /**
   * Undefined when a probe answered within the bound, else since when it has not. A probe still
   * out from an earlier call is waited on rather than another queued behind it: a stuck pool is
   * not made worse by health checks.
   */
  async check(): Promise<FileIoStuck | undefined> {
    if (!this.pending) {
      const sent = Date.now();
      const done = this.probe(this.options.dir).then(
        () => {},
        () => {}, // an error is an answer: the pool works
      );
      const pending = { sent, done };
      this.pending = pending;
      void done.then(() => {
        if (this.pending === pending) this.pending = undefined;
      });
    }
    const { sent, done } = this.pending;
    const left = sent + this.boundMs - Date.now();
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      done.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, left)))),
    ]);
    clearTimeout(timer);
    return answered ? undefined : { since: new Date(sent).toISOString() };
  }
}
