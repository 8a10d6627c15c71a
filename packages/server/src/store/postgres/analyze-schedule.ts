/**
 * When a store instance refreshes the planner's statistics itself. Right after a large replay,
 * stale statistics (autovacuum's analyze comes later, or never where an operator turned autovacuum
 * off) make PostgreSQL pick a bitmap scan and a sort over the whole conversation instead of walking
 * a (conv, …, ts, seq) index for a page: 7-32 ms instead of 0.1 ms per page at 100k events.
 */
import type pg from "pg";

/**
 * Rows written by an instance before its first ANALYZE. A table never analyzed fares as badly as a
 * stale one: with the first ANALYZE at 20k rows, a 10k-event conversation's deep-cursor page takes
 * 7.0 ms and its 2-character body page 8.5 ms on a server with autovacuum off; at 5k rows, 0.84 and
 * 1.05 ms (an ANALYZE of a small table costs a few ms). The next one waits for at least as many
 * rows as this instance had written by then (5k, 10k, 20k, …: statistics stay within a factor of 2
 * of the rows written): an ANALYZE after every 20k rows runs back to back with a long replay, on the
 * same cores (50 of them during 1M events).
 */
export const ANALYZE_AFTER_ROWS = 5_000;

/** The ANALYZEs of one instance: after n, 2n, 4n … rows written (see ANALYZE_AFTER_ROWS), one at a time, in the background. */
export class AnalyzeSchedule {
  /** ANALYZEs started. */
  started = 0;
  /** The ANALYZE under way, if any. */
  running: Promise<void> | undefined;
  private rowsSinceAnalyze = 0;
  /** Rows written by this instance. */
  private rowsWritten = 0;
  /** Rows since the last ANALYZE that start the next one. */
  private afterRows: number;
  private stopped = false;

  constructor(
    private readonly pool: pg.Pool,
    firstAfterRows = ANALYZE_AFTER_ROWS,
  ) {
    this.afterRows = firstAfterRows;
  }

  /** Counts rows written by this instance. */
  wrote(rows: number): void {
    this.rowsSinceAnalyze += rows;
    this.rowsWritten += rows;
  }

  /** Starts an ANALYZE of the events' tables once enough rows were written since the last, unless one is under way or the schedule stopped. */
  startIfDue(): void {
    if (this.rowsSinceAnalyze < this.afterRows || this.running || this.stopped) return;
    this.rowsSinceAnalyze = 0;
    this.afterRows = Math.max(this.afterRows, this.rowsWritten);
    this.started++;
    this.running = this.pool
      .query("analyze events, message_texts")
      .then(() => undefined, () => undefined) // autovacuum's analyze comes anyway
      .finally(() => (this.running = undefined));
  }

  /** Starts no more ANALYZEs (the store is closing; it waits for `running`). */
  stop(): void {
    this.stopped = true;
  }
}
