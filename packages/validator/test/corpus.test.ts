import { describe, expect, it } from "vitest";
import { validateEvent, validateTrajectory } from "../src/index.js";
import { EVENT_KINDS } from "@acs-toolkit/schema";
import { allExamples, corpusFiles, readCorpus } from "./support.js";

describe("the recorded corpus", () => {
  it("has the files the suite expects", () => {
    expect(corpusFiles.filter((f) => f.endsWith(".json"))).toHaveLength(11);
    expect(corpusFiles.filter((f) => f.endsWith(".jsonl"))).toHaveLength(2);
  });

  it.each(corpusFiles.filter((f) => f.endsWith(".json")))("%s validates with no warnings", (file) => {
    const result = validateEvent(JSON.parse(readCorpus(file)));
    expect(result).toEqual({ ok: true, errors: [], warnings: [] });
  });

  // Recorded in February and March 2026 (SDK 1.11 era): those of 2026-02-05 hold nothing later than
  // release 1.11.0; the system prompt of 2026-03-01 has a dynamic_context, written from 1.11.3 on
  // (that day's release was 1.11.5).
  const DYNAMIC_CONTEXT = new Set(["SystemPromptEvent_with_dynamic_context_2026-03-01.json", "conversation-2026-03-01.jsonl"]);

  it.each(corpusFiles)("%s is inside the interface 0.1.0 catalogue and the release of its time (SDK 1.11 era)", (file) => {
    const release = DYNAMIC_CONTEXT.has(file) ? "1.11.3" : "1.11.0";
    for (const profile of ["interface", release] as const) expect(validateTrajectory(readCorpus(file), { profile }).errors, profile).toEqual([]);
  });

  it.each([...DYNAMIC_CONTEXT])("%s is not what release 1.11.2 writes: its dynamic_context came with 1.11.3", (file) => {
    expect(corpusFiles).toContain(file);
    expect(validateTrajectory(readCorpus(file), { profile: "1.11.2" }).errors.map((e) => `${e.index} ${e.pointer}: ${e.message}`)).toEqual([
      "0 /dynamic_context: is not a property of SystemPromptEvent in profile 1.11.2: it came with OpenHands 1.11.3",
    ]);
  });

  it.each(corpusFiles.filter((f) => f.endsWith(".jsonl")))("%s validates as a trajectory with no warnings", (file) => {
    const text = readCorpus(file);
    const result = validateTrajectory(text);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.count).toBe(text.trim().split("\n").length);
  });
});

describe("the spec's examples", () => {
  it("cover every kind and variant and all validate", () => {
    const events = allExamples();
    const result = validateTrajectory(events);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(new Set(events.map((e) => e.kind)).size).toBe(EVENT_KINDS.length);
  });
});
