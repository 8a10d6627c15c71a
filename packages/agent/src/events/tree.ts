/**
 * The conversation tree of OpenHands: every event appended gets `parent_id`, the current HEAD (the
 * active leaf), and then becomes HEAD, except a ConversationStateUpdateEvent, which is stamped but
 * never moves HEAD (a state update is not a tree node). The first event of a log has no parent.
 * Follows openhands-sdk/openhands/sdk/conversation/state.py (`_stamp_parent_id`, `append_event`,
 * `_resolve_active_leaf`) and conversation/event_store.py (`path_to_root`).
 *
 * The SDK keeps HEAD in its state file (`leaf_event_id`); here it is read back from the events: the
 * last event that moved it. This runtime never branches (no navigation, no fork), so that event is
 * the last one stored that is not a state update.
 */
import type { RecordedEvent } from "../host.js";

/** The reserved parent of a new root, written after navigating to an empty HEAD (`ROOT_PARENT_ID`). */
const ROOT_PARENT_ID = "__root__";

/** The events the SDK's legacy fallback never takes as HEAD: state artifacts, not tree nodes. */
const LEGACY_ARTIFACTS = new Set(["ConversationStateUpdateEvent", "ConversationErrorEvent"]);

/**
 * HEAD of stored events. A log written before the tree (no event has a parent) falls back to its
 * last real event, skipping trailing state updates and ConversationErrorEvents, as the SDK's
 * `_resolve_active_leaf` does when its state file has no `leaf_event_id`.
 */
function storedLeaf(events: readonly RecordedEvent[]): string | undefined {
  const legacy = !events.some((event) => event.parent_id != null);
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.kind === "ConversationStateUpdateEvent" || (legacy && LEGACY_ARTIFACTS.has(event.kind))) continue;
    return event.id;
  }
  return undefined;
}

/** `event` with `parent_id` set, placed after `source` as the SDK's models order their fields. */
function withParent<E extends RecordedEvent>(event: E, parent: string): E {
  const { id, timestamp, source, ...rest } = event as E & { source?: unknown };
  return { id, timestamp, ...(source === undefined ? {} : { source }), parent_id: parent, ...rest } as unknown as E;
}

/** A conversation's events as a tree: appends stamp their parent and move HEAD. */
export class EventTree {
  private leaf: string | undefined;
  /** Whether the host recorded a state update of its own since the tree was read. */
  private outside = false;
  /** Event id → index in `events` (the first event with that id). */
  private readonly indexOf = new Map<string, number>();

  /** @param events the conversation's events in storage order; the tree appends to this array. */
  constructor(private readonly events: RecordedEvent[]) {
    events.forEach((event, index) => {
      if (!this.indexOf.has(event.id)) this.indexOf.set(event.id, index);
    });
    this.leaf = storedLeaf(events);
  }

  /** HEAD: the parent of the next event (the SDK's `leaf_event_id`); undefined while the log is empty. */
  get leafId(): string | undefined {
    return this.leaf;
  }

  /** Appends an event to record: stamped with HEAD (unless it names a parent), and HEAD moves to it. */
  append<E extends RecordedEvent>(event: E): E {
    const parent = event.parent_id == null ? this.nextParent() : undefined;
    const stamped = parent === undefined ? event : withParent(event, parent);
    this.adopt(stamped);
    return stamped;
  }

  /**
   * A state update the host records itself (the lifecycle status): its parent, HEAD, for the host to
   * stamp it with. It never moves HEAD, but the log is no longer empty.
   */
  recordedOutside(): string | undefined {
    const parent = this.nextParent();
    this.outside = true;
    return parent;
  }

  /** HEAD; over a log of state updates only, a new root, as the SDK marks it; nothing for the first event. */
  private nextParent(): string | undefined {
    return this.leaf ?? (this.events.length > 0 || this.outside ? ROOT_PARENT_ID : undefined);
  }

  /** Appends an event stored already (a message the host recorded), as it is; HEAD moves to it. */
  adopt(event: RecordedEvent): void {
    if (!this.indexOf.has(event.id)) this.indexOf.set(event.id, this.events.length);
    this.events.push(event);
    if (event.kind !== "ConversationStateUpdateEvent") this.leaf = event.id;
  }

  /**
   * The last `limit` events of the active branch, root first: HEAD and its ancestors. A state update
   * is never on it; an event without `parent_id` (written before the tree) has the event stored
   * before it as parent, as the SDK's `_effective_parent_id`.
   */
  branch(limit: number): RecordedEvent[] {
    const chain: RecordedEvent[] = [];
    const seen = new Set<string>();
    let current = this.leaf;
    while (current !== undefined && chain.length < limit && !seen.has(current)) {
      seen.add(current);
      const index = this.indexOf.get(current);
      if (index === undefined) break;
      const event = this.events[index]!;
      chain.push(event);
      const parent = event.parent_id;
      current = parent === ROOT_PARENT_ID ? undefined : (parent ?? (index > 0 ? this.events[index - 1]!.id : undefined));
    }
    return chain.reverse();
  }
}
