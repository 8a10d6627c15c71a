/**
 * Time and identity of recorded events: the runtime's two sources of non-determinism, passed in so
 * that tests and replays can fix them.
 */
import { randomUUID } from "node:crypto";

/** Where the runtime reads the time. */
export interface Clock {
  /** The current time. */
  now(): Date;
}

/** Where the runtime takes event ids (UUID v4 by default, as OpenHands does). */
export type IdGenerator = () => string;

export const systemClock: Clock = { now: () => new Date() };
export const uuidIds: IdGenerator = () => randomUUID();

/**
 * Timestamps as OpenHands records them: ISO-8601 with microseconds and no zone offset (this package
 * writes UTC, like the reference server of this toolkit), never earlier than the previous one it
 * gave, so that a trajectory's time never goes backwards even if the wall clock does.
 */
export class EventTimestamps {
  private lastMillis = -Infinity;

  constructor(private readonly clock: Clock) {}

  next(): string {
    const millis = Math.max(this.clock.now().getTime(), this.lastMillis);
    this.lastMillis = millis;
    return new Date(millis).toISOString().replace("Z", "").replace(/\.(\d{3})$/, ".$1000");
  }
}
