/**
 * Recordings of later releases (fixtures/openhands-releases at the repository root): valid by default, rejected with clear
 * messages by the interface profile, and placed in time by the release profiles.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { validateTrajectory, type Profile } from "../src/index.js";
import { releaseNumber } from "../src/profile.js";

const directory = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/openhands-releases");
const read = (file: string) => readFileSync(path.join(directory, file), "utf8");

/**
 * Each file: its release, the release before its newest addition (none for 1.11.5: what it shows
 * beyond the interface existed from 1.9.0), and the warnings a default run gives.
 */
const FILES: Record<string, { release: Profile; before?: Profile; warnings: string[] }> = {
  "v1.40-conversation.jsonl": { release: "1.40.0", before: "1.34.0", warnings: [] },
  "v1.11.5-search-page.json": { release: "1.11.5", warnings: [] },
  "v1.13-page-window.jsonl": {
    release: "1.13.0",
    before: "1.12.0",
    warnings: ["sequence/system-prompt-not-first", ...Array<string>(4).fill("sequence/reference-outside-fragment")],
  },
  "v1.23-websocket-frames.jsonl": { release: "1.23.0", before: "1.22.0", warnings: ["sequence/system-prompt-not-first"] },
  "v1.31-acp-agent.jsonl": { release: "1.31.0", before: "1.30.0", warnings: ["sequence/system-prompt-not-first"] },
};

it("the folder holds exactly the files described here and in its README", () => {
  const files = readdirSync(directory).filter((f) => f !== "README.md").sort();
  expect(files).toEqual(Object.keys(FILES).sort());
  const readme = read("README.md");
  for (const file of files) expect(readme).toContain(`\`${file}\``);
});

describe.each(Object.entries(FILES))("%s", (file, { release, before, warnings }) => {
  const text = read(file);

  it("validates with no error by default, sequence rules included", () => {
    const result = validateTrajectory(text, { sequence: true });
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => w.rule)).toEqual(warnings);
  });

  it(`validates with the profile of its release (${release})`, () => {
    expect(validateTrajectory(text, { sequence: true, profile: release }).errors).toEqual([]);
  });

  it(`is rejected by the interface profile${before ? ` and by the profile of an earlier release (${before})` : ""}, naming the release`, () => {
    const strict = validateTrajectory(text, { profile: "interface" });
    expect(strict.ok).toBe(false);
    for (const issue of strict.errors) {
      expect(["unknownKind", "unknownProperty", "enum"]).toContain(issue.rule);
      expect(issue.message).toMatch(/in the interface profile[,:] .*(it|ClientAction kinds) came with OpenHands \d+\.\d+\.\d+ and (is|are) not in the interface 0\.1\.0 catalogue$/);
    }
    if (!before) return;
    const older = validateTrajectory(text, { profile: before });
    expect(older.ok).toBe(false);
    for (const issue of older.errors) {
      expect(issue.message).toMatch(new RegExp(`in profile ${before.replace(/\./g, "\\.")}[,:] .*(it came with OpenHands \\d+\\.\\d+\\.\\d+|OpenHands \\d+\\.\\d+\\.\\d+ removed it)$`));
    }
  });
});

/**
 * The profiles say what a release may write, not what it always writes: a field with a default is
 * optional, as on the wire (an older recording read back has it filled in). The fixtures are written
 * as their release writes, so they also carry the later additions that release always writes
 * (`parent_id`, `extended_content`, `classification`; see their descriptions in spec/).
 */
describe("each file carries what its release always writes", () => {
  const lines = (file: string) => read(file).split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Record<string, unknown>);
  const jsonl = Object.entries(FILES).filter(([file]) => file.endsWith(".jsonl"));
  const from = (release: Profile, since: string) => releaseNumber(release) >= releaseNumber(since);

  it.each(jsonl.filter(([, { release }]) => from(release, "1.34.0")))("%s: extended_content on every ObservationEvent (1.34.0 on, [] when empty)", (file) => {
    const missing = lines(file).flatMap((event, i) => (event.kind === "ObservationEvent" && !Array.isArray(event.extended_content) ? [`line ${i + 1}`] : []));
    expect(missing).toEqual([]);
  });

  it.each(jsonl.filter(([, { release }]) => from(release, "1.40.0")))("%s: classification on every AgentErrorEvent and ConversationErrorEvent (1.40.0 on)", (file) => {
    const missing = lines(file).flatMap((event, i) => ((event.kind === "AgentErrorEvent" || event.kind === "ConversationErrorEvent") && event.classification == null ? [`line ${i + 1}`] : []));
    expect(missing).toEqual([]);
  });

  it.each(jsonl.filter(([file, { release }]) => from(release, "1.31.0") && lines(file)[0]!.kind === "SystemPromptEvent"))("%s: parent_id on every event but the first of the conversation (1.31.0 on)", (file) => {
    const missing = lines(file).flatMap((event, i) => (i > 0 && event.parent_id == null ? [`line ${i + 1}`] : []));
    expect(missing).toEqual([]);
  });
});

describe("the interface profile names what is outside the interface 0.1.0 catalogue", () => {
  const errors = (file: string) => validateTrajectory(read(file), { profile: "interface" }).errors.map((e) => `${e.line ?? ""} ${e.pointer} ${e.rule}`);

  it("v1.40: parent_id, classification, a hook, a client tool, a task, extended_content, responses_item_id, an interrupt", () => {
    const found = errors("v1.40-conversation.jsonl");
    expect(found).toEqual(
      expect.arrayContaining([
        "1 /tools/5/kind unknownKind",
        "1 /tools/7/kind unknownKind",
        "2 /parent_id unknownProperty",
        "4 /action/kind unknownKind",
        "4 /tool_call/responses_item_id unknownProperty",
        "5 /observation/kind unknownKind",
        "8 /kind unknownKind",
        "8 /source enum",
        "9 /extended_content unknownProperty",
        "10 /action/kind unknownKind",
        "13 /classification unknownProperty",
        "20 /classification unknownProperty",
        "31 /kind unknownKind",
      ]),
    );
    // The first event has no parent; the MCP tool's `meta` and the condensations are core.
    expect(found.filter((e) => e.startsWith("1 "))).toHaveLength(3);
  });

  it("v1.11.5: only the Delegate tool, action and observation (the two bugs are fixed for the interface too)", () => {
    expect(validateTrajectory(read("v1.11.5-search-page.json"), { profile: "interface" }).errors.map((e) => [e.index, e.pointer, e.message])).toEqual([
      [0, "/tools/2/kind", 'unknown ToolDefinition kind "DelegateTool" in the interface profile: it came with OpenHands 1.9.0 and is not in the interface 0.1.0 catalogue'],
      [8, "/action/kind", 'unknown Action kind "DelegateAction" in the interface profile: it came with OpenHands 1.9.0 and is not in the interface 0.1.0 catalogue'],
      [9, "/observation/kind", 'unknown Observation kind "DelegateObservation" in the interface profile: it came with OpenHands 1.9.0 and is not in the interface 0.1.0 catalogue'],
    ]);
  });

  it("unknownKinds and unknownProperties: warn turn the profile's rejections into warnings", () => {
    const lenient = validateTrajectory(read("v1.40-conversation.jsonl"), { profile: "interface", unknownKinds: "warn", unknownProperties: "warn" });
    expect(lenient.errors.map((e) => [e.line, e.pointer, e.rule])).toEqual([[8, "/source", "enum"]]);
    expect(lenient.warnings.length).toBeGreaterThan(40);
  });
});
