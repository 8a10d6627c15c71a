/** One line per event: what a person reading the conversation wants to see. */
import { isActionEvent, isMessageEvent, isObservationEvent, type Event } from "@acs-toolkit/schema";

export function describeEvent(event: Event): string {
  if (isMessageEvent(event)) {
    const text = event.llm_message.content?.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join(" ") ?? "";
    return `${event.source}: ${text}`;
  }
  if (isActionEvent(event)) return `${event.tool_name}${event.action ? ` (${event.action.kind})` : ""}`;
  if (isObservationEvent(event)) return `${event.observation.kind} for ${event.tool_name}`;
  return event.kind;
}
