/**
 * The test kit's `checkTrajectory`, which every trajectory the agent records in tests passes (here
 * and in the server's agent tests): what OpenHands OPENHANDS_RELEASE would not write, or always
 * writes and is missing, is named by event and field.
 */
import { OPENHANDS_RELEASE, type Event } from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { expect, it } from "vitest";
import { checkTrajectory } from "../src/test-kit/index.js";

const releaseViolations = (events: Event[]) => {
  const report = checkTrajectory(events);
  return [...report.errors, ...report.warnings];
};

const example = (kind: string, variant?: string) =>
  structuredClone(
    exampleEvents().find((event) => event.kind === kind && (variant === undefined || (event.kind === "ObservationEvent" && event.observation.kind === variant) || (event.kind === "ActionEvent" && event.action?.kind === variant)))!,
  ) as Record<string, any>;

/** A whole conversation as OpenHands OPENHANDS_RELEASE stores it: system prompt, finish action, its observation. */
function conversation(): Record<string, any>[] {
  const system = example("SystemPromptEvent");
  system.tools = system.tools.filter((tool: { kind: string }) => tool.kind === "FinishTool");
  const action: Record<string, any> = { ...example("ActionEvent", "FinishAction"), parent_id: system.id };
  const observation = { ...example("ObservationEvent", "FinishObservation"), parent_id: action.id, action_id: action.id, tool_call_id: action.tool_call_id, extended_content: [] };
  return [system, action, observation];
}

it("a trajectory as the release writes it has no violation", () => {
  expect(releaseViolations(conversation() as Event[])).toEqual([]);
});

it("names the event and the field of what the release does not write, and of what it always writes but is missing", () => {
  const events = conversation();
  events[0]!.tools.push(example("SystemPromptEvent").tools.find((tool: { kind: string }) => tool.kind === "DelegateTool"));
  events[1]!.action.legacy = true;
  delete events[2]!.extended_content;
  const lines = releaseViolations(events as Event[]);
  expect(lines).toEqual([
    `#0 SystemPromptEvent ${events[0]!.id} /tools/1/kind: unknown ToolDefinition kind "DelegateTool" in profile ${OPENHANDS_RELEASE}: OpenHands 1.23.0 removed it (unknownKind)`,
    expect.stringMatching(new RegExp(`^#1 ActionEvent ${events[1]!.id} /action/legacy: .* \\(unknownProperty\\)$`)),
    `#2 ObservationEvent ${events[2]!.id} /extended_content: is written by OpenHands ${OPENHANDS_RELEASE} on every such event (from 1.34.0 on), missing here (always-written)`,
  ]);
});

it("a missing parent_id is named; the first event has none", () => {
  const events = conversation();
  delete events[0]!.parent_id;
  delete events[1]!.parent_id;
  expect(releaseViolations(events as Event[])).toEqual([
    `#1 ActionEvent ${events[1]!.id} /parent_id: is written by OpenHands ${OPENHANDS_RELEASE} on every such event (from 1.31.0 on), missing here (always-written)`,
  ]);
});
