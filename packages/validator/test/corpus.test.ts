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

  it.each(corpusFiles)("%s is inside the interface 0.1.0 catalogue and release 1.11.0's (SDK 1.11 era)", (file) => {
    for (const profile of ["interface", "1.11.0"] as const) expect(validateTrajectory(readCorpus(file), { profile }).errors, profile).toEqual([]);
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
