/**
 * Live events across server instances on one PostgreSQL database: each append notifies
 * `acs_events` with `<schema>:<conversation>:<first seq>:<last seq>` when it commits; every instance
 * LISTENs on a connection of its own and, for each conversation someone in this process follows,
 * reads from the store the events after the last one it published (readAfter by seq, in pages) and
 * publishes them on the local bus, in append order. The notification is only a hint: a lost or late
 * one costs latency, never an event — the next one (or the resync after the LISTEN connection comes
 * back) reads everything past what was published, and a subscriber that sees a gap reads the store
 * itself (core/live.ts). Local appends (ConversationService publishes them on the bus) pass
 * through here too: delivered at once when they come right after what was delivered, otherwise read
 * in order with the others' events. Delivered ahead of an earlier event of another instance, each
 * of the conversation's subscribers would see a gap and read the store itself: with appends through
 * two instances, every append did, 500 reads per event for 500 subscribers.
 */
import type { EventBus } from "../core/bus.js";
import type { StoredEvent } from "../store/types.js";
import type { Logger } from "../log.js";
import { NOTIFY_CHANNEL, type PostgresEventStore } from "../store/postgres/index.js";
import { PostgresListener } from "../store/postgres/listener.js";

/** Events per read when a conversation's notifications are followed. */
const PAGE = 500;

interface Followed {
  /** The last seq published here; undefined until the first notification says where to start. */
  mark?: number;
  running: boolean;
  dirty: boolean;
}

/** A running cross-instance feed; {@link PostgresLiveFeed.close} stops it. */
class PostgresLiveFeed {
  private closed = false;
  private readonly followed = new Map<string, Followed>();
  private readonly listener: PostgresListener;
  /** Resolved once the first LISTEN is in place. */
  readonly ready: Promise<void>;

  constructor(
    private readonly store: PostgresEventStore,
    private readonly bus: EventBus,
    private readonly log: Logger,
  ) {
    this.listener = new PostgresListener({
      url: store.url,
      channel: NOTIFY_CHANNEL,
      applicationName: "acs-server-listen",
      notified: (payload) => this.onNotification(payload),
      // Back after a loss (a restart): read what was missed meanwhile.
      connected: () => {
        for (const conversationId of this.followed.keys()) this.follow(conversationId);
      },
      log,
    });
    this.ready = this.listener.ready;
    bus.routeThrough((conversationId, events) => this.publishLocal(conversationId, events));
  }

  /** Events this instance appended: delivered at once when they follow the mark, else read in order. */
  private publishLocal(conversationId: string, events: readonly StoredEvent[]): void {
    if (this.closed) return this.bus.deliver(conversationId, events); // shutting down: no reader any more
    const state = this.followed.get(conversationId);
    const first = events[0]!.seq;
    const last = events[events.length - 1]!.seq;
    if (!state || state.mark === undefined) {
      // Not followed yet: from now on, past these.
      if (this.bus.hasSubscribers(conversationId)) this.followed.set(conversationId, { mark: last, running: false, dirty: false });
      this.bus.deliver(conversationId, events);
    } else if (!state.running && first === state.mark + 1) {
      state.mark = last;
      this.bus.deliver(conversationId, events);
    } else if (last > state.mark) {
      this.follow(conversationId); // they are stored: the reader finds them after the others' events
    }
  }

  private onNotification(payload: string): void {
    const parts = payload.split(":");
    const [schema, conversationId, first] = parts;
    if (parts.length !== 4 || schema !== this.store.schema || !conversationId) return;
    if (!this.bus.hasSubscribers(conversationId)) {
      this.followed.delete(conversationId);
      return;
    }
    let state = this.followed.get(conversationId);
    if (!state) this.followed.set(conversationId, (state = { running: false, dirty: false }));
    // Where to start for a conversation not followed before: the notified batch. A subscriber that
    // has less sees a gap and reads the store itself.
    state.mark ??= Math.max(0, Number(first) - 1);
    this.follow(conversationId);
  }

  /** Reads and publishes what the store has past the mark, until a short page (one reader per conversation). */
  private follow(conversationId: string): void {
    const state = this.followed.get(conversationId);
    if (!state || state.mark === undefined) return;
    state.dirty = true;
    if (state.running) return;
    state.running = true;
    void (async () => {
      try {
        while (state.dirty && !this.closed) {
          state.dirty = false;
          for (;;) {
            const page = await this.store.readAfter(conversationId, state.mark!, PAGE);
            if (page.length === 0) break;
            state.mark = page[page.length - 1]!.seq;
            this.bus.deliver(conversationId, page);
            if (page.length < PAGE) break;
          }
        }
      } catch (error) {
        // The store is down: the resync after the LISTEN connection returns, or the next notification, reads it again.
        if (!this.closed) this.log.warn({ err: error, conversationId }, "live feed: reading notified events failed");
      } finally {
        state.running = false;
        if (!this.bus.hasSubscribers(conversationId)) this.followed.delete(conversationId);
      }
    })();
  }

  /** Stops listening (before the store closes). */
  async close(): Promise<void> {
    this.closed = true;
    await this.listener.close();
  }
}

/** Starts following other instances' appends into `bus`; resolves once it listens. */
export async function startPostgresLiveFeed(store: PostgresEventStore, bus: EventBus, log: Logger): Promise<PostgresLiveFeed> {
  const feed = new PostgresLiveFeed(store, bus, log);
  await feed.ready;
  return feed;
}
