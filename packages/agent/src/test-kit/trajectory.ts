/**
 * The check every recorded trajectory of the agent passes in tests: what OpenHands
 * {@link OPENHANDS_RELEASE} (the release this runtime speaks) would not write, or always writes and
 * the trajectory lacks, one line per problem naming the event (index, kind, id), the field (JSON
 * pointer) and the rule:
 *
 * - every error and warning of `acs-validate --profile <OPENHANDS_RELEASE>` with every sequence rule,
 *   strict (an unknown kind or property is an error): a kind, field or value that release does not
 *   write, a broken shape, a broken sequence;
 * - a later addition that release always writes and the trajectory lacks (rule `always-written`):
 *   the profile accepts its absence, as a field with a default is optional on the wire, but a store
 *   of that release never lacks it. `parent_id` on every event but the first (1.31.0 on),
 *   `extended_content` on every ObservationEvent (1.34.0 on), `classification` on every AgentErrorEvent
 *   and ConversationErrorEvent (1.40.0 on); see their descriptions in spec/;
 * - each ConversationErrorEvent's `classification` equal to OpenHands' `classify_error(code, detail)`
 *   (rule `classification`: the schema checks its shape, this its value).
 */
import { OPENHANDS_RELEASE } from "@acs-toolkit/schema";
import { validateTrajectory } from "@acs-toolkit/validator";
import { classifyError } from "../errors/classify.js";
import type { RecordedEvent } from "../host.js";

export interface TrajectoryReport {
  /** Errors of the validator (schema and sequence rules), fields always written but missing, wrong classifications. */
  errors: string[];
  /** Warnings of the validator (a sequence rule of severity warning). */
  warnings: string[];
}

interface Problem {
  index: number;
  pointer: string;
  message: string;
  rule: string;
}

/** `1.31.0` → 1_031_000, to compare releases. */
const releaseNumber = (release: string) => release.split(".").reduce((sum, part) => sum * 1000 + Number(part), 0);
const atLeast = (since: string) => releaseNumber(OPENHANDS_RELEASE) >= releaseNumber(since);

/** Later additions the release writes on every event of their kind, with the release that added each. */
const ALWAYS_WRITTEN: ReadonlyArray<{ field: string; since: string; applies: (event: RecordedEvent, index: number) => boolean }> = [
  { field: "parent_id", since: "1.31.0", applies: (_event, index) => index > 0 },
  { field: "extended_content", since: "1.34.0", applies: (event) => event.kind === "ObservationEvent" },
  { field: "classification", since: "1.40.0", applies: (event) => event.kind === "AgentErrorEvent" || event.kind === "ConversationErrorEvent" },
];

function missingFields(event: RecordedEvent, index: number): Problem[] {
  const fields = event as unknown as Record<string, unknown>;
  return ALWAYS_WRITTEN.filter((rule) => atLeast(rule.since) && rule.applies(event, index) && fields[rule.field] == null).map((rule) => ({
    index,
    pointer: `/${rule.field}`,
    message: `is written by OpenHands ${OPENHANDS_RELEASE} on every such event (from ${rule.since} on), missing here`,
    rule: "always-written",
  }));
}

function classificationProblems(event: RecordedEvent, index: number): Problem[] {
  if (event.kind !== "ConversationErrorEvent" || event.classification == null) return [];
  // Stored without nulls, as OpenHands stores events: a null error_id is absent.
  const { error_id: errorId = null, ...stored } = event.classification;
  const expected = classifyError(event.code, event.detail);
  if (JSON.stringify({ ...stored, error_id: errorId }) === JSON.stringify(expected)) return [];
  return [{ index, pointer: "/classification", message: "is not classify_error(code, detail)", rule: "classification" }];
}

/** Checks a trajectory against {@link OPENHANDS_RELEASE}; see the module comment. */
export function checkTrajectory(events: readonly RecordedEvent[]): TrajectoryReport {
  const result = validateTrajectory(events, { profile: OPENHANDS_RELEASE, sequence: true, unknownKinds: "error", unknownProperties: "error" });
  const line = ({ index, pointer, message, rule }: Problem) => `#${index} ${events[index]?.kind ?? "(trajectory)"} ${events[index]?.id ?? ""} ${pointer || "/"}: ${message} (${rule})`;
  const fromValidator = (issues: typeof result.errors) => issues.map((issue) => line({ ...issue, index: issue.index ?? -1 }));
  return {
    errors: [...fromValidator(result.errors), ...events.flatMap(missingFields).map(line), ...events.flatMap(classificationProblems).map(line)],
    warnings: fromValidator(result.warnings),
  };
}
