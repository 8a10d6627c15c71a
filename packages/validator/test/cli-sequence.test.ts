/** Each sequence rule, broken by one trajectory, caught by acs-validate with its code and line. */
import { describe, expect, it } from "vitest";
import { jsonl, runCli, tempDir, trajectory, writeFiles } from "./cli-support.js";
import { example } from "./support.js";

interface Issue {
  severity: string;
  file: string;
  line?: number;
  pointer?: string;
  rule: string;
  message: string;
  index?: number;
}

async function issuesOf(events: unknown[], extra: string[] = []): Promise<{ code: number; issues: Issue[] }> {
  const directory = tempDir();
  writeFiles(directory, { "trajectory.jsonl": jsonl(events) });
  const result = await runCli(["trajectory.jsonl", "--format", "json", ...extra], { cwd: directory });
  return { code: result.code, issues: (JSON.parse(result.stdout) as { issues: Issue[] }).issues };
}

const rows = (issues: Issue[]) => issues.map((i) => [i.severity, i.rule, i.line, i.pointer]);

/** [name, how to break the trajectory of cli-support (events 0–6, on lines 1–7), expected issues] */
const cases: [string, (events: Record<string, any>[]) => unknown[], (string | number)[][]][] = [
  [
    "duplicate id",
    (e) => {
      e[6]!.id = e[1]!.id;
      return e;
    },
    [["error", "sequence/duplicate-id", 7, "/id"]],
  ],
  [
    "observation without its action",
    (e) => [e[0], e[1], e[3], e[4], e[5], e[6]],
    [["error", "sequence/orphan-observation", 3, "/action_id"]],
  ],
  [
    "observation naming the wrong action",
    (e) => {
      e[3]!.action_id = e[4]!.id;
      e[3]!.timestamp = e[4]!.timestamp;
      return [e[0], e[1], e[2], e[4], e[3], e[5], e[6]];
    },
    [["error", "sequence/orphan-observation", 5, "/action_id"]],
  ],
  [
    "user rejection of an action that was never made",
    (e) => {
      const rejection = { ...example("UserRejectObservation"), id: e[3]!.id, timestamp: e[3]!.timestamp, tool_call_id: "call_ghost", action_id: "00000000-0000-4000-8000-00000000ffff" };
      return [e[0], e[1], e[2], rejection, e[4], e[5], e[6]];
    },
    [["error", "sequence/orphan-observation", 4, "/action_id"]],
  ],
  [
    "agent error for a tool call no action made",
    (e) => {
      e[5]!.tool_call_id = "call_ghost";
      return e;
    },
    [["error", "sequence/orphan-observation", 6, "/tool_call_id"]],
  ],
  [
    "tool call answered twice",
    (e) => {
      e[5]!.tool_call_id = "call_run";
      return e;
    },
    [["error", "sequence/tool-call-answered-twice", 6, "/tool_call_id"]],
  ],
  [
    "condensation forgetting an unknown id",
    (e) => {
      const condensation = { ...example("Condensation"), id: "00000000-0000-4000-8000-0000000000c0", timestamp: "2026-02-05T11:24:59", forgotten_event_ids: [e[2]!.id, e[3]!.id, "00000000-0000-4000-8000-00000000dead"] };
      return [...e, condensation];
    },
    [["error", "sequence/unknown-forgotten-id", 8, "/forgotten_event_ids/2"]],
  ],
  [
    "timestamp going backwards",
    (e) => {
      e[4]!.timestamp = "2026-02-05T11:24:42.499999";
      return e;
    },
    [["error", "sequence/timestamp-backwards", 5, "/timestamp"]],
  ],
  ["no system prompt first", (e) => e.slice(1), [["warning", "sequence/system-prompt-not-first", 1, "/kind"]]],
];

describe.each(cases)("%s", (_name, breakIt, expected) => {
  it("is caught with its code, line and pointer", async () => {
    const { code, issues } = await issuesOf(breakIt(trajectory()));
    expect(rows(issues)).toEqual(expected);
    expect(code).toBe(expected.some((e) => e[0] === "error") ? 1 : 0);
  });

  it("passes with --no-sequence", async () => {
    const { code, issues } = await issuesOf(breakIt(trajectory()), ["--no-sequence"]);
    expect(issues).toEqual([]);
    expect(code).toBe(0);
  });
});

describe("what a sequence is", () => {
  it("the unbroken trajectory is valid", async () => {
    expect(await issuesOf(trajectory())).toEqual({ code: 0, issues: [] });
  });

  it("each input is its own trajectory: ids may repeat across files", async () => {
    const directory = tempDir();
    writeFiles(directory, { "a.jsonl": jsonl(trajectory()), "b.jsonl": jsonl(trajectory()) });
    const result = await runCli(["a.jsonl", "b.jsonl"], { cwd: directory });
    expect(result.code).toBe(0);
  });

  it("a lone event breaks no sequence rule, but a one-element array is a trajectory", async () => {
    const observation = trajectory()[3]!;
    const directory = tempDir();
    writeFiles(directory, { "one.json": JSON.stringify(observation), "array.json": JSON.stringify([observation]) });
    const result = await runCli(["one.json", "array.json", "--format", "json"], { cwd: directory });
    const issues = (JSON.parse(result.stdout) as { issues: Issue[] }).issues;
    // The array does not start with a SystemPromptEvent: a fragment, whose observation may answer an earlier action.
    expect(issues.map((i) => [i.file, i.rule, i.severity])).toEqual([
      ["array.json", "sequence/system-prompt-not-first", "warning"],
      ["array.json", "sequence/reference-outside-fragment", "warning"],
    ]);
  });

  it("a line that is not JSON keeps its place: later events still name the right lines", async () => {
    const events = trajectory();
    events[6]!.id = events[2]!.id;
    const lines = jsonl(events).split("\n");
    lines.splice(4, 0, "{not json");
    const directory = tempDir();
    writeFiles(directory, { "t.jsonl": lines.join("\n") });
    const result = await runCli(["t.jsonl", "--format", "json"], { cwd: directory });
    const issues = (JSON.parse(result.stdout) as { issues: Issue[] }).issues;
    expect(issues.map((i) => [i.rule, i.line, i.index])).toEqual([
      ["json", 5, 4],
      ["sequence/duplicate-id", 8, 7],
    ]);
    expect(issues[1]!.message).toBe('"00000000-0000-4000-8000-000000000003" is already the id of the event at line 3');
  });

  it("an event directory is one trajectory across its files", async () => {
    const events = trajectory();
    const directory = tempDir();
    writeFiles(directory, Object.fromEntries([events[0], events[1], events[3]].map((e, i) => [`events/event-${String(i).padStart(5, "0")}-${e!.id}.json`, JSON.stringify(e)])));
    const result = await runCli(["events", "--format", "json"], { cwd: directory });
    const issues = (JSON.parse(result.stdout) as { issues: Issue[] }).issues;
    expect(issues.map((i) => [i.file, i.line, i.rule])).toEqual([[`events/event-00002-${events[3]!.id}.json`, 1, "sequence/orphan-observation"]]);
    expect(issues[0]!.message).toContain("names no earlier event");
  });
});
