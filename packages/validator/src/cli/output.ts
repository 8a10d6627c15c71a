/** Buffered output that respects back-pressure, and the progress line on standard error. */
import type { Writable } from "node:stream";
import { describeSize } from "./json-scanner.js";
import { sanitize } from "./model.js";

/** A stream the command writes to; `isTTY` and `columns` as on process.stdout. */
export type OutputStream = Writable & { isTTY?: boolean; columns?: number };

/**
 * Collects small writes into 64 kB ones. When the stream's buffer is full, `drain()` gives the
 * promise to wait on, so that a run with millions of issues does not hold them all in memory.
 * A closed pipe (`acs-validate … | head`) ends the run quietly.
 */
export class Output {
  private buffer = "";
  private full = false;
  /** Set when the stream failed (EPIPE): nothing more is written. */
  broken = false;

  constructor(
    private readonly stream: OutputStream,
    private readonly beforeWrite?: () => void,
  ) {
    stream.on("error", () => {
      this.broken = true;
    });
  }

  write(text: string): void {
    this.buffer += text;
    if (this.buffer.length >= 65_536) this.flush();
  }

  flush(): void {
    if (this.buffer === "" || this.broken) {
      this.buffer = "";
      return;
    }
    this.beforeWrite?.();
    if (!this.stream.write(this.buffer)) this.full = true;
    this.buffer = "";
  }

  /** Undefined when writing may go on, else a promise resolved once the stream drained. */
  drain(): Promise<void> | undefined {
    if (!this.full || this.broken) return undefined;
    return new Promise((resolve) => {
      const done = () => {
        this.full = false;
        this.stream.off("drain", done);
        this.stream.off("close", done);
        this.stream.off("error", done);
        resolve();
      };
      this.stream.on("drain", done);
      this.stream.on("close", done);
      this.stream.on("error", done);
    });
  }

  async end(): Promise<void> {
    this.flush();
    await this.drain();
  }
}

/** Inputs smaller than this get no progress line: they are read before anyone would look at it. */
const PROGRESS_THRESHOLD_BYTES = 8 * 1024 * 1024;
const REDRAW_MS = 100;

/**
 * One line on standard error, redrawn at most ten times a second:
 * `big.jsonl  [#######.............]  35%  362 MB / 1.0 GB  210 MB/s  401,220 events`.
 * Only on a terminal, never in CI, never for small inputs; cleared before other output.
 */
export class Progress {
  private label = "";
  private total: number | undefined;
  private bytes = 0;
  private started = 0;
  private lastDraw = 0;
  private shown = false;

  constructor(
    private readonly stream: OutputStream,
    private readonly enabled: boolean,
    private readonly events: () => number,
    /** When to draw: inputs of at least `minBytes`, at most once every `everyMs` (tests lower both). */
    private readonly pace: { minBytes: number; everyMs: number } = { minBytes: PROGRESS_THRESHOLD_BYTES, everyMs: REDRAW_MS },
  ) {}

  begin(label: string, total: number | undefined): void {
    this.label = sanitize(label);
    this.total = total;
    this.bytes = 0;
    this.started = performance.now();
    this.lastDraw = this.started;
  }

  advance(bytes: number): void {
    this.bytes += bytes;
    if (!this.enabled) return;
    const now = performance.now();
    if (now - this.lastDraw < this.pace.everyMs) return;
    if ((this.total ?? this.bytes) < this.pace.minBytes) return;
    this.lastDraw = now;
    this.draw(now);
  }

  /** Removes the line (before other output, and at the end of each input). */
  clear(): void {
    if (!this.shown) return;
    this.stream.write("\r\x1b[2K");
    this.shown = false;
  }

  private draw(now: number): void {
    const seconds = (now - this.started) / 1000;
    const rate = seconds > 0 ? `${describeSize(this.bytes / seconds)}/s` : "";
    const events = `${this.events().toLocaleString("en-US")} events`;
    let line: string;
    if (this.total !== undefined && this.total > 0) {
      const ratio = Math.min(1, this.bytes / this.total);
      const width = 20;
      const filled = Math.round(ratio * width);
      line = `${this.label}  [${"#".repeat(filled)}${".".repeat(width - filled)}]  ${String(Math.floor(ratio * 100)).padStart(3)}%  ${describeSize(this.bytes)} / ${describeSize(this.total)}  ${rate}  ${events}`;
    } else {
      line = `${this.label}  ${describeSize(this.bytes)}  ${rate}  ${events}`;
    }
    const columns = this.stream.columns ?? 100;
    if (line.length > columns - 1) line = `…${line.slice(line.length - (columns - 2))}`;
    this.stream.write(`\r\x1b[2K${line}`);
    this.shown = true;
  }
}
