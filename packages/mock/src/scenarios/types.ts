import type { ConversationLifecycleStatus, Event } from "@acs-toolkit/schema";

/** A conversation the mock serves: its events, and how many of them exist before streaming starts. */
export interface Scenario {
  /** Short name, used on the command line (`--scenario happy`). */
  name: string;
  /** One sentence for the start-up banner and `GET /__mock`. */
  description: string;
  /** The conversation's id (canonical lower-case UUID), stable for a given seed. */
  conversationId: string;
  /** Every event, in append order, timestamps never going backwards for built-ins. */
  events: Event[];
  /**
   * How many of `events` are stored when the conversation is created (its history); the rest are
   * streamed with pacing once a client subscribes. With `--speed instant` everything is stored.
   */
  preload: number;
  /** The conversation's status once every event is recorded (default RUNNING). */
  finalStatus?: ConversationLifecycleStatus;
  /** `built-in`, or the file it was loaded from. */
  origin: string;
}

export interface ScenarioOptions {
  /** Seed of ids, texts and timings. */
  seed: number;
  /** Time of the first event, milliseconds since the epoch. */
  start: number;
}
