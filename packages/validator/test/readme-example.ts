import { formatIssue, validateEvent, validateTrajectory } from "@acs-toolkit/validator";

// One event: ok, errors and warnings, each with a JSON pointer, a rule and a sentence.
const result = validateEvent({
  id: "974caa29-4f4b-4c30-b4e1-5169f41e6d3d",
  timestamp: "2026-02-05T11:24:48.449828",
  source: "agent",
  thought: [],
  action: { kind: "BrowserClickAction", index: -1 },
  tool_name: "browser_click",
  tool_call_id: "call_1",
  tool_call: { id: "call_1", name: "browser_click", arguments: "{}", origin: "completion" },
  llm_response_id: "chatcmpl-1",
  kind: "ActionEvent",
});
console.log(result.ok); // false
console.log(result.errors.map(formatIssue)); // [ '/action/index: must be >= 0, got -1' ]

// Profiles: by default every shipped OpenHands release is accepted; "interface" accepts exactly
// the interface 0.1.0 catalogue, and a release ("1.22.0") what that release writes.
const interrupt = { id: "9c8b7a69-5d4e-4f3a-8b2c-1d0e9f8a7b6c", timestamp: "2026-05-20T15:31:44.87012", kind: "InterruptEvent" };
console.log(validateEvent(interrupt).ok); // true
console.log(validateEvent(interrupt, { profile: "interface" }).errors.map(formatIssue));
// [ '/kind: unknown Event kind "InterruptEvent" in the interface profile: it came with OpenHands 1.23.0 and is not in the interface 0.1.0 catalogue' ]

// A recorded trajectory: a JSON array, an EventPage, JSONL text or any iterable of events.
const jsonl = [
  '{"id":"5df490d1-98e8-4dea-9ae7-7f36c59f8ed5","timestamp":"2026-02-05T11:24:45.29","kind":"PauseEvent"}',
  '{"id":"not-an-id","timestamp":"2026-02-05T11:24:46","kind":"PauseEvent"}',
].join("\n");
const trajectory = validateTrajectory(jsonl, { unknownKinds: "warn" });
for (const issue of trajectory.errors) console.log(`line ${issue.line}: ${formatIssue(issue)}`);
// line 2: /id: must be a UUID or ULID, got "not-an-id"

// A fragment (its first event is not a SystemPromptEvent): a reference to an event before it is a
// warning of its own rule, where a whole trajectory has an error.
const fragment = validateTrajectory([{ ...interrupt, parent_id: "fa7668e4-a43d-4fa4-b75c-ffd642afb5b5" }], { sequence: true });
console.log(fragment.ok, fragment.warnings.map((w) => w.rule)); // true [ 'sequence/system-prompt-not-first', 'sequence/reference-outside-fragment' ]

export { result, trajectory, fragment };
