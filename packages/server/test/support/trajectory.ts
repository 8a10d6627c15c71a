/**
 * The search property tests' model, shared by the server's and the mock's: random trajectories full
 * of timestamp ties, and the naive answers (text and source of an event) the pages are held to.
 */
import { DEFAULT_EVENT_SOURCE, type Event } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";

/** Message words: mixed case, accents, a 1-letter one (the body filter's edge cases). */
export const WORDS = ["alpha", "Beta", "GAMMA", "delta", "pwd", "résumé", "naïve", "x"];

/** Events of every kind with timestamps full of ties, some with offsets, and varied message texts. */
export function randomTrajectory(rand: () => number, size: number): Event[] {
  const pool = exampleEvents({ seed: 99 });
  const base = Date.UTC(2026, 1, 5, 11, 0, 0);
  return Array.from({ length: size }, (_, i) => {
    const event = structuredClone(pool[Math.floor(rand() * pool.length)]!) as Event & Record<string, any>;
    event.id = `00000099-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
    const millis = base + Math.floor(rand() * 40) * 1000; // 40 distinct seconds for `size` events: many ties
    const iso = new Date(millis).toISOString();
    const form = rand();
    event.timestamp = form < 0.6 ? iso.replace("Z", "") : form < 0.8 ? iso : new Date(millis).toISOString().replace("Z", "+00:00");
    if (event.kind === "CondensationSummaryEvent") event.id += "-summary";
    if (event.kind === "MessageEvent") {
      event.source = rand() < 0.5 ? "user" : "agent";
      event.llm_message.content = [{ type: "text", text: `${WORDS[Math.floor(rand() * WORDS.length)]} ${WORDS[Math.floor(rand() * WORDS.length)]}` }];
    }
    return event;
  });
}

/** The text the body filter searches, written out naively (an oracle, not the store's code). */
export const textOf = (event: any): string =>
  event.kind !== "MessageEvent"
    ? ""
    : [
        ...(event.llm_message.content ?? []).filter((c: any) => c.type === "text").map((c: any) => c.text),
        ...(event.extended_content ?? []).map((c: any) => c.text),
        event.llm_message.reasoning_content ?? "",
      ].join("\n");

/** An event's source, or its kind's default from the spec. */
export const sourceOf = (event: Event): string => event.source ?? DEFAULT_EVENT_SOURCE[event.kind] ?? "";
