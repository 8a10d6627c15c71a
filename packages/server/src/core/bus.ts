/**
 * In-process fan-out of stored events, so that events recorded by any path reach every subscriber;
 * and of transient events (never stored: the agent server's `full_state` after a control), which
 * reach this process's subscribers only. Part of the core (no Node built-in): the server's live
 * channel and the mock's browser handlers subscribe to it the same way.
 */
import type { ConversationStateUpdateEvent } from "@acs-toolkit/schema";
import type { StoredEvent } from "../store/types.js";

/** Receives the events of one conversation stored by one append, in append order. */
export type EventListener = (events: readonly StoredEvent[]) => void;
/** Receives a transient state update (never stored) of one conversation. */
export type TransientListener = (event: ConversationStateUpdateEvent) => void;

/** Adds `listener` to the conversation's set in `map`; returns what removes it (a second call does nothing). */
function addListener<L>(map: Map<string, Set<L>>, conversationId: string, listener: L): () => void {
  let set = map.get(conversationId);
  if (!set) map.set(conversationId, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    // The map holds only conversations with a listener (and never loses a newer set of one).
    if (set.size === 0 && map.get(conversationId) === set) map.delete(conversationId);
  };
}

/** The fan-out of a conversation's stored events (and transient state updates) to its subscribers in this process. */
export class EventBus {
  private readonly listeners = new Map<string, Set<EventListener>>();
  private readonly transientListeners = new Map<string, Set<TransientListener>>();

  /** Follows a conversation's stored events from now on; returns what stops it. */
  subscribe(conversationId: string, listener: EventListener): () => void {
    return addListener(this.listeners, conversationId, listener);
  }

  /** Whether anyone in this process follows the conversation. */
  hasSubscribers(conversationId: string): boolean {
    return this.listeners.has(conversationId);
  }

  /** Events just appended by this process: to the subscribers, or through the route when one is set. */
  publish(conversationId: string, events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    if (this.route) this.route(conversationId, events);
    else this.deliver(conversationId, events);
  }

  /** To every subscriber of the conversation, now. */
  deliver(conversationId: string, events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    for (const listener of this.listeners.get(conversationId) ?? []) listener(events);
  }

  /**
   * Sends what publish gets to `route` instead, which delivers it (the PostgreSQL live feed: it
   * orders this process's appends among other instances' before they reach subscribers).
   */
  routeThrough(route: (conversationId: string, events: readonly StoredEvent[]) => void): void {
    this.route = route;
  }
  private route: ((conversationId: string, events: readonly StoredEvent[]) => void) | undefined;

  /** Follows the end of a conversation (it was deleted); returns what stops it. */
  subscribeEnd(conversationId: string, listener: () => void): () => void {
    return addListener(this.endListeners, conversationId, listener);
  }

  /** The conversation was deleted: tells its end's subscribers in this process, once. */
  publishEnd(conversationId: string): void {
    const listeners = this.endListeners.get(conversationId);
    this.endListeners.delete(conversationId);
    for (const listener of listeners ?? []) listener();
  }
  private readonly endListeners = new Map<string, Set<() => void>>();

  /** Follows a conversation's transient state updates (this process's only) from now on; returns what stops it. */
  subscribeTransient(conversationId: string, listener: TransientListener): () => void {
    return addListener(this.transientListeners, conversationId, listener);
  }

  /** A transient state update, never stored, to the conversation's transient subscribers in this process. */
  publishTransient(conversationId: string, event: ConversationStateUpdateEvent): void {
    for (const listener of this.transientListeners.get(conversationId) ?? []) listener(event);
  }
}
