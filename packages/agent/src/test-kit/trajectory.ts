/**
 * The check every recorded trajectory of the agent passes in tests: `@acs-toolkit/validator`'s
 * trajectory validation with every sequence rule, strict except for the two additions of today's
 * OpenHands that the spec does not describe yet (issue 14): the InterruptEvent kind and
 * `classification` on ConversationErrorEvent. Those two are checked here instead (an InterruptEvent
 * is a PauseEvent by another name; a classification has exactly its four fields), so nothing passes
 * unchecked. Once the spec has them, the validator reports no warning and the allowance is unused.
 */
import { validateEvent, validateTrajectory, type TrajectoryIssue } from "@acs-toolkit/validator";
import { classifyError } from "../errors/classify.js";
import type { RecordedEvent } from "../pending-spec.js";

export interface TrajectoryReport {
  /** Errors of the validator (schema and sequence rules), and of the checks of the pending additions. */
  errors: string[];
  /** Warnings other than the allowed ones. */
  warnings: string[];
}

const FAILURE_KINDS = new Set(["auth", "quota", "rate_limit", "config", "transient", "agent_action", "internal", "unknown"]);
const FAILURE_ACTIONS = new Set(["none", "retry", "settings"]);

const describe = (issue: TrajectoryIssue) => `#${issue.index} ${issue.pointer || "/"}: ${issue.message} (${issue.rule})`;

function isAllowed(issue: TrajectoryIssue, event: RecordedEvent | undefined): boolean {
  if (issue.rule === "unknownKind" && issue.pointer === "/kind") return event?.kind === "InterruptEvent";
  if (issue.rule === "unknownProperty" && issue.pointer === "/classification") return event?.kind === "ConversationErrorEvent";
  return false;
}

/** Problems of the pending additions in `event`, checked against what the versions reference says. */
function pendingProblems(event: RecordedEvent, index: number): string[] {
  if (event.kind === "InterruptEvent") {
    const asPause = validateEvent({ ...event, kind: "PauseEvent" });
    return asPause.ok ? [] : asPause.errors.map((issue) => `#${index} InterruptEvent ${issue.pointer}: ${issue.message}`);
  }
  if (event.kind === "ConversationErrorEvent" && "classification" in event) {
    const { classification, ...rest } = event as typeof event & { classification: Record<string, unknown> };
    const problems: string[] = [];
    const keys = Object.keys(classification ?? {}).sort().join(",");
    if (keys !== "error_id,kind,retryable,user_action") problems.push(`#${index} classification has keys ${keys}`);
    if (!FAILURE_KINDS.has(classification.kind as string)) problems.push(`#${index} classification.kind ${String(classification.kind)}`);
    if (!FAILURE_ACTIONS.has(classification.user_action as string)) problems.push(`#${index} classification.user_action ${String(classification.user_action)}`);
    if (JSON.stringify(classification) !== JSON.stringify(classifyError(rest.code, rest.detail))) problems.push(`#${index} classification is not classify_error(code, detail)`);
    const strict = validateEvent(rest);
    if (!strict.ok) problems.push(...strict.errors.map((issue) => `#${index} ${issue.pointer}: ${issue.message}`));
    return problems;
  }
  return [];
}

/** Validates a trajectory with every sequence rule; see the module comment for the two allowances. */
export function checkTrajectory(events: readonly RecordedEvent[]): TrajectoryReport {
  const result = validateTrajectory(events, { sequence: true, unknownKinds: "warn", unknownProperties: "warn" });
  return {
    errors: [...result.errors.map(describe), ...events.flatMap(pendingProblems)],
    warnings: result.warnings.filter((issue) => !isAllowed(issue, events[issue.index])).map(describe),
  };
}
