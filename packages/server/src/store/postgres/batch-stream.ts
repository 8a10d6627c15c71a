/** What hands a streamed batch's chunks (PostgresEventStore.streamBatch) from the request thread to its transaction. */

/** A queue whose reader waits for the next item (a streamed batch's chunks, as the request thread gets them). */
export class Inbox<T> {
  private readonly items: T[] = [];
  private waiting: ((item: T) => void) | undefined;
  push(item: T): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting(item);
    else this.items.push(item);
  }
  next(): Promise<T> {
    if (this.items.length > 0) return Promise.resolve(this.items.shift()!);
    return new Promise((resolve) => (this.waiting = resolve));
  }
}

/** A streamed batch's abort (BatchStream.abort): its transaction rolls back. */
export class BatchAbortedError extends Error {
  override readonly name = "BatchAbortedError";
  constructor() {
    super("the event batch was aborted");
  }
}
