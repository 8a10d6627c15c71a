/**
 * Binary COPY (`COPY … FROM STDIN (FORMAT binary)`): the rows' encoding, and one statement that
 * sends them in chunks while the next is encoded.
 */
import { once } from "node:events";
import { finished } from "node:stream/promises";
import type { Writable } from "node:stream";
import type pg from "pg";
import { postgresDriver } from "./driver.js";

const COPY_SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");

/** Rows per chunk of a COPY's data (CopyStatement): the server parses and inserts one while the next is encoded. */
const COPY_CHUNK_ROWS = 500;

/**
 * Writes the rows of a binary COPY into a buffer that grows as needed: per row its field count, then
 * each field's byte length and bytes (int8 big-endian, text as UTF-8, -1 for a null).
 */
class CopyRowWriter {
  /** Allocated when first written to (a chunk's buffer is handed on by take). */
  private buffer = Buffer.alloc(0);
  private at = 0;
  constructor(private readonly size = 1 << 20) {}
  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.size, 2 * this.buffer.length, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }
  /** The header of a row of `fields` fields. */
  row(fields: number): void {
    this.room(2);
    this.at = this.buffer.writeInt16BE(fields, this.at);
  }
  /** An int8 field (a safe integer, negative or not). */
  int8(n: number): void {
    this.room(12);
    const b = this.buffer;
    this.at = b.writeInt32BE(8, this.at);
    const hi = Math.floor(n / 4294967296);
    this.at = b.writeInt32BE(hi, this.at);
    this.at = b.writeUInt32BE(n - hi * 4294967296, this.at);
  }
  /** A text field, as UTF-8; null: a NULL. */
  text(value: string | null): void {
    if (value === null) {
      this.room(4);
      this.at = this.buffer.writeInt32BE(-1, this.at);
      return;
    }
    this.room(4 + value.length * 3); // ≤ 3 bytes per UTF-16 unit
    const n = this.buffer.write(value, this.at + 4, "utf8");
    this.buffer.writeInt32BE(n, this.at);
    this.at += 4 + n;
  }
  /** Raw bytes (the COPY's header and trailer). */
  bytes(value: Buffer): void {
    this.room(value.length);
    this.at += value.copy(this.buffer, this.at);
  }
  /** What was written since the last take, in a buffer of its own. */
  take(): Buffer {
    const out = this.buffer.subarray(0, this.at);
    this.buffer = Buffer.alloc(0);
    this.at = 0;
    return out;
  }
}

const COPY_HEADER = Buffer.concat([COPY_SIGNATURE, Buffer.alloc(8)]); // flags 0, header extension length 0
const COPY_TRAILER = Buffer.from([0xff, 0xff]); // a field count of -1

/**
 * One `COPY … FROM STDIN (FORMAT binary)` on `tx`: rows written through `writer` (the header
 * first), sent to the server every COPY_CHUNK_ROWS rows (`wrote`), so that it parses and inserts a
 * chunk while the next is encoded; then the trailer (-1) at `end`.
 */
export class CopyStatement {
  readonly writer = new CopyRowWriter();
  /** Rows written. */
  rows = 0;
  private readonly stream: Writable;
  private readonly done: Promise<void>;
  constructor(tx: pg.PoolClient, into: string) {
    this.stream = tx.query(postgresDriver().copyFrom(`copy ${into} from stdin with (format binary)`));
    this.done = finished(this.stream);
    this.done.catch(() => undefined); // awaited by end or cancel; until then, a failure waits there
    this.writer.bytes(COPY_HEADER);
  }

  /** After each row written: a full chunk is sent, and the Promise (else none: no await per row) waits while the connection's buffer is full. */
  wrote(): Promise<void> | undefined {
    return ++this.rows % COPY_CHUNK_ROWS === 0 ? this.send() : undefined;
  }

  /** Sends the rest and the trailer. @throws what the server answers the COPY */
  async end(): Promise<void> {
    this.writer.bytes(COPY_TRAILER);
    this.stream.end(this.writer.take());
    await this.done;
  }

  /** Fails the COPY (CopyFail: the server rolls it back, and the connection can roll the transaction back). */
  async cancel(reason: Error): Promise<void> {
    this.stream.destroy(reason);
    await this.done.catch(() => undefined);
  }

  private async send(): Promise<void> {
    if (!this.stream.write(this.writer.take()) && !this.stream.destroyed) await Promise.race([once(this.stream, "drain"), this.done]);
  }
}
