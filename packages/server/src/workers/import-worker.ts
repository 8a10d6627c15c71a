/**
 * The import thread: parses and validates a large `POST /api/conversations` body (JSON.parse of
 * tens of MB, then every replayed event against the spec) and turns the events into rows, off the
 * request thread. It posts the request without its replay, then the rows in chunks that the request
 * thread writes one transaction each (conversation-service.ts, createFromJson).
 */
import { parentPort, type MessagePort } from "node:worker_threads";
import type { ConversationCreateRequest, ValidationError } from "@acs-toolkit/schema";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { trajectoryEntries } from "@acs-toolkit/validator";
import { checkReplayEntry, MAX_REPLAY_ERRORS } from "../core/conversations.js";
import { decodeJsonBody, parseJsonText } from "../json/body.js";
import { RequestValidationError, RequestValidators } from "../validation/request-validators.js";
import { prepareEvent, type PreparedEvent } from "../store/prepare.js";
import { EventBatchParser } from "../core/event-batch.js";
import { encodeRows, transferableChunks } from "../store/row-batch.js";
import { serveJobs } from "../threads/pool.js";

/**
 * Rows per chunk, and bytes of event JSON per chunk. The request thread deserializes each chunk it
 * receives in one task (and, with an import writer, serializes it again for that thread): a chunk
 * of 1,000 rows / 1 MB took 10–30 ms of it at 1M events, a quarter of that keeps each under 8 ms.
 */
const CHUNK_ROWS = 250;
const CHUNK_BYTES = 256 * 1024;

const validators = new RequestValidators(openapiDocument);

/**
 * Row chunks posted and not yet written by the request thread, at most. Rows the parser posts
 * ahead of the writes wait on the request thread's heap: a whole 65 MB replay there was promoted to
 * the old generation and collected in pauses of 150–180 ms at 1M events (past the 50 ms event-loop
 * budget).
 */
const MAX_CHUNKS_AHEAD = 8;

/**
 * The job's port from the request thread: the body's chunks, then `{ end }`; and, while rows are
 * posted, `{ written: n }` as the request thread writes them. Closed by the request thread when it
 * gives up on the job (a failed write): waiting for credit then fails.
 */
class ImportPort {
  private readonly chunks: Uint8Array[] = [];
  private body: ((body: Buffer | undefined) => void) | undefined;
  /** receiveChunks's consumer: each chunk as it comes, then whether the body ended whole. */
  private stream: { chunk: (chunk: Uint8Array) => void; end: (whole: boolean) => void } | undefined;
  private credit = MAX_CHUNKS_AHEAD;
  private waiting: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private closed = false;

  constructor(private readonly port: MessagePort) {
    port.on("message", (message: Uint8Array | { end: true; aborted?: true } | { written: number }) => {
      if (message instanceof Uint8Array) return void (this.stream ? this.stream.chunk(message) : this.chunks.push(message));
      if ("written" in message) {
        this.credit += message.written;
        this.waiting?.resolve();
        this.waiting = undefined;
        return;
      }
      if (this.stream) return this.stream.end(!message.aborted);
      this.body?.(message.aborted ? undefined : Buffer.concat(this.chunks));
      this.chunks.length = 0;
    });
    port.on("close", () => {
      this.closed = true;
      this.waiting?.reject(new Error("the request thread gave up on this import"));
      this.waiting = undefined;
    });
  }

  /** The whole body (`undefined` when the request gave up on it). */
  receiveBody(): Promise<Buffer | undefined> {
    return new Promise((resolve) => (this.body = resolve));
  }

  /**
   * Hands each chunk of the body to `chunk` as it arrives (none is kept here); resolves true at
   * the end of the body, false when the request gave up on it.
   */
  receiveChunks(chunk: (chunk: Uint8Array) => void): Promise<boolean> {
    return new Promise((resolve) => (this.stream = { chunk, end: resolve }));
  }

  /** Resolves when one more chunk of rows may be posted. */
  async takeCredit(): Promise<void> {
    while (this.credit === 0) {
      if (this.closed) throw new Error("the request thread gave up on this import");
      await new Promise<void>((resolve, reject) => (this.waiting = { resolve, reject }));
    }
    this.credit--;
  }

  close(): void {
    this.port.close();
  }
}

/**
 * An event batch (`POST …/events/batch`): JSONL parsed and validated as it arrives (core/event-batch.ts),
 * its rows posted encoded, each chunk of them as soon as it is made (`{ chunk }`, so that the store
 * can begin writing while the last lines are parsed), the rest and the line numbers at the end
 * (`{ batch, lines }`). A line found bad after some chunks were posted fails the job all the same:
 * nothing of the batch is committed (ConversationService.appendBatch).
 */
async function parseBatch(port: ImportPort, post: (message: Record<string, unknown>, last: boolean, transfer?: ArrayBuffer[]) => void): Promise<void> {
  const parser = new EventBatchParser(encodeRows, (chunk) => post({ chunk }, false, transferableChunks({ count: 0, chunks: [chunk] })));
  let failure: unknown;
  const whole = await port.receiveChunks((chunk) => {
    if (failure !== undefined) return;
    try {
      parser.push(chunk);
    } catch (error) {
      failure = error;
    }
  });
  if (failure !== undefined) throw failure;
  if (!whole) return post({}, true);
  const parsed = parser.end();
  if ("problems" in parsed) throw new RequestValidationError(parsed.problems);
  post({ ...parsed }, true, transferableChunks(parsed.batch));
}

serveJobs(parentPort!, async (message, post) => {
  const port = new ImportPort(message.body as MessagePort);
  if (message.op === "batch") {
    try {
      return await parseBatch(port, post);
    } finally {
      port.close();
    }
  }
  try {
    // The body's bytes, then its text, each dropped once the next form exists: at most two forms
    // of the whole body at a time (the text and the parsed request, while JSON.parse runs), then
    // one (the replay_json string); its events are read, checked and turned into rows one at a
    // time, never all at once (parseReplay's array of every event and its JSON text was two more).
    let body = await port.receiveBody();
    if (body === undefined) return post({}, true);
    let text: string | undefined = decodeJsonBody(body);
    body = undefined;
    const value = parseJsonText(text);
    text = undefined;
    validators.body("createConversation", value);
    const request = value as ConversationCreateRequest;
    const replay = request.replay_json ?? "";
    request.replay_json = null;
    // Posted with the first rows (the request thread then begins the staged import) or at the end:
    // a replay refused within its first chunk leaves nothing to discard.
    let begun = false;
    const errors: ValidationError[] = [];
    const seen = new Map<string, number>();
    let rows: PreparedEvent[] = [];
    let bytes = 0;
    const send = async (last: boolean) => {
      if (!begun) post({ request }, last && rows.length === 0);
      else if (rows.length === 0 && last) post({}, true);
      begun = true;
      if (rows.length === 0) return;
      await port.takeCredit();
      post({ rows }, last);
      rows = [];
      bytes = 0;
    };
    let index = 0;
    for (const entry of trajectoryEntries(replay)) {
      const checked = checkReplayEntry(entry, index);
      if (Array.isArray(checked)) errors.push(...checked);
      else if (seen.has(checked.event.id)) {
        errors.push({ loc: ["body", "replay_json", index, "id"], msg: `event id ${checked.event.id} appears twice in the trajectory`, type: "value_error" });
      } else {
        seen.set(checked.event.id, index);
        // After a problem nothing will be stored: the rest is only checked.
        if (errors.length === 0) {
          rows.push(prepareEvent(checked, index, true));
          bytes += checked.json.length;
          if (rows.length >= CHUNK_ROWS || bytes >= CHUNK_BYTES) await send(false);
        }
      }
      if (errors.length >= MAX_REPLAY_ERRORS) break;
      index++;
    }
    if (errors.length > 0) throw new RequestValidationError(errors.slice(0, MAX_REPLAY_ERRORS));
    await send(true);
  } finally {
    port.close();
  }
});
