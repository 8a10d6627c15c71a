/** A batch's rows written by binary COPY in the transaction that holds their conversation's row. */
import type pg from "pg";
import { searchTextOf, type PreparedEvent } from "../prepare.js";
import { ONE_STATEMENT_ROWS } from "./append-sql.js";
import { RowTally } from "./batch-rows.js";
import { CopyStatement } from "./copy-encoding.js";

/** The trigram index's pending list bound within a COPY's transaction, kB, which empties the list at its end (migration 8). */
const COPY_GIN_PENDING_LIST_KB = 4096;

/**
 * A batch's rows written by binary COPY, inside the transaction of `tx`, as they come (insertRows;
 * an event batch as the import thread parses it, streamBatch): the events in COPY statements of at
 * most ONE_STATEMENT_ROWS rows (each within the statement timeout); then, at `end`, the messages'
 * searchable texts, gathered meanwhile, with what the rows add to the conversation.
 */
export class BatchCopy {
  /** What the rows add to the conversation's counters and time order. */
  readonly tally = new RowTally();
  /** The rows' ids, in order. */
  readonly ids: string[] = [];
  private readonly texts: Array<{ seq: number; ts: number; source: string; body: string }> = [];
  private statement: CopyStatement | undefined;
  private constructor(
    private readonly tx: pg.PoolClient,
    private readonly conv: number,
    /** The seq of the next row. */
    private next: number,
    private readonly ownsBodyIndex: boolean,
  ) {}

  static async begin(tx: pg.PoolClient, conv: number, firstSeq: number, ownsBodyIndex: boolean): Promise<BatchCopy> {
    // The trigram index's new entries gather in a pending list of up to 4 MB for this transaction,
    // moved into the index at once at `end` (migration 8), so that searches read 128 kB at most.
    // Only the index's owner may empty the list (a role that does not keeps the 128 kB flushes).
    if (ownsBodyIndex) await tx.query(`set local gin_pending_list_limit = ${COPY_GIN_PENDING_LIST_KB}`);
    return new BatchCopy(tx, conv, firstSeq, ownsBodyIndex);
  }

  /** Writes `rows` after those before. @throws what the server answers the COPY */
  async add(rows: readonly PreparedEvent[]): Promise<void> {
    this.tally.add(rows);
    for (const r of rows) {
      if (this.statement?.rows === ONE_STATEMENT_ROWS) await this.endStatement();
      const statement = (this.statement ??= new CopyStatement(this.tx, "events (conv, seq, ts, id, kind, source, json)"));
      const seq = this.next++;
      const w = statement.writer;
      w.row(7);
      w.int8(this.conv);
      w.int8(seq);
      w.int8(r.ts);
      w.text(r.id);
      w.text(r.kind);
      w.text(r.source);
      w.text(r.json);
      this.ids.push(r.id);
      const body = searchTextOf(r);
      if (body !== null) this.texts.push({ seq, ts: r.ts, source: r.source, body });
      const sent = statement.wrote();
      if (sent) await sent;
    }
  }

  /** Ends the events' COPY, then writes the messages' texts (a few percent of the rows) and moves their trigrams into the index. */
  async end(): Promise<void> {
    if (this.statement) await this.endStatement();
    if (this.texts.length === 0) return;
    const statement = (this.statement = new CopyStatement(this.tx, "message_texts (conv, seq, ts, source, body)"));
    for (const m of this.texts) {
      const w = statement.writer;
      w.row(5);
      w.int8(this.conv);
      w.int8(m.seq);
      w.int8(m.ts);
      w.text(m.source);
      w.text(m.body);
      const sent = statement.wrote();
      if (sent) await sent;
    }
    await this.endStatement();
    if (this.ownsBodyIndex) await this.tx.query("select gin_clean_pending_list('message_texts_body'::regclass)");
  }

  /** Fails the COPY under way, if any. */
  async cancel(reason: Error): Promise<void> {
    const statement = this.statement;
    this.statement = undefined;
    await statement?.cancel(reason);
  }

  private async endStatement(): Promise<void> {
    const statement = this.statement!;
    this.statement = undefined;
    await statement.end();
  }
}
