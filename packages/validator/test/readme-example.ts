import { formatIssue, validateEvent, validateTrajectory } from "@acs-toolkit/validator";

// One event: ok, errors and warnings, each with a JSON pointer, a rule and a sentence.
const result = validateEvent({
  id: "974caa29-4f4b-4c30-b4e1-5169f41e6d3d",
  timestamp: "2026-02-05T11:24:48.449828",
  source: "agent",
  thought: [],
  action: { kind: "BrowserCloseTabAction", tab_id: "abcde" },
  tool_name: "browser_close_tab",
  tool_call_id: "call_1",
  tool_call: { id: "call_1", name: "browser_close_tab", arguments: "{}", origin: "completion" },
  llm_response_id: "chatcmpl-1",
  kind: "ActionEvent",
});
console.log(result.ok); // false
console.log(result.errors.map(formatIssue)); // [ '/action/tab_id: must be exactly 4 characters, got "abcde"' ]

// A recorded trajectory: a JSON array, an EventPage, JSONL text or any iterable of events.
const jsonl = [
  '{"id":"5df490d1-98e8-4dea-9ae7-7f36c59f8ed5","timestamp":"2026-02-05T11:24:45.29","kind":"PauseEvent"}',
  '{"id":"not-an-id","timestamp":"2026-02-05T11:24:46","kind":"PauseEvent"}',
].join("\n");
const trajectory = validateTrajectory(jsonl, { unknownKinds: "warn" });
for (const issue of trajectory.errors) console.log(`line ${issue.line}: ${formatIssue(issue)}`);
// line 2: /id: must be a UUID or ULID, got "not-an-id"

export { result, trajectory };
