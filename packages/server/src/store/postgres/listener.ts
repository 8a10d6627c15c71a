/**
 * A LISTEN connection of its own that comes back: lost (a database restart), it reconnects with
 * growing pauses and calls `connected` again, so that its user reads what it missed meanwhile
 * (notifications are only wake-ups; the rows they point at are what counts).
 */
import type pg from "pg";
import type { Logger } from "../../log.js";
import { postgresDriver } from "./driver.js";

const RECONNECT_MIN_MS = 200;
const RECONNECT_MAX_MS = 5_000;

interface ListenerOptions {
  url: string;
  channel: string;
  /** The connection's `application_name` (what `pg_stat_activity` shows). */
  applicationName: string;
  /** Each notification's payload. */
  notified(payload: string): void;
  /** Once listening, at start and after each reconnection. */
  connected(): void;
  log: Logger;
}

export class PostgresListener {
  private client: pg.Client | undefined;
  private closed = false;
  private delay = RECONNECT_MIN_MS;
  /** Resolved once the first LISTEN is in place (or its first attempt failed: it goes on trying). */
  readonly ready: Promise<void>;

  constructor(private readonly options: ListenerOptions) {
    this.ready = this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new (postgresDriver().pg.Client)({ connectionString: this.options.url, application_name: this.options.applicationName });
    this.client = client;
    client.on("notification", (message) => {
      if (message.channel === this.options.channel) this.options.notified(message.payload ?? "");
    });
    const lost = (error?: Error) => {
      client.removeAllListeners("end");
      client.removeAllListeners("error");
      client.on("error", () => undefined);
      if (this.closed || this.client !== client) return;
      this.client = undefined;
      this.options.log.warn({ err: error, channel: this.options.channel }, "the LISTEN connection was lost; reconnecting");
      setTimeout(() => void this.connect(), this.delay).unref();
      this.delay = Math.min(RECONNECT_MAX_MS, this.delay * 2);
    };
    client.on("error", lost);
    client.on("end", () => lost());
    try {
      await client.connect();
      await client.query(`listen ${this.options.channel}`);
    } catch (error) {
      lost(error as Error);
      await client.end().catch(() => undefined);
      return;
    }
    this.delay = RECONNECT_MIN_MS;
    this.options.connected();
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners("end");
      client.removeAllListeners("error");
      client.on("error", () => undefined);
      await client.end().catch(() => undefined);
    }
  }
}
