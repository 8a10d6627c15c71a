/** The built-in scenarios: valid under the spec, coherent, deterministic, and covering every kind and variant. */
import { ACTION_KINDS, EVENT_KINDS, LIVE_ONLY_EVENT_KINDS, OBSERVATION_KINDS, TOOL_KINDS, isClientAction, type Event } from "@acs-toolkit/schema";
import { validateTrajectory } from "@acs-toolkit/validator";
import { eventTimeMicros } from "@acs-toolkit/server";
import { describe, expect, it } from "vitest";
import { BUILT_IN_SCENARIOS, DEFAULT_START, type Scenario } from "../src/index.js";

const build = (seed: number) => Object.values(BUILT_IN_SCENARIOS).map((make) => make({ seed, start: DEFAULT_START }));
const scenarios = build(1);
const byName = Object.fromEntries(scenarios.map((s) => [s.name, s])) as Record<string, Scenario>;

describe.each(scenarios.map((s) => [s.name, s] as const))("scenario %s", (_name, scenario) => {
  it("validates event by event against the spec", () => {
    const result = validateTrajectory(scenario.events);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it("is coherent: unique ids, time never going backwards, observations answering earlier actions", () => {
    const ids = scenario.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const times = scenario.events.map((e) => eventTimeMicros(e.timestamp)!);
    for (let i = 1; i < times.length; i++) expect(times[i]!, `event ${i}`).toBeGreaterThanOrEqual(times[i - 1]!);
    const seen = new Map<string, Event>();
    for (const event of scenario.events) {
      if (event.kind === "ObservationEvent" || event.kind === "UserRejectObservation") {
        const action = seen.get(event.action_id);
        expect(action?.kind, `${event.id} answers ${event.action_id}`).toBe("ActionEvent");
        expect(event.tool_call_id).toBe((action as { tool_call_id: string }).tool_call_id);
      }
      if (event.kind === "Condensation") for (const id of event.forgotten_event_ids ?? []) expect(seen.has(id)).toBe(true);
      seen.set(event.id, event);
    }
    expect(scenario.events[0]!.kind).toBe("SystemPromptEvent");
    expect(scenario.preload).toBeGreaterThan(0);
    expect(scenario.preload).toBeLessThanOrEqual(scenario.events.length);
  });
});

describe("the built-ins together", () => {
  const all = scenarios.flatMap((s) => s.events);

  it("use every event kind the agent server stores", () => {
    const live: readonly string[] = LIVE_ONLY_EVENT_KINDS;
    expect(new Set(all.map((e) => e.kind))).toEqual(new Set(EVENT_KINDS.filter((kind) => !live.includes(kind))));
  });

  it("use every Action, Observation and ToolDefinition variant", () => {
    const actions = new Set(all.flatMap((e) => (e.kind === "ActionEvent" && e.action && !isClientAction(e.action) ? [e.action.kind] : [])));
    expect(all.some((e) => e.kind === "ActionEvent" && isClientAction(e.action))).toBe(true);
    const observations = new Set(all.flatMap((e) => (e.kind === "ObservationEvent" ? [e.observation.kind] : [])));
    const tools = new Set(all.flatMap((e) => (e.kind === "SystemPromptEvent" ? e.tools.map((t) => t.kind) : [])));
    expect(actions).toEqual(new Set(ACTION_KINDS));
    expect(observations).toEqual(new Set(OBSERVATION_KINDS));
    expect(tools).toEqual(new Set(TOOL_KINDS));
  });

  it("tell their stories: tool errors, condensation, confirmation", () => {
    const kinds = (name: string) => new Set(byName[name]!.events.map((e) => e.kind));
    expect([...kinds("errors")]).toEqual(expect.arrayContaining(["AgentErrorEvent", "ConversationErrorEvent"]));
    expect(byName.errors!.events.some((e) => e.kind === "ObservationEvent" && e.observation.is_error === true)).toBe(true);
    expect(byName.errors!.finalStatus).toBe("ERROR");
    expect([...kinds("condensation")]).toEqual(expect.arrayContaining(["Condensation", "CondensationRequest"]));
    expect([...kinds("confirmation")]).toEqual(expect.arrayContaining(["UserRejectObservation", "PauseEvent"]));
    expect(byName.confirmation!.events.some((e) => e.kind === "ConversationStateUpdateEvent" && e.key === "confirmation_policy")).toBe(true);
    expect(byName.long!.events.length).toBeGreaterThanOrEqual(5_000);
  });

  it("are deterministic under a seed, and another seed changes them", () => {
    expect(build(1)).toEqual(scenarios);
    const other = build(2);
    expect(other.map((s) => s.conversationId)).not.toEqual(scenarios.map((s) => s.conversationId));
    expect(other[0]!.events[1]!.id).not.toBe(scenarios[0]!.events[1]!.id);
    expect(new Set([...scenarios, ...other].map((s) => s.conversationId)).size).toBe(scenarios.length * 2);
  });
});
