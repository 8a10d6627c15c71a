/**
 * The restart rule of the agent server (openhands-agent-server/openhands/agent_server/event_service.py
 * `start`): a conversation stored as `running` was cut off, so it becomes `error`, and the first
 * action left unanswered gets an AgentErrorEvent saying so, classified `internal`.
 */
import type { AgentErrorEvent } from "@acs-toolkit/schema";
import { INTERNAL_FAILURE } from "../errors/classify.js";
import type { EventFactory } from "../events/factory.js";
import { unmatchedActions } from "../history/view.js";
import type { RecordedEvent } from "../host.js";

const RESTART_MESSAGE =
  "A restart occurred while this tool was in progress. This may indicate a fatal memory error or system crash. The tool execution was interrupted and did not complete.";

/** The AgentErrorEvent for the first unanswered action of `events`, or undefined when every action is answered. */
export function restartError(events: readonly RecordedEvent[], factory: EventFactory): AgentErrorEvent | undefined {
  const [first] = unmatchedActions(events);
  return first && factory.agentError(first.tool_name, first.tool_call_id, RESTART_MESSAGE, INTERNAL_FAILURE);
}
