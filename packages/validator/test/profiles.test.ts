/**
 * Profiles: the default accepts every shipped release, "interface" exactly the interface 0.1.0
 * catalogue, a release what it writes; and the fast and full validators agree under each of them.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { KIND_RELEASES } from "@acs-toolkit/schema";
import * as fast from "../generated/validators-fast.js";
import * as full from "../generated/validators-full.js";
import { DEFAULT_PROFILE, FIRST_RELEASE, formatIssue, isProfile, validateEvent, validateTrajectory, type Profile } from "../src/index.js";
import { profileRelease } from "../src/profile.js";
import { allExamples, example } from "./support.js";

/** The kinds an event holds: its own, its action's or observation's, its tools'. */
function kindsOf(event: Record<string, any>): string[] {
  const action = event.action?.kind as string | undefined;
  return [event.kind, ...(action ? [action.startsWith("ClientAction_") ? "ClientAction_<name>" : action] : []), event.observation?.kind, ...(event.tools ?? []).map((t: { kind: string }) => t.kind)].filter(Boolean);
}

describe("profile names", () => {
  it.each(["releases", "interface", "1.9.0", "1.11.5", "1.43.1", "2.0.0"])("%s is a profile", (name) => {
    expect(isProfile(name)).toBe(true);
    expect(() => validateEvent(example("PauseEvent"), { profile: name as Profile })).not.toThrow();
  });

  it.each(["", "latest", "1.8.9", "0.1.0", "v1.11.5", "1.11", "1.11.5.1", " 1.11.5"])("%j is not, and validation says which are", (name) => {
    expect(isProfile(name)).toBe(false);
    expect(() => validateEvent(example("PauseEvent"), { profile: name as Profile })).toThrow(
      new TypeError(`unknown validator profile ${JSON.stringify(name)}: use "releases" (the default), "interface", or a release from 1.9.0 on such as "1.11.5"`),
    );
  });

  it("the default is every release, from the first the markings cover", () => {
    expect(DEFAULT_PROFILE).toBe("releases");
    expect(FIRST_RELEASE).toBe("1.9.0");
    expect(profileRelease(undefined)).toBeUndefined();
    expect(profileRelease("releases")).toBeUndefined();
    expect(profileRelease("interface")).toBe(0);
    expect(profileRelease("1.31.0")).toBe(1_031_000);
  });
});

describe("the spec's examples (every kind and variant)", () => {
  const events = allExamples() as Record<string, any>[];

  it("all validate by default", () => {
    for (const event of events) expect(validateEvent(event).errors.map(formatIssue), event.kind).toEqual([]);
  });

  it("under the interface profile, exactly those of the interface catalogue validate; the others name their kind's release", () => {
    for (const event of events) {
      const later = kindsOf(event).filter((kind) => kind in KIND_RELEASES);
      const result = validateEvent(event, { profile: "interface" });
      expect(result.ok, `${event.kind}: ${later.join(", ")}`).toBe(later.length === 0);
      const reported = result.errors.filter((e) => e.rule === "unknownKind").map((e) => e.message);
      expect(reported).toHaveLength(later.length);
      for (const [i, kind] of later.entries()) expect(reported[i]).toContain(`came with OpenHands ${KIND_RELEASES[kind]!.since}`);
    }
  });

  it.each(["1.12.0", "1.22.0", "1.31.0"] as const)("under profile %s, a kind is unknown exactly when its release lacks it", (profile) => {
    const release = profileRelease(profile)!;
    const lacks = (kind: string) => {
      const marks = KIND_RELEASES[kind];
      return marks !== undefined && (release < profileRelease(marks.since as Profile)! || (marks.removed !== undefined && release >= profileRelease(marks.removed as Profile)!));
    };
    for (const event of events) {
      const unknown = validateEvent(event, { profile }).errors.filter((e) => e.rule === "unknownKind");
      expect(unknown.length, kindsOf(event).join(", ")).toBe(kindsOf(event).filter(lacks).length);
    }
  });
});

describe("marked fields and values", () => {
  const at = (profile: Profile | undefined, event: Record<string, any>) => {
    const result = validateEvent(event, profile === undefined ? {} : { profile });
    return { errors: result.errors.map((e) => [e.pointer, e.rule]), warnings: result.warnings.map((w) => [w.pointer, w.rule]) };
  };

  it("parent_id: from 1.31.0", () => {
    const event = { ...example("PauseEvent"), parent_id: "__root__" };
    expect(at("1.31.0", event)).toEqual({ errors: [], warnings: [] });
    expect(at("1.30.9", event).errors).toEqual([["/parent_id", "unknownProperty"]]);
  });

  it("the hook source: from 1.13.0, an enum issue before", () => {
    const event = { ...example("MessageEvent"), source: "hook" };
    expect(at("1.13.0", event).errors).toEqual([]);
    expect(validateEvent(event, { profile: "1.12.0" }).errors.map(formatIssue)).toEqual([
      '/source: must be one of "agent", "user" or "environment" in profile 1.12.0, got "hook": it came with OpenHands 1.13.0',
    ]);
  });

  it("TextContent.enable_truncation: written up to 1.11.0 (a legacy warning), unknown from 1.11.1 (no warning beside the error)", () => {
    const event = example("MessageEvent");
    event.llm_message.content[0].enable_truncation = true;
    for (const profile of [undefined, "interface", "1.11.0"] as const) expect(at(profile, event), String(profile)).toEqual({ errors: [], warnings: [["/llm_message/content/0/enable_truncation", "legacyField"]] });
    expect(at("1.11.1", event)).toEqual({ errors: [["/llm_message/content/0/enable_truncation", "unknownProperty"]], warnings: [] });
    expect(validateEvent(event, { profile: "1.11.5" }).errors.map(formatIssue)).toEqual([
      "/llm_message/content/0/enable_truncation: is not a property of TextContent in profile 1.11.5: OpenHands 1.11.1 removed it",
    ]);
  });

  it("the legacy Message booleans: written up to 1.9.1", () => {
    const event = example("MessageEvent");
    event.llm_message.vision_enabled = false;
    expect(at("1.9.1", event).errors).toEqual([]);
    expect(at("1.10.0", event).errors).toEqual([["/llm_message/vision_enabled", "unknownProperty"]]);
  });

  it("DelegateTool: from 1.9.0, removed in 1.23.0; its action stays", () => {
    const system = example("SystemPromptEvent");
    system.tools = system.tools.filter((t: { kind: string }) => t.kind === "DelegateTool");
    expect(at("1.22.1", system).errors).toEqual([]);
    expect(validateEvent(system, { profile: "1.23.0" }).errors.map(formatIssue)).toEqual(['/tools/0/kind: unknown ToolDefinition kind "DelegateTool" in profile 1.23.0: OpenHands 1.23.0 removed it']);
    expect(at("1.40.0", example("ActionEvent", "DelegateAction")).errors).toEqual([]);
    expect(at(undefined, system).errors).toEqual([]);
  });

  it("an unknown kind lists only the profile's kinds", () => {
    const [strict] = validateEvent({ ...example("PauseEvent"), kind: "ResumeEvent" }, { profile: "interface" }).errors;
    expect(strict!.message).toMatch(/^unknown Event kind "ResumeEvent"; expected one of Condensation, .*, PauseEvent$/);
    const [all] = validateEvent({ ...example("PauseEvent"), kind: "ResumeEvent" }).errors;
    expect(all!.message).toMatch(/, PauseEvent, ACPToolCallEvent, HookExecutionEvent, ServerErrorEvent, StreamingDeltaEvent, InterruptEvent$/);
    const action = example("ActionEvent", "TerminalAction");
    action.action = { kind: "LookupAction" };
    expect(validateEvent(action).errors[0]!.message).toMatch(/, SleeptimeComputeAction, ClientAction_<tool name>$/);
    expect(validateEvent(action, { profile: "interface" }).errors[0]!.message).toMatch(/, TerminalAction$/);
  });

  it("a fragment stays a fragment under every profile (warnings, not errors)", () => {
    const observation = example("ObservationEvent", "FinishObservation");
    for (const profile of [undefined, "interface", "1.11.5"] as const) {
      expect(validateTrajectory([observation], { sequence: true, ...(profile && { profile }) }).errors, String(profile)).toEqual([]);
    }
  });
});

/**
 * Parts of the interface 0.1.0 catalogue (the catalogue of 1.11.5) that releases before it did not
 * write yet (`x-acs-core-since`): the interface profile and every later release accept them, the
 * profiles of earlier releases reject them, naming the field or kind and the release that brought it.
 * Checked against the SDK's tags (`system.py` and `observation.py` of event/llm_convertible, and
 * openhands-tools' browser_use/definition.py, at v1.11.2 / v1.11.3 and v1.11.4 / v1.11.5).
 */
describe("core additions of 1.11.3 and 1.11.5", () => {
  const withTools = (...kinds: string[]) => {
    const system = example("SystemPromptEvent");
    system.tools = kinds.map((kind) => system.tools.find((t: { kind: string }) => t.kind === kind));
    return system;
  };
  const CASES: Array<{ what: string; event: () => Record<string, any>; pointer: string; rule: string; message: string; since: Profile; before: Profile }> = [
    {
      what: "SystemPromptEvent.dynamic_context",
      event: () => ({ ...withTools("FinishTool"), dynamic_context: { cache_prompt: false, type: "text", text: "Working directory: /workspace" } }),
      pointer: "/dynamic_context",
      rule: "unknownProperty",
      message: "is not a property of SystemPromptEvent in profile 1.11.2: it came with OpenHands 1.11.3",
      since: "1.11.3",
      before: "1.11.2",
    },
    {
      what: "UserRejectObservation.rejection_source",
      event: () => ({ ...example("UserRejectObservation"), rejection_source: "hook" }),
      pointer: "/rejection_source",
      rule: "unknownProperty",
      message: "is not a property of UserRejectObservation in profile 1.11.2: it came with OpenHands 1.11.3",
      since: "1.11.3",
      before: "1.11.2",
    },
    ...(["BrowserStartRecordingAction", "BrowserStopRecordingAction"] as const).map((kind) => ({
      what: kind,
      event: () => example("ActionEvent", kind),
      pointer: "/action/kind",
      rule: "unknownKind",
      message: `unknown Action kind "${kind}" in profile 1.11.4: it came with OpenHands 1.11.5`,
      since: "1.11.5" as Profile,
      before: "1.11.4" as Profile,
    })),
    ...(["BrowserStartRecordingTool", "BrowserStopRecordingTool"] as const).map((kind) => ({
      what: kind,
      event: () => withTools("FinishTool", kind),
      pointer: "/tools/1/kind",
      rule: "unknownKind",
      message: `unknown ToolDefinition kind "${kind}" in profile 1.11.4: it came with OpenHands 1.11.5`,
      since: "1.11.5" as Profile,
      before: "1.11.4" as Profile,
    })),
  ];

  it.each(CASES)("$what: rejected by the profiles before $since, naming it; accepted from $since, by the interface profile and by default", ({ event, pointer, rule, message, since, before }) => {
    const value = event();
    for (const profile of ["1.9.0", before] as const) {
      const issues = validateEvent(value, { profile }).errors.map((e) => [e.pointer, e.rule]);
      expect(issues, profile).toEqual([[pointer, rule]]);
    }
    expect(validateEvent(value, { profile: before }).errors.map(formatIssue)).toEqual([`${pointer}: ${message}`]);
    for (const profile of [since, "1.43.1", "interface", undefined] as const) {
      expect(validateEvent(value, profile === undefined ? {} : { profile }).errors.map(formatIssue), String(profile)).toEqual([]);
    }
  });

  /** The built command (dist/cli.js) on one event from standard input, with the JSON report. */
  const acsValidate = (profile: Profile, event: unknown) => {
    const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/cli.js");
    const run = spawnSync(process.execPath, [cli, "--profile", profile, "--format", "json", "--no-progress", "-"], { input: JSON.stringify(event), encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
    return { code: run.status, issues: (JSON.parse(run.stdout) as { issues: Array<{ pointer: string; message: string }> }).issues.map((i) => [i.pointer, i.message]) };
  };

  it.each(CASES)("$what: acs-validate --profile $before fails naming it, --profile $since passes", ({ event, pointer, message, since, before }) => {
    expect(acsValidate(before, event())).toEqual({ code: 1, issues: [[pointer, message]] });
    expect(acsValidate(since, event())).toEqual({ code: 0, issues: [] });
  });

  it("a kind of the core that a release profile lacks is not listed among the kinds it expects", () => {
    const action = example("ActionEvent", "TerminalAction");
    action.action = { kind: "BrowserStartRecordingActon" };
    expect(validateEvent(action, { profile: "1.11.5" }).errors[0]!.message).toBe('unknown Action kind "BrowserStartRecordingActon"; did you mean "BrowserStartRecordingAction"?');
    expect(validateEvent(action, { profile: "1.11.4" }).errors[0]!.message).not.toContain("BrowserStartRecordingAction");
    expect(validateEvent(action, { profile: "interface" }).errors[0]!.message).toContain('did you mean "BrowserStartRecordingAction"?');
  });
});

describe("the fast and the full validator agree under every profile", () => {
  const variants = (): unknown[] => {
    const out: unknown[] = [];
    for (const event of allExamples() as Record<string, any>[]) {
      out.push(event, { ...event, parent_id: "__root__" }, { ...event, source: "hook" });
      if (event.kind === "ActionEvent") {
        out.push({ ...event, action: { kind: "ClientAction_x", any: 1 } }, { ...event, action: { kind: "ClientAction_" } }, { ...event, action: { ...event.action, kind: "ClientActionX" } });
      }
    }
    return out;
  };

  it.each([undefined, "interface", "1.9.0", "1.13.0", "1.28.0", "1.43.1"] as const)("%s", (profile) => {
    const release = profileRelease(profile);
    for (const value of variants()) {
      const quick = fast.validateEvent.call({ legacy: [], release }, value);
      full.validateEvent.call({ legacy: [], release }, value);
      expect(quick, JSON.stringify(value).slice(0, 200)).toBe((full.validateEvent.errors ?? []).length === 0);
    }
  });
});
