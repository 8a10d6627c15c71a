/**
 * The golden run: a scripted run recorded here has the events, field sets and field order of the
 * same run as OpenHands 1.43.1 stores it (ids, times and texts aside). The expected run is
 * `fixtures/openhands-1.43.1/run.jsonl`: a real run the OpenHands agent server stored (SDK 1.11,
 * `fixtures/openhands-recorded/conversation-2026-02-05.jsonl` at the repository root) with the
 * changes 1.43.1's models make to it, each cited in `derive-run.py` beside it.
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, useHarness } from "./support.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const golden = readFileSync(new URL("./fixtures/openhands-1.43.1/run.jsonl", import.meta.url), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as Record<string, Json>);

/**
 * Fields 1.43.1 writes in this run that this runtime leaves out on purpose, each with its reason
 * (the agent README lists them too). The test fails if one of them appears, so the list stays true.
 */
const LEFT_OUT: ReadonlyArray<{ kind: string; path: string[]; reason: string }> = [
  {
    kind: "ObservationEvent",
    path: ["observation", "full_output_save_dir"],
    reason: "no conversation persistence directory: a long output is truncated in the observation, never saved to a file",
  },
];

/**
 * What is compared: every object's keys in order, recursively, and the discriminators (`kind`,
 * `source`, `role`, `type`); other values aside. An array is compared element by element, except
 * the tools of a SystemPromptEvent (which tools is another test's subject): there, the first one's shape.
 */
function shape(value: Json, key = ""): Json {
  if (Array.isArray(value)) return key === "tools" ? [shape(value[0] ?? null)] : value.map((item) => shape(item));
  if (value !== null && typeof value === "object") return Object.entries(value).map(([name, item]) => [name, shape(item, name)]);
  return ["kind", "source", "role", "type"].includes(key) ? value : typeof value;
}

function without(event: Record<string, Json>, path: string[]): Record<string, Json> {
  const copy = structuredClone(event);
  let parent: Record<string, Json> | undefined = copy;
  for (const step of path.slice(0, -1)) parent = parent?.[step] as Record<string, Json> | undefined;
  if (parent) delete parent[path[path.length - 1]!];
  return copy;
}

const start = useHarness();

it("records a run with the events, fields and field order of OpenHands 1.43.1", async () => {
  const h = await start();
  h.llm.play(
    {
      toolCalls: [{ name: "terminal", arguments: { command: "pwd > tool_output.txt", security_risk: "LOW", summary: "Get current directory and write to tool_output.txt" } }],
    },
    { toolCalls: [{ name: "finish", arguments: { message: "The current directory has been written to tool_output.txt.", summary: "Current directory saved to tool_output.txt" } }] },
    { text: "I executed the `pwd` command and saved its output to tool_output.txt." },
  );
  await h.conversation.sendMessage(userText("Use the terminal tool to run `pwd` and write the output to tool_output.txt."), { run: true });
  await h.conversation.idle();
  await h.conversation.sendMessage(userText("Without using any tools, summarize in one sentence what you did."), { run: true });
  await h.conversation.idle();
  expectValidTrajectory(h.host);

  const recorded = h.host.events.filter((event) => event.kind !== "ConversationStateUpdateEvent") as unknown as Array<Record<string, Json>>;
  const expected = golden.map((event) => LEFT_OUT.filter((field) => field.kind === event.kind).reduce((found, field) => without(found, field.path), event));
  expect(recorded.map((event) => shape(event))).toEqual(expected.map((event) => shape(event)));

  // A state update has the fields of 1.43.1's ConversationStateUpdateEvent (event/conversation_state.py), in its order.
  for (const update of h.host.ofKind("ConversationStateUpdateEvent")) expect(Object.keys(update)).toEqual(["id", "timestamp", "source", "parent_id", "key", "value", "kind"]);
});
