/**
 * `appendEventBatch`: events read lazily and sent as JSONL, one request a batch, each body streamed
 * where `fetch` can stream a request body.
 */
import type { paths } from "@acs-toolkit/schema";
import type { Client } from "openapi-fetch";
import type { AppendableEvent, AppendEventBatchOptions, AppendEventBatchResult } from "./client.js";
import { conversationParams, requestInit, type Call } from "./request.js";

/** The reference server's largest batch. */
const MAX_BATCH = 10_000;
/** Lines per chunk of a streamed batch body. */
const LINES_PER_CHUNK = 256;

type Source = Iterator<AppendableEvent> | AsyncIterator<AppendableEvent>;
/** Up to LINES_PER_CHUNK more lines of a batch, or undefined at its end. */
type Chunk = () => Promise<Uint8Array | undefined>;

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

/**
 * Cuts `source` into batches of `size` events: each call resolves with the next batch's `Chunk`,
 * or undefined when no event is left. One event is read ahead, so that no request is sent empty.
 */
function batches(source: Source, size: number): () => Promise<Chunk | undefined> {
  const encoder = new TextEncoder();
  // The event read and not yet sent (undefined: none read).
  let next: IteratorResult<AppendableEvent> | undefined;
  return async () => {
    next ??= await source.next();
    if (next.done) return undefined;
    let taken = 0;
    return async () => {
      let text = "";
      for (let lines = 0; lines < LINES_PER_CHUNK && taken < size; lines++, taken++) {
        next ??= await source.next();
        if (next.done) break;
        text += jsonLine(next.value);
        next = undefined;
      }
      return text === "" ? undefined : encoder.encode(text);
    };
  };
}

/** A batch's request body: a stream read as it is sent, or (where fetch cannot stream) one Blob. */
async function batchBody(chunk: Chunk, stream: boolean): Promise<BodyInit> {
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

/** `AcsClient.appendEventBatch` over `raw` and `call`. */
export async function appendEventBatch(
  raw: Client<paths>,
  call: Call,
  conversationId: string,
  events: Iterable<AppendableEvent> | AsyncIterable<AppendableEvent>,
  options: AppendEventBatchOptions = {},
): Promise<AppendEventBatchResult> {
  const size = options.batchSize ?? MAX_BATCH;
  if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH) throw new RangeError(`appendEventBatch: batchSize must be an integer in 1..${MAX_BATCH}, got ${size}`);
  const source: Source = Symbol.asyncIterator in events ? events[Symbol.asyncIterator]() : events[Symbol.iterator]();
  const stream = canStreamRequests();
  const total: AppendEventBatchResult = { appended: 0, event_count: 0, batches: 0 };
  const nextBatch = batches(source, size);
  let chunk = await nextBatch();
  try {
    while (chunk) {
      const body = await batchBody(chunk, stream);
      const answer = await call("appendEventBatch", options, () =>
        raw.POST("/api/conversations/{conversation_id}/events/batch", {
          params: conversationParams(conversationId),
          body: {} as never, // replaced by the JSONL body
          bodySerializer: () => body,
          ...requestInit(options),
          headers: { ...options.headers, "Content-Type": "application/x-ndjson" },
          ...(stream ? { duplex: "half" } : {}),
        } as never),
      );
      total.appended += answer.appended;
      total.event_count = answer.event_count;
      total.batches++;
      options.onBatch?.(answer);
      chunk = await nextBatch();
    }
  } catch (error) {
    await source.return?.();
    throw error;
  }
  return total;
}
