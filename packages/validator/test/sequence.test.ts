/** The sequence rules of the library: TrajectoryChecker, checkSequence, validateTrajectory({ sequence: true }). */
import { describe, expect, it } from "vitest";
import { checkSequence, SEQUENCE_RULES, TrajectoryChecker, validateTrajectory } from "../src/index.js";
import { allExamples, example, readCorpus } from "./support.js";

/** A small coherent trajectory: system prompt, user message, action, its observation, agent reply. */
function base() {
  const system = example("SystemPromptEvent");
  const user = example("MessageEvent");
  const action = example("ActionEvent", "TerminalAction");
  const observation = example("ObservationEvent", "TerminalObservation");
  const reply = example("MessageEvent");
  const events = [system, user, action, observation, reply];
  events.forEach((e, i) => {
    e.id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
    e.timestamp = `2026-02-05T11:24:4${i}.000001`;
  });
  action.tool_call_id = "call_a";
  action.tool_call.id = "call_a";
  observation.tool_call_id = "call_a";
  observation.action_id = action.id;
  return { events, system, user, action, observation, reply };
}

/** A Condensation forgetting `forgotten(its own id)`. */
function condensation(forgotten: (id: string) => string[], timestamp = "2026-02-05T11:24:50", id = "00000000-0000-4000-8000-000000000005"): Record<string, any> {
  return { ...example("Condensation"), id, timestamp, forgotten_event_ids: forgotten(id) };
}

const codes = (events: unknown[]) => {
  const result = checkSequence(events);
  return { errors: result.errors.map((e) => [e.index, e.rule, e.pointer]), warnings: result.warnings.map((w) => [w.index, w.rule, w.pointer]) };
};

describe("a coherent trajectory", () => {
  it("breaks no sequence rule", () => {
    expect(codes(base().events)).toEqual({ errors: [], warnings: [] });
  });

  it("the spec's example trajectory (every kind) breaks none", () => {
    expect(checkSequence(allExamples())).toMatchObject({ ok: true, errors: [], warnings: [] });
  });

  it.each(["conversation-2026-02-05.jsonl", "conversation-2026-03-01.jsonl"])("the recorded %s breaks none", (file) => {
    expect(validateTrajectory(readCorpus(file), { sequence: true })).toMatchObject({ ok: true, errors: [], warnings: [] });
  });

  it("every rule has a code, a severity and a summary", () => {
    expect(SEQUENCE_RULES.map((r) => r.rule)).toEqual([
      "sequence/duplicate-id",
      "sequence/orphan-observation",
      "sequence/tool-call-answered-twice",
      "sequence/unknown-forgotten-id",
      "sequence/unknown-parent",
      "sequence/timestamp-backwards",
      "sequence/system-prompt-not-first",
      "sequence/reference-outside-fragment",
    ]);
    expect(SEQUENCE_RULES.filter((r) => r.severity === "warning").map((r) => r.rule)).toEqual(["sequence/system-prompt-not-first", "sequence/reference-outside-fragment"]);
  });
});

/** Each case breaks one rule once; `index` and `pointer` say where it must be reported. */
const breaking: { name: string; rule: string; index: number; pointer: string; message: RegExp; build: () => unknown[] }[] = [
  {
    name: "two events share an id",
    rule: "sequence/duplicate-id",
    index: 4,
    pointer: "/id",
    message: /^"00000000-0000-4000-8000-000000000001" is already the id of the event at index 1$/,
    build: () => {
      const t = base();
      t.reply.id = t.user.id;
      return t.events;
    },
  },
  {
    name: "an observation names an action that does not exist",
    rule: "sequence/orphan-observation",
    index: 3,
    pointer: "/action_id",
    message: /names no earlier event: it should name the ActionEvent at index 2, which made tool call "call_a"$/,
    build: () => {
      const t = base();
      t.observation.action_id = "00000000-0000-4000-8000-00000000ffff";
      return t.events;
    },
  },
  {
    name: "an observation answers a tool call no action made",
    rule: "sequence/orphan-observation",
    index: 3,
    pointer: "/tool_call_id",
    message: /^"call_zzz" is the tool call of no earlier ActionEvent: a ObservationEvent answers one$/,
    build: () => {
      const t = base();
      t.observation.tool_call_id = "call_zzz";
      return t.events;
    },
  },
  {
    name: "an observation comes before its action",
    rule: "sequence/orphan-observation",
    index: 2,
    pointer: "/action_id",
    message: /names no earlier event/,
    build: () => {
      const t = base();
      return [t.system, t.user, t.observation, t.action, t.reply].map((e, i) => ({ ...e, timestamp: `2026-02-05T11:24:4${i}` }));
    },
  },
  {
    name: "an observation names a message instead of its action",
    rule: "sequence/orphan-observation",
    index: 3,
    pointer: "/action_id",
    message: /^names the event at index 1: it should name the ActionEvent at index 2, which made tool call "call_a"$/,
    build: () => {
      const t = base();
      t.observation.action_id = t.user.id;
      return t.events;
    },
  },
  {
    name: "a user rejection of an action that does not exist",
    rule: "sequence/orphan-observation",
    index: 3,
    pointer: "/action_id",
    message: /a UserRejectObservation answers an earlier ActionEvent$/,
    build: () => {
      const t = base();
      const reject = { ...example("UserRejectObservation"), id: t.observation.id, timestamp: t.observation.timestamp, tool_call_id: "call_b", action_id: "00000000-0000-4000-8000-00000000ffff" };
      return [t.system, t.user, t.action, reject, t.reply];
    },
  },
  {
    name: "an agent error for a tool call no action made",
    rule: "sequence/orphan-observation",
    index: 3,
    pointer: "/tool_call_id",
    message: /^"call_b" is the tool call of no earlier ActionEvent: a AgentErrorEvent answers one$/,
    build: () => {
      const t = base();
      const error = { ...example("AgentErrorEvent"), id: t.observation.id, timestamp: t.observation.timestamp, tool_call_id: "call_b" };
      return [t.system, t.user, t.action, error, t.reply];
    },
  },
  {
    name: "a tool call answered by an observation and then an agent error",
    rule: "sequence/tool-call-answered-twice",
    index: 4,
    pointer: "/tool_call_id",
    message: /^tool call "call_a" was already answered, by the event at index 3$/,
    build: () => {
      const t = base();
      const error = { ...example("AgentErrorEvent"), id: t.reply.id, timestamp: t.reply.timestamp, tool_call_id: "call_a" };
      return [t.system, t.user, t.action, t.observation, error];
    },
  },
  {
    name: "a tool call observed twice",
    rule: "sequence/tool-call-answered-twice",
    index: 4,
    pointer: "/tool_call_id",
    message: /already answered/,
    build: () => {
      const t = base();
      return [...t.events.slice(0, 4), { ...t.observation, id: t.reply.id, timestamp: t.reply.timestamp }];
    },
  },
  {
    name: "a condensation forgets an id that does not exist",
    rule: "sequence/unknown-forgotten-id",
    index: 5,
    pointer: "/forgotten_event_ids/1",
    message: /^"00000000-0000-4000-8000-00000000dead" names no earlier event of the trajectory$/,
    build: () => {
      const t = base();
      return [...t.events, condensation(() => [t.user.id, "00000000-0000-4000-8000-00000000dead"])];
    },
  },
  {
    name: "a condensation forgets itself",
    rule: "sequence/unknown-forgotten-id",
    index: 5,
    pointer: "/forgotten_event_ids/0",
    message: /^"00000000-0000-4000-8000-000000000005" is this condensation's own id$/,
    build: () => {
      const t = base();
      return [...t.events, condensation((id) => [id])];
    },
  },
  {
    name: "a condensation forgets an event that comes later",
    rule: "sequence/unknown-forgotten-id",
    index: 2,
    pointer: "/forgotten_event_ids/0",
    message: /names no earlier event/,
    build: () => {
      const t = base();
      return [t.system, t.user, condensation(() => [t.reply.id], t.action.timestamp), t.reply];
    },
  },
  {
    name: "a condensation forgets the summary of a condensation that does not exist",
    rule: "sequence/unknown-forgotten-id",
    index: 5,
    pointer: "/forgotten_event_ids/0",
    message: /^"00000000-0000-4000-8000-00000000dead-summary" names no earlier event of the trajectory$/,
    build: () => {
      const t = base();
      return [...t.events, condensation(() => ["00000000-0000-4000-8000-00000000dead-summary"])];
    },
  },
  {
    name: "a parent that does not exist",
    rule: "sequence/unknown-parent",
    index: 4,
    pointer: "/parent_id",
    message: /^"00000000-0000-4000-8000-00000000dead" names no earlier event of the trajectory$/,
    build: () => {
      const t = base();
      return [...t.events.slice(0, 4), { ...t.reply, parent_id: "00000000-0000-4000-8000-00000000dead" }];
    },
  },
  {
    name: "a parent that comes later",
    rule: "sequence/unknown-parent",
    index: 3,
    pointer: "/parent_id",
    message: /names no earlier event/,
    build: () => {
      const t = base();
      return [t.system, t.user, t.action, { ...t.observation, parent_id: t.reply.id }, t.reply];
    },
  },
  {
    name: "an event that is its own parent",
    rule: "sequence/unknown-parent",
    index: 1,
    pointer: "/parent_id",
    message: /^"00000000-0000-4000-8000-000000000001" is the event's own id$/,
    build: () => {
      const t = base();
      return [t.system, { ...t.user, parent_id: t.user.id }, ...t.events.slice(2)];
    },
  },
  {
    name: "a timestamp earlier than the one before",
    rule: "sequence/timestamp-backwards",
    index: 3,
    pointer: "/timestamp",
    message: /^"2026-02-05T11:24:41.5" is earlier than "2026-02-05T11:24:42.000001", the timestamp of the event before it \(at index 2\)$/,
    build: () => {
      const t = base();
      t.observation.timestamp = "2026-02-05T11:24:41.5";
      t.reply.timestamp = "2026-02-05T11:24:44";
      return t.events;
    },
  },
  {
    name: "a timestamp earlier by a microsecond",
    rule: "sequence/timestamp-backwards",
    index: 3,
    pointer: "/timestamp",
    message: /is earlier than/,
    build: () => {
      const t = base();
      t.action.timestamp = "2026-02-05T11:24:42.000002";
      t.observation.timestamp = "2026-02-05T11:24:42.000001";
      return t.events;
    },
  },
  {
    name: "an offset timestamp that is earlier as an instant, though later as text",
    rule: "sequence/timestamp-backwards",
    index: 3,
    pointer: "/timestamp",
    message: /is earlier than/,
    build: () => {
      const t = base();
      t.action.timestamp = "2026-02-05T11:24:42Z";
      t.observation.timestamp = "2026-02-05T12:24:41+01:00"; // 11:24:41 UTC
      return t.events;
    },
  },
];

describe.each(breaking)("$name", ({ rule, index, pointer, message, build }) => {
  it(`is one ${rule} error at event ${index}, ${pointer}`, () => {
    const events = build();
    const result = checkSequence(events);
    expect(result.errors.map((e) => [e.rule, e.index, e.pointer])).toEqual([[rule, index, pointer]]);
    expect(result.errors[0]!.message).toMatch(message);
    expect(result.ok).toBe(false);
  });

  it("is reported by validateTrajectory with { sequence: true } only", () => {
    const events = build();
    expect(validateTrajectory(events, { sequence: true }).errors.map((e) => e.rule)).toContain(rule);
    expect(validateTrajectory(events).errors.map((e) => e.rule)).not.toContain(rule);
  });
});

describe("the system prompt comes first (a warning)", () => {
  it("a trajectory that starts with something else", () => {
    const t = base();
    const result = checkSequence(t.events.slice(1));
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => [w.rule, w.index, w.pointer, w.message])).toEqual([
      [
        "sequence/system-prompt-not-first",
        0,
        "/kind",
        "the trajectory starts with a MessageEvent, not a SystemPromptEvent: it is read as a fragment of a longer conversation, so references to events before it are warnings",
      ],
    ]);
  });

  it("state updates and pauses before the system prompt (a policy set, a pause asked for before the first message) do not make a fragment", () => {
    const t = base();
    const update = (n: number, key: string, value: unknown) => ({ ...example("ConversationStateUpdateEvent"), id: `00000000-0000-4000-8000-00000000010${n}`, timestamp: "2026-02-05T11:24:39", key, value });
    const pause = { ...example("PauseEvent"), id: "00000000-0000-4000-8000-000000000103", timestamp: "2026-02-05T11:24:39" };
    const events = [update(1, "confirmation_policy", { kind: "AlwaysConfirm" }), pause, update(2, "security_analyzer", null), ...t.events];
    expect(codes(events)).toEqual({ errors: [], warnings: [] });
    // Not a fragment: a reference to an event it does not hold is an error.
    expect(codes([...events.slice(0, 4), { ...t.observation, action_id: "00000000-0000-4000-8000-00000000ffff" }]).errors).toContainEqual([4, "sequence/orphan-observation", "/action_id"]);
  });

  it("state updates, then something else than the system prompt: a fragment, said after the updates", () => {
    const t = base();
    const update = { ...example("ConversationStateUpdateEvent"), id: "00000000-0000-4000-8000-000000000101", timestamp: "2026-02-05T11:24:39" };
    const result = checkSequence([update, ...t.events.slice(1)]);
    expect(result.warnings.map((w) => [w.index, w.message])).toEqual([
      [1, "after 1 state update or pause, the trajectory goes on with a MessageEvent, not a SystemPromptEvent: it is read as a fragment of a longer conversation, so references to events before it are warnings"],
    ]);
  });

  it("a system prompt further on", () => {
    const t = base();
    const result = checkSequence([t.system, t.user, { ...t.system, id: "00000000-0000-4000-8000-000000000009", timestamp: "2026-02-05T11:24:42" }]);
    expect(result.warnings.map((w) => [w.index, w.message])).toEqual([[2, "a SystemPromptEvent should be the first event of the trajectory; this one comes after 2 others"]]);
  });
});

describe("parents and forgotten summaries (releases 1.31.0, 1.11.5)", () => {
  it("a parent is an earlier event, __root__ or null; state updates and branches included", () => {
    const t = base();
    const state = { ...example("ConversationStateUpdateEvent"), id: "00000000-0000-4000-8000-0000000000f1", timestamp: "2026-02-05T11:24:42.5", parent_id: t.action.id };
    const sibling = { ...t.reply, id: "00000000-0000-4000-8000-0000000000f2", timestamp: "2026-02-05T11:24:45", parent_id: t.observation.id };
    const root = { ...example("PauseEvent"), id: "00000000-0000-4000-8000-0000000000f3", timestamp: "2026-02-05T11:24:46", parent_id: "__root__" };
    const events = [t.system, { ...t.user, parent_id: null }, { ...t.action, parent_id: t.user.id }, state, { ...t.observation, parent_id: t.action.id }, { ...t.reply, parent_id: t.observation.id }, sibling, root];
    expect(codes(events)).toEqual({ errors: [], warnings: [] });
  });

  it("a condensation may forget an earlier condensation's summary (<id>-summary), which is never stored", () => {
    const t = base();
    const first = condensation(() => [t.user.id], "2026-02-05T11:24:50", "00000000-0000-4000-8000-0000000000c1");
    const second = condensation(() => [`${first.id}-summary`, t.action.id, t.observation.id], "2026-02-05T11:24:51", "00000000-0000-4000-8000-0000000000c2");
    expect(codes([...t.events, first, second])).toEqual({ errors: [], warnings: [] });
  });
});

describe("fragments: a trajectory that does not start with a SystemPromptEvent", () => {
  /** The window of a longer conversation that starts at the observation of an action recorded before it. */
  function window() {
    const t = base();
    const forgets = condensation(() => [t.user.id, t.observation.id, "00000000-0000-4000-8000-0000000000c0-summary"], "2026-02-05T11:24:50", "00000000-0000-4000-8000-0000000000c1");
    const error = { ...example("AgentErrorEvent"), id: "00000000-0000-4000-8000-0000000000e1", timestamp: "2026-02-05T11:24:51", tool_call_id: "call_before" };
    const reply = { ...t.reply, parent_id: t.action.id };
    return { t, events: [t.observation, reply, forgets, error] };
  }

  it("reports references to events outside it as warnings of their own rule, not errors", () => {
    const result = checkSequence(window().events);
    expect(result.ok).toBe(true);
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => [w.index, w.rule, w.pointer])).toEqual([
      [0, "sequence/system-prompt-not-first", "/kind"],
      [0, "sequence/reference-outside-fragment", "/action_id"],
      [1, "sequence/reference-outside-fragment", "/parent_id"],
      [2, "sequence/reference-outside-fragment", "/forgotten_event_ids/0"],
      [2, "sequence/reference-outside-fragment", "/forgotten_event_ids/2"],
      [3, "sequence/reference-outside-fragment", "/tool_call_id"],
    ]);
    expect(result.warnings[1]!.message).toBe('"00000000-0000-4000-8000-000000000002" names no event of this fragment: the ActionEvent this ObservationEvent answers may come before it');
    expect(result.warnings[2]!.message).toBe('"00000000-0000-4000-8000-000000000002" names no event of this fragment: it may name one recorded before it');
    expect(result.warnings[5]!.message).toBe('tool call "call_before" was made by no ActionEvent of this fragment: it may be one recorded before it');
    const checker = new TrajectoryChecker();
    checker.check(window().events[0]);
    expect(checker.isFragment).toBe(true);
  });

  it("the same references are errors in a whole trajectory (starting with a SystemPromptEvent)", () => {
    const { t, events } = window();
    const result = checkSequence([t.system, ...events]);
    expect(result.ok).toBe(false);
    expect(result.errors.map((e) => [e.index, e.rule, e.pointer])).toEqual([
      [1, "sequence/orphan-observation", "/action_id"],
      [2, "sequence/unknown-parent", "/parent_id"],
      [3, "sequence/unknown-forgotten-id", "/forgotten_event_ids/0"],
      [3, "sequence/unknown-forgotten-id", "/forgotten_event_ids/2"],
      [4, "sequence/orphan-observation", "/tool_call_id"],
    ]);
    expect(result.warnings).toEqual([]);
  });

  it("what the fragment itself contradicts stays an error", () => {
    const t = base();
    const observedTwice = { ...t.observation, id: "00000000-0000-4000-8000-0000000000d1", timestamp: "2026-02-05T11:24:45" };
    const namesMessage = { ...t.observation, id: "00000000-0000-4000-8000-0000000000d2", timestamp: "2026-02-05T11:24:46", tool_call_id: "call_b", action_id: t.user.id };
    const backwards = { ...t.reply, id: "00000000-0000-4000-8000-0000000000d3", timestamp: "2026-02-05T11:00:00" };
    const result = checkSequence([t.user, t.action, t.observation, observedTwice, namesMessage, t.user, backwards]);
    expect(result.errors.map((e) => [e.index, e.rule])).toEqual([
      [3, "sequence/tool-call-answered-twice"],
      [4, "sequence/orphan-observation"],
      [5, "sequence/duplicate-id"],
      [5, "sequence/timestamp-backwards"],
      [6, "sequence/timestamp-backwards"],
    ]);
  });

  it("validateTrajectory({ sequence: true }) passes a fragment with warnings", () => {
    const result = validateTrajectory(window().events, { sequence: true });
    expect(result.errors).toEqual([]);
    expect(result.warnings.filter((w) => w.rule === "sequence/reference-outside-fragment")).toHaveLength(5);
  });
});

describe("timestamps compare as instants", () => {
  const at = (...timestamps: string[]) =>
    checkSequence(timestamps.map((timestamp, i) => ({ kind: "PauseEvent", id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`, timestamp }))).errors.map((e) => e.index);

  it.each([
    ["no offset is UTC", ["2026-02-05T11:24:45", "2026-02-05T11:24:45Z", "2026-02-05T11:24:45+00:00"], []],
    ["an offset moves the instant", ["2026-02-05T11:24:45Z", "2026-02-05T12:24:44+01:00"], [1]],
    ["a negative offset, without colon", ["2026-02-05T11:24:45Z", "2026-02-05T06:24:46-0500"], []],
    ["fractions of any length, to the microsecond", ["2026-02-05T11:24:45.1", "2026-02-05T11:24:45.1000001", "2026-02-05T11:24:45.0999999"], [2]],
    ["digits past the sixth are dropped, as the SDK reads them", ["2026-02-05T11:24:45.1000009", "2026-02-05T11:24:45.1000001"], []],
    ["equal instants are not backwards", ["2026-02-05T11:24:45.500", "2026-02-05T11:24:45.5"], []],
    ["across midnight and a year", ["2025-12-31T23:59:59.999999", "2026-01-01T00:00:00"], []],
    ["across days, backwards", ["2026-02-06T00:00:00", "2026-02-05T23:59:59"], [1]],
    ["lowercase z and t", ["2026-02-05t11:24:45z", "2026-02-05T11:24:44Z"], [1]],
  ])("%s", (_name, timestamps, expected) => {
    expect(at(...timestamps)).toEqual(expected);
  });

  it("an unreadable timestamp is skipped (the schema reports it), and the next compares with the last readable one", () => {
    expect(at("2026-02-05T11:24:45", "yesterday", "2026-02-05T11:24:44")).toEqual([2]);
    expect(at("2026-02-05T11:24:45", "2026-02-05T11:24:4x", "2026-02-05T11:24:46")).toEqual([]);
  });

  it("one misplaced event is one error, not one per later event", () => {
    expect(at("2026-02-05T11:24:45", "2027-01-01T00:00:00", "2026-02-05T11:24:46", "2026-02-05T11:24:47")).toEqual([2]);
  });
});

describe("TrajectoryChecker", () => {
  it("names earlier events by line when lines are given", () => {
    const t = base();
    t.reply.id = t.user.id;
    const checker = new TrajectoryChecker();
    const results = t.events.map((e, i) => checker.check(e, i * 2 + 1));
    expect(results[4]!.errors[0]!.message).toBe('"00000000-0000-4000-8000-000000000001" is already the id of the event at line 3');
    expect(checker.count).toBe(5);
  });

  it("takes anything in an event's place and breaks no rule with it", () => {
    const checker = new TrajectoryChecker();
    for (const value of [undefined, null, 5, "text", [], [1], { kind: 5, id: 7, timestamp: false, forgotten_event_ids: "x" }]) {
      expect(checker.check(value)).toEqual({ errors: [], warnings: expect.any(Array) });
    }
    expect(checker.count).toBe(7);
    const throwing = new Proxy({}, { get: () => { throw new Error("no"); } });
    expect(checker.check(throwing).errors).toEqual([]);
  });

  it("an id seen twice is reported each time it comes back", () => {
    const e = { kind: "PauseEvent", id: "00000000-0000-4000-8000-000000000001", timestamp: "2026-02-05T11:24:45" };
    expect(codes([example("SystemPromptEvent"), e, e, e]).errors).toEqual([
      [2, "sequence/duplicate-id", "/id"],
      [3, "sequence/duplicate-id", "/id"],
    ]);
  });

  it("ULIDs, -summary ids and uppercase UUIDs are ids too, each distinct", () => {
    const ids = ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAV-summary", "00000000-0000-4000-8000-00000000000A", "00000000-0000-4000-8000-00000000000a", "01arz3ndektsv4rrffq69g5fav"];
    const events = ids.map((id) => ({ kind: "PauseEvent", id }));
    expect(checkSequence([...events, ...events]).errors.map((e) => [e.index, e.rule])).toEqual(ids.map((_, i) => [ids.length + i, "sequence/duplicate-id"]));
  });

  it("parallel tool calls: several actions, then their observations in any order", () => {
    const t = base();
    const second = { ...t.action, id: "00000000-0000-4000-8000-0000000000b2", tool_call_id: "call_b", tool_call: { ...t.action.tool_call, id: "call_b" } };
    const observeSecond = { ...t.observation, id: "00000000-0000-4000-8000-0000000000c2", tool_call_id: "call_b", action_id: second.id };
    const events = [t.system, t.user, t.action, second, observeSecond, t.observation, t.reply].map((e, i) => ({ ...e, timestamp: `2026-02-05T11:24:4${i}` }));
    expect(codes(events)).toEqual({ errors: [], warnings: [] });
  });

  it("a million events: ids stay exact through every table growth", () => {
    const checker = new TrajectoryChecker();
    let errors = 0;
    const id = (i: number) => `${(i * 2654435761 >>> 0).toString(16).padStart(8, "0")}-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
    for (let i = 0; i < 1_000_000; i++) errors += checker.check({ kind: "PauseEvent", id: id(i) }).errors.length;
    expect(errors).toBe(0);
    // Every earlier id is found again: each repeat is a duplicate naming the right index.
    for (const i of [0, 1, 4095, 65_536, 999_999]) {
      const result = checker.check({ kind: "PauseEvent", id: id(i) });
      expect(result.errors.map((e) => e.message)).toEqual([`"${id(i)}" is already the id of the event at index ${i}`]);
    }
  });
});
