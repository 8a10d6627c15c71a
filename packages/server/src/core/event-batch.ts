/**
 * An event batch (`POST /api/conversations/{id}/events/batch`) as it is parsed, on the server's
 * import thread or, where there are no threads, in the caller's: JSONL bytes in, chunk by chunk as
 * they arrive (a line may span chunks; the complete lines of a chunk are decoded together, never
 * the whole body), each line decoded, parsed, checked for depth, validated against the spec's Event
 * and turned into a row; the rows kept in chunks, encoded by the caller's `encode` (the server's
 * `v8` row encoding, to cross threads), until the body ends, or handed on a chunk at a time as they
 * are made. The first problem stops the rows (nothing of the batch will be stored) but not the
 * checking: up to MAX_ERRORS problems are reported, each at `["body", <line>, ...path]`.
 */
import type { Event, ValidationError } from "@acs-toolkit/schema";
import { validateEvent } from "@acs-toolkit/validator";
import { findTooDeep, tooDeepError } from "../json/depth.js";
import { prepareEvent, type PreparedEvent } from "../store/prepare.js";
import type { DuplicateEventIdError } from "../store/types.js";
import { HttpError, RequestValidationError, toValidationError } from "./errors.js";

/** Events per batch at most (its one transaction holds the store's other writes meanwhile). */
const MAX_BATCH_EVENTS = 10_000;
/** Problems listed at most: enough to act on. */
const MAX_ERRORS = 50;
/** Rows per encoded chunk. */
const ROWS_PER_CHUNK = 1_000;

const NEWLINE = 0x0a;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** More lines than a batch holds: the request is answered 413, nothing stored. */
export class BatchTooLargeError extends Error {
  override readonly name = "BatchTooLargeError";
  constructor() {
    super(`Payload Too Large: a batch holds at most ${MAX_BATCH_EVENTS} events; nothing of this request was stored. Send the rest in another request.`);
  }
}

interface ParsedBatch<Chunk> {
  /** The rows (all of them; with `onChunk`, those not handed to it) and `count`, all of them. */
  batch: { count: number; chunks: Chunk[] };
  /** The line number (from 1) of each row, in order. */
  lines: Int32Array;
}

/** Parses one batch; `Chunk` is how a chunk of rows is kept (see `encode`). */
export class EventBatchParser<Chunk> {
  private line = 0;
  private count = 0;
  private readonly errors: ValidationError[] = [];
  private tooLarge = false;
  private pending: Uint8Array[] = [];
  private rows: PreparedEvent[] = [];
  private readonly chunks: Chunk[] = [];
  private readonly lines: number[] = [];
  /** Each id of the batch, and its line. */
  private readonly ids = new Map<string, number>();

  /**
   * @param encode turns up to ROWS_PER_CHUNK rows into one chunk (the rows themselves where they
   *   stay in this thread).
   * @param onChunk takes each full chunk of encoded rows as soon as it is made (then `end` gives
   *   only the rest): the store may write them while later lines are parsed. Without it, `end`
   *   gives every chunk.
   */
  constructor(
    private readonly encode: (rows: PreparedEvent[]) => Chunk,
    private readonly onChunk?: (chunk: Chunk) => void,
  ) {}

  /** The next bytes of the body. */
  push(chunk: Uint8Array): void {
    const last = chunk.lastIndexOf(NEWLINE);
    if (last < 0) {
      this.pending.push(chunk);
      return;
    }
    // Every complete line in one decode (a newline byte is never inside a UTF-8 sequence), then
    // split as a string: one decode per chunk instead of one per line.
    let region = chunk.subarray(0, last);
    if (this.pending.length > 0) {
      region = concatBytes([...this.pending, region]);
      this.pending = [];
    }
    let text: string | undefined;
    try {
      text = utf8.decode(region);
    } catch {
      text = undefined; // found line by line below
    }
    if (text !== undefined) for (const line of text.split("\n")) this.take(line);
    else for (const bytes of splitLines(region)) this.take(bytes);
    if (last + 1 < chunk.length) this.pending.push(chunk.subarray(last + 1));
  }

  /**
   * The body ended: the batch's rows.
   * @throws BatchTooLargeError, RequestValidationError-shaped `errors` (see `problems`)
   */
  end(): ParsedBatch<Chunk> | { problems: ValidationError[] } {
    if (this.pending.length > 0) this.take(this.pending.length === 1 ? this.pending[0]! : concatBytes(this.pending));
    this.pending = [];
    if (this.tooLarge) throw new BatchTooLargeError();
    if (this.errors.length > 0) return { problems: this.errors };
    if (this.rows.length > 0) this.chunks.push(this.encode(this.rows));
    this.rows = [];
    return { batch: { count: this.count, chunks: this.chunks }, lines: Int32Array.from(this.lines) };
  }

  private fail(error: ValidationError): void {
    if (this.errors.length < MAX_ERRORS) this.errors.push(error);
  }

  /** One line, decoded (or its bytes when they are not UTF-8), without its newline. */
  private take(raw: string | Uint8Array): void {
    const line = ++this.line;
    if (this.tooLarge || this.errors.length >= MAX_ERRORS) return; // the answer is known
    let decoded = raw;
    if (typeof decoded !== "string") {
      try {
        decoded = utf8.decode(decoded);
      } catch {
        return this.fail({ loc: ["body", line], msg: `line ${line} is not valid UTF-8`, type: "json_invalid" });
      }
    }
    // The event's JSON text is stored as sent (without the line's surrounding whitespace): no
    // JSON.stringify of every event (a quarter of the per-line cost); JSON.parse of the stored
    // text gives exactly the value validated here.
    const text = decoded.trim();
    if (text === "") return; // a blank line (the last newline's, say)
    if (++this.count > MAX_BATCH_EVENTS) {
      this.tooLarge = true;
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return this.fail({ loc: ["body", line], msg: `line ${line} is not valid JSON: ${(error as Error).message}`, type: "json_invalid" });
    }
    const deep = findTooDeep(value);
    if (deep) return this.fail(tooDeepError(["body", line], deep));
    const result = validateEvent(value);
    if (!result.ok) {
      for (const issue of result.errors) this.fail(toValidationError("body", [line], issue));
      return;
    }
    const event = value as Event;
    const first = this.ids.get(event.id);
    if (first !== undefined) {
      return this.fail({ loc: ["body", line, "id"], msg: `event id ${event.id} appears twice in the batch (first on line ${first})`, type: "value_error" });
    }
    this.ids.set(event.id, line);
    if (this.errors.length > 0) return; // nothing will be stored: no rows
    let row: PreparedEvent;
    try {
      row = prepareEvent({ event, json: text }, this.count - 1, true);
    } catch (error) {
      return this.fail({ loc: ["body", line, "timestamp"], msg: (error as Error).message, type: "value_error" });
    }
    this.rows.push(row);
    this.lines.push(line);
    if (this.rows.length >= ROWS_PER_CHUNK) {
      const chunk = this.encode(this.rows);
      this.rows = [];
      if (this.onChunk) this.onChunk(chunk);
      else this.chunks.push(chunk);
    }
  }
}

/** The lines of `bytes` (split at each newline byte), as bytes. */
function* splitLines(bytes: Uint8Array): Generator<Uint8Array> {
  let start = 0;
  for (let nl = bytes.indexOf(NEWLINE); nl >= 0; nl = bytes.indexOf(NEWLINE, start)) {
    yield bytes.subarray(start, nl);
    start = nl + 1;
  }
  yield bytes.subarray(start);
}

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.length;
  }
  return whole;
}

/** A batch's event whose id the conversation already holds, as the 422 of its line. */
export function duplicateIdProblem(error: DuplicateEventIdError, lines: ArrayLike<number>): RequestValidationError {
  const line = lines[error.index] ?? error.index + 1;
  return new RequestValidationError([{ loc: ["body", line, "id"], msg: `event id ${error.eventId} is already in this conversation (line ${line}); nothing of this batch was stored`, type: "value_error" }]);
}

/** A batch over MAX_BATCH_EVENTS as its answer. */
export function batchTooLarge(error: BatchTooLargeError | { message: string }): HttpError {
  return new HttpError(413, error.message);
}
