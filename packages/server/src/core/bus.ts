/**
 * In-process fan-out of stored events, so that events recorded by any path reach every subscriber;
 * and of transient events (never stored: the agent server's `full_state` after a control), which
 * reach this process's subscribers only.
 */
import type { ConversationStateUpdateEvent } from "@acs-toolkit/schema";
import type { StoredEvent } from "../store/types.js";

export type EventListener = (events: readonly StoredEvent[]) => void;
export type TransientListener = (event: ConversationStateUpdateEvent) => void;

export class EventBus {
  private readonly listeners = new Map<string, Set<EventListener>>();
  private readonly transientListeners = new Map<string, Set<TransientListener>>();

  subscribe(conversationId: string, listener: EventListener): () => void {
    let set = this.listeners.get(conversationId);
    if (!set) this.listeners.set(conversationId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(conversationId);
    };
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

  subscribeTransient(conversationId: string, listener: TransientListener): () => void {
    let set = this.transientListeners.get(conversationId);
    if (!set) this.transientListeners.set(conversationId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.transientListeners.delete(conversationId);
    };
  }

  publishTransient(conversationId: string, event: ConversationStateUpdateEvent): void {
    for (const listener of this.transientListeners.get(conversationId) ?? []) listener(event);
  }
}
