import type { MessageEvent } from "@acs-toolkit/schema";

interface HeldMessage {
  /** The event, made when it is recorded (so that its timestamp is in order), or recorded already by the host. */
  event: () => MessageEvent;
  /** False when the host recorded it already. */
  record: boolean;
  done(event?: MessageEvent, error?: unknown): void;
}

/** User messages that arrive while a step runs, held until the step ends so that its events come first. */
export class HeldMessages {
  private held: HeldMessage[] = [];

  /** Holds a message; settles as its {@link release} does. */
  hold(event: () => MessageEvent, record: boolean): Promise<MessageEvent> {
    return new Promise<MessageEvent>((resolve, reject) =>
      this.held.push({ event, record, done: (recorded, error) => (error || !recorded ? reject(error) : resolve(recorded)) }),
    );
  }

  /**
   * Hands the held messages to `take` in order. A failure rejects that message's sender and is
   * thrown; the messages held after it are dropped, their senders never answered.
   */
  async release(take: (event: MessageEvent, record: boolean) => Promise<MessageEvent>): Promise<void> {
    for (const held of this.held.splice(0)) {
      try {
        held.done(await take(held.event(), held.record));
      } catch (error) {
        held.done(undefined, error);
        throw error;
      }
    }
  }

  /** Rejects every held message with the error `errorOf` makes. */
  refuse(errorOf: () => Error): void {
    for (const held of this.held.splice(0)) held.done(undefined, errorOf());
  }
}
