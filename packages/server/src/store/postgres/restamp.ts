/**
 * Events stamped at recording (EventToStore.stampedAtRecording) get a timestamp no earlier than the
 * conversation's latest, so that the order by (timestamp, seq) is the append order even when
 * another instance stamped later but appended first: in the append's transaction (restamped), or
 * in the one-statement append from their JSON cut around the timestamp (stampsOf).
 */
import { prepareEvent, type PreparedEvent } from "../prepare.js";
import { timestampOfMicros } from "../time.js";
import type { EventToStore } from "../types.js";
import type { Queryable } from "./connection.js";

/** A stamped event's JSON around its timestamp's value (see appendInOneStatement): `pre` ends with the opening quote, `post` starts with the closing one. */
export interface Stamp {
  pre: string;
  post: string;
}

const STAMP_MARK = "\u0001acs-timestamp\u0001";

/** Per event, its Stamp when stamped at recording (else null): restamped's JSON with a mark for the timestamp, cut at it. */
export function stampsOf(events: readonly EventToStore[]): Array<Stamp | null> {
  return events.map((entry) => {
    if (!entry.stampedAtRecording) return null;
    const parts = JSON.stringify({ ...entry.event, timestamp: STAMP_MARK }).split(JSON.stringify(STAMP_MARK).slice(1, -1));
    if (parts.length !== 2) throw new Error("an event's JSON holds the timestamp mark");
    return { pre: parts[0]!, post: parts[1]! };
  });
}

/**
 * Inside the append's transaction, its conversation's row locked: the events stamped at recording
 * (EventToStore.stampedAtRecording) whose timestamp is before the conversation's latest, moved to it
 * (then their append order decides), so that the order by (timestamp, seq) is the append order
 * even when another instance stamped later but appended first.
 */
export async function restamped(tx: Queryable, conv: number, events: readonly EventToStore[], rows: PreparedEvent[]): Promise<PreparedEvent[]> {
  // A statement after the lock: its snapshot holds every append committed before ours.
  let latest = (await tx.query<{ ts: number }>("select ts from events where conv = $1 order by ts desc, seq desc limit 1", [conv])).rows[0]?.ts ?? -Infinity;
  return rows.map((row, index) => {
    const entry = events[index]!;
    let moved = row;
    if (entry.stampedAtRecording && row.ts < latest) {
      const event = { ...entry.event, timestamp: timestampOfMicros(latest) };
      moved = prepareEvent({ event, json: JSON.stringify(event) }, index);
    }
    latest = Math.max(latest, moved.ts);
    return moved;
  });
}
