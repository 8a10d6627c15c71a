/**
 * Long recordings for the HTML report's tests, written on the fly: a system prompt, then rounds of
 * a user message, a terminal action, its observation and a state update. Every `errorEvery`-th
 * round's state update carries a property no event declares (one unknownProperty error).
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { example } from "./support.js";

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
const START = Date.UTC(2026, 1, 5, 11, 0, 0);

function timestamp(n: number): string {
  // A millisecond apart, with the microseconds the reference writes.
  return `${new Date(START + n).toISOString().slice(0, 23)}${String(n % 1000).padStart(3, "0")}`;
}

/** The events of round `round` (4 of them, the first numbered `n`). */
function roundEvents(round: number, n: number, broken: boolean): unknown[] {
  const call = `call_${round}`;
  return [
    { id: id(n), timestamp: timestamp(n), source: "user", llm_message: { role: "user", content: [{ type: "text", text: `Step ${round}: run the tests.` }] }, kind: "MessageEvent" },
    {
      id: id(n + 1),
      timestamp: timestamp(n + 1),
      source: "agent",
      thought: [],
      action: { command: `pytest -k step_${round}`, kind: "TerminalAction" },
      tool_name: "terminal",
      tool_call_id: call,
      tool_call: { id: call, name: "terminal", arguments: `{"command":"pytest -k step_${round}"}`, origin: "completion" },
      llm_response_id: `chatcmpl-${round}`,
      kind: "ActionEvent",
    },
    {
      id: id(n + 2),
      timestamp: timestamp(n + 2),
      source: "environment",
      tool_name: "terminal",
      tool_call_id: call,
      observation: { content: [{ type: "text", text: `1 passed (step ${round})` }], is_error: false, exit_code: 0, kind: "TerminalObservation" },
      action_id: id(n + 1),
      kind: "ObservationEvent",
    },
    { id: id(n + 3), timestamp: timestamp(n + 3), source: "environment", key: "execution_status", value: "running", ...(broken && { surprise: true }), kind: "ConversationStateUpdateEvent" },
  ];
}

/**
 * Writes a JSONL recording of `events` events (1 + 4 a round, cut at `events`) to `file`; every
 * `errorEvery`-th round (from the first) has an error. Returns the number of errors.
 */
export function writeLongRecording(file: string, events: number, errorEvery = Infinity): number {
  const system = example("SystemPromptEvent");
  system.id = id(0);
  system.timestamp = timestamp(0);
  system.tools = system.tools.slice(0, 1);
  writeFileSync(file, `${JSON.stringify(system)}\n`);
  let lines: string[] = [];
  let errors = 0;
  for (let n = 1, round = 0; n < events; n += 4, round++) {
    const broken = round % errorEvery === errorEvery - 1;
    const batch = roundEvents(round, n, broken).slice(0, events - n);
    if (broken && batch.length === 4) errors++;
    for (const event of batch) lines.push(JSON.stringify(event));
    if (lines.length >= 20_000) {
      appendFileSync(file, `${lines.join("\n")}\n`);
      lines = [];
    }
  }
  if (lines.length > 0) appendFileSync(file, `${lines.join("\n")}\n`);
  return errors;
}
