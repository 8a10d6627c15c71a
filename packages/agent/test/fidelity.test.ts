/**
 * What the agent records is what OpenHands records: compared with a SystemPromptEvent the OpenHands
 * agent server stored (copied from `fixtures/openhands-recorded/` at the repository root; SDK 1.11,
 * whose finish and think definitions 1.43.1 keeps; the 1.43.1 texts are checked by
 * `system-prompt.test.ts`).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { SystemPromptEvent } from "@acs-toolkit/schema";
import { lifecycleStatusOf, EXECUTION_STATUSES } from "../src/index.js";
import { type Harness, useHarness } from "./support.js";

const recorded = JSON.parse(readFileSync(new URL("./fixtures/SystemPromptEvent_2026-02-05.json", import.meta.url), "utf8")) as SystemPromptEvent;

const start = useHarness();
let h: Harness;

describe("fidelity to OpenHands", () => {
  it("records the SystemPromptEvent at the first message, with the terminal, finish and think definitions as OpenHands does", async () => {
    h = await start();
    // As OpenHands, the prompt waits for the first message (or run), when the project's files are read.
    expect(h.host.ofKind("SystemPromptEvent")).toEqual([]);
    await h.conversation.prepare();
    const [prompt] = h.host.ofKind("SystemPromptEvent");
    expect(prompt!.source).toBe("agent");
    for (const title of ["finish", "think"]) {
      expect(prompt!.tools.find((tool) => tool.title === title), title).toEqual(recorded.tools.find((tool) => tool.title === title));
    }
    const { description: _recordedText, ...recordedTerminal } = recorded.tools.find((tool) => tool.title === "terminal")!;
    expect(prompt!.tools.find((tool) => tool.title === "terminal")).toMatchObject(recordedTerminal);
    expect(prompt!.tools.map((tool) => tool.kind)).toEqual(["TerminalTool", "FileEditorTool", "TaskTrackerTool", "ThinkTool", "FinishTool"]);
    expect(prompt!.dynamic_context?.text).toContain(`Your workspace is ${h.host.workspaceDir}`);
    expect(h.host.events[0]).toBe(h.host.events.find((event) => event.kind === "SystemPromptEvent"));
    expect(h.host.statuses).toEqual(["STARTING", "RUNNING"]);
  });
});

describe("lifecycle status", () => {
  it("maps every execution status", () => {
    expect(Object.fromEntries(EXECUTION_STATUSES.map((status) => [status, lifecycleStatusOf(status)]))).toEqual({
      idle: "RUNNING",
      running: "RUNNING",
      paused: "RUNNING",
      waiting_for_confirmation: "RUNNING",
      finished: "RUNNING",
      error: "ERROR",
      stuck: "ERROR",
      deleting: "STOPPED",
    });
  });
});
