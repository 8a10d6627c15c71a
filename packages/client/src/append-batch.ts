/**
 * The request bodies of `appendEventBatch`: events read lazily and sent as JSONL, one request per
 * batch, each body streamed as it is produced where `fetch` can stream a request body.
 */
import type { AppendableEvent, AppendEventBatchOptions, AppendEventBatchResult } from "./client.js";
import type { OperationResult } from "./types.js";

/** The reference server's largest batch. */
const MAX_BATCH = 10_000;
/** Lines per chunk of a streamed batch body. */
const LINES_PER_CHUNK = 256;

/** Sends one batch's body; `streamed` says it is a ReadableStream (the request needs `duplex`). */
type SendBatch = (body: BodyInit, streamed: boolean) => Promise<OperationResult<"appendEventBatch">>;

/**
 * Appends `events` batch by batch through `send`, as `appendEventBatch` documents: resolves with the
 * totals, rejects with the first failed batch's error (the batches before it stay stored).
 */
export async function appendInBatches(
  events: Iterable<AppendableEvent> | AsyncIterable<AppendableEvent>,
  options: AppendEventBatchOptions,
  send: SendBatch,
): Promise<AppendEventBatchResult> {
  const size = options.batchSize ?? MAX_BATCH;
  if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH) throw new RangeError(`appendEventBatch: batchSize must be an integer in 1..${MAX_BATCH}, got ${size}`);
  const source: Iterator<AppendableEvent> | AsyncIterator<AppendableEvent> = Symbol.asyncIterator in events ? events[Symbol.asyncIterator]() : events[Symbol.iterator]();
  const lines = new JsonlSource(source, size);
  const stream = canStreamRequests();
  const total: AppendEventBatchResult = { appended: 0, event_count: 0, batches: 0 };
  // Read ahead of each batch, so that no request is sent empty.
  await lines.hasMore();
  try {
    while (await lines.hasMore()) {
      const answer = await send(await batchBody(lines.nextBatch(), stream), stream);
      total.appended += answer.appended;
      total.event_count = answer.event_count;
      total.batches++;
      options.onBatch?.(answer);
    }
  } catch (error) {
    await source.return?.();
    throw error;
  }
  return total;
}

/** Gives up to LINES_PER_CHUNK more lines of one batch, or undefined at its end. */
type NextChunk = () => Promise<Uint8Array | undefined>;

/** The events of one `appendEventBatch` call as JSONL, read from `source` one chunk at a time. */
class JsonlSource {
  /** The event read and not yet sent (undefined: none read). */
  private next: IteratorResult<AppendableEvent> | undefined;
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly source: Iterator<AppendableEvent> | AsyncIterator<AppendableEvent>,
    private readonly batchSize: number,
  ) {}

  /** Whether an event is left to send; reads it ahead when none is waiting. */
  async hasMore(): Promise<boolean> {
    this.next ??= await this.source.next();
    return !this.next.done;
  }

  /** The chunks of the next batch, up to `batchSize` events. */
  nextBatch(): NextChunk {
    let taken = 0;
    return async () => {
      let text = "";
      for (let lines = 0; lines < LINES_PER_CHUNK && taken < this.batchSize; lines++, taken++) {
        this.next ??= await this.source.next();
        if (this.next.done) break;
        text += jsonLine(this.next.value);
        this.next = undefined;
      }
      return text === "" ? undefined : this.encoder.encode(text);
    };
  }
}

/** One batch's request body: a stream pulled chunk by chunk, or all its chunks in one Blob. */
async function batchBody(chunk: NextChunk, stream: boolean): Promise<BodyInit> {
  if (stream) {
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const bytes = await chunk();
          if (bytes) controller.enqueue(bytes);
          else controller.close();
        } catch (error) {
          controller.error(error);
        }
      },
    });
  }
  const parts: Uint8Array[] = [];
  for (let bytes = await chunk(); bytes; bytes = await chunk()) parts.push(bytes);
  return new Blob(parts as BlobPart[]);
}

/** Whether `fetch` can send a ReadableStream body here (Node, Chromium over HTTP/2): the standard test. */
function canStreamRequests(): boolean {
  try {
    let duplex = false;
    const init = { method: "POST", body: new ReadableStream(), get duplex() { duplex = true; return "half"; } };
    const typed = new Request("http://x/", init as RequestInit).headers.has("Content-Type");
    return duplex && !typed;
  } catch {
    return false;
  }
}

/** An event as one JSONL line (with its newline). */
function jsonLine(event: AppendableEvent): string {
  const text = typeof event === "string" ? event : JSON.stringify(event);
  if (text.includes("\n")) throw new TypeError("appendEventBatch: an event's JSON text must be one line");
  return text + "\n";
}
