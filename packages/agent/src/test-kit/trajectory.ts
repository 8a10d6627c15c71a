/**
 * The check every recorded trajectory of the agent passes in tests: `@acs-toolkit/validator`'s
 * trajectory validation with every sequence rule, strict (an unknown kind or property is an error),
 * and, for each ConversationErrorEvent, a `classification` equal to OpenHands' `classify_error(code,
 * detail)` (the schema checks its shape; this checks its value).
 */
import { validateTrajectory, type TrajectoryIssue } from "@acs-toolkit/validator";
import { classifyError } from "../errors/classify.js";
import type { RecordedEvent } from "../host.js";

export interface TrajectoryReport {
  /** Errors of the validator (schema and sequence rules) and wrong classifications. */
  errors: string[];
  /** Warnings of the validator (a sequence rule of severity warning). */
  warnings: string[];
}

const describe = (issue: TrajectoryIssue) => `#${issue.index} ${issue.pointer || "/"}: ${issue.message} (${issue.rule})`;

function classificationProblems(event: RecordedEvent, index: number): string[] {
  if (event.kind !== "ConversationErrorEvent" || event.classification == null) return [];
  // Stored without nulls, as OpenHands stores events: a null error_id is absent.
  const { error_id: errorId = null, ...stored } = event.classification;
  const expected = classifyError(event.code, event.detail);
  return JSON.stringify({ ...stored, error_id: errorId }) === JSON.stringify(expected) ? [] : [`#${index} classification is not classify_error(code, detail)`];
}

/** Validates a trajectory with every sequence rule, strictly; see the module comment. */
export function checkTrajectory(events: readonly RecordedEvent[]): TrajectoryReport {
  const result = validateTrajectory(events, { sequence: true, unknownKinds: "error", unknownProperties: "error" });
  return {
    errors: [...result.errors.map(describe), ...events.flatMap(classificationProblems)],
    warnings: result.warnings.map(describe),
  };
}
