import { describe, expectTypeOf, test } from "vitest";
import type {
  Action,
  ActionKind,
  BrowserScrollAction,
  DEFAULT_EVENT_SOURCE,
  EVENT_KINDS,
  Event,
  EventKind,
  EventSource,
  MessageEvent,
  Observation,
  ObservationKind,
  PauseEvent,
  TerminalAction,
  ToolDefinition,
  ToolKind,
  ConversationStateUpdateEvent,
} from "@acs-toolkit/schema";

const id = "974caa29-4f4b-4c30-b4e1-5169f41e6d3d";
const timestamp = "2026-02-05T11:24:47.142819";

describe("kind types equal the unions' discriminants", () => {
  test("EventKind", () => {
    expectTypeOf<EventKind>().toEqualTypeOf<Event["kind"]>();
    expectTypeOf<(typeof EVENT_KINDS)[number]>().toEqualTypeOf<Event["kind"]>();
  });
  test("ActionKind", () => expectTypeOf<ActionKind>().toEqualTypeOf<Action["kind"]>());
  test("ObservationKind", () => expectTypeOf<ObservationKind>().toEqualTypeOf<Observation["kind"]>());
  test("ToolKind", () => expectTypeOf<ToolKind>().toEqualTypeOf<ToolDefinition["kind"]>());
  test("DEFAULT_EVENT_SOURCE has one entry per kind", () => {
    expectTypeOf<keyof typeof DEFAULT_EVENT_SOURCE>().toEqualTypeOf<EventKind>();
    expectTypeOf<(typeof DEFAULT_EVENT_SOURCE)["PauseEvent"]>().toEqualTypeOf<EventSource | null>();
  });
});

describe("valid shapes compile", () => {
  test("events and actions", () => {
    const message: MessageEvent = {
      id,
      timestamp,
      source: "user",
      llm_message: { role: "user", content: [{ type: "text", text: "Run `pwd`." }] },
      kind: "MessageEvent",
    };
    const terminal: TerminalAction = { command: "pwd", kind: "TerminalAction" };
    const scroll: BrowserScrollAction = { direction: "up", kind: "BrowserScrollAction" };
    const events: Event[] = [message, { id, timestamp, kind: "PauseEvent" }];
    expectTypeOf(events).items.toEqualTypeOf<Event>();
    expectTypeOf([terminal, scroll]).items.toExtend<Action>();
  });
});

describe("wrong shapes do not compile", () => {
  test("a MessageEvent without llm_message", () => {
    // @ts-expect-error llm_message is required
    const message: MessageEvent = { id, timestamp, source: "user", kind: "MessageEvent" };
    void message;
  });

  test("a MessageEvent without source (it has no default)", () => {
    // @ts-expect-error source is required on MessageEvent
    const message: MessageEvent = { id, timestamp, llm_message: { role: "user" }, kind: "MessageEvent" };
    void message;
  });

  test("a TerminalAction whose command is a number", () => {
    // @ts-expect-error command is a string
    const action: TerminalAction = { command: 5, kind: "TerminalAction" };
    void action;
  });

  test("an unknown kind literal", () => {
    // @ts-expect-error no Event has this kind
    const event: Event = { id, timestamp, kind: "NoSuchEvent" };
    // @ts-expect-error not an EventKind
    const kind: EventKind = "ActionEvents";
    // @ts-expect-error an action kind is not an event kind
    const other: EventKind = "TerminalAction";
    void [event, kind, other];
  });

  test("a BrowserScrollAction that scrolls left", () => {
    // @ts-expect-error direction is up or down
    const action: BrowserScrollAction = { direction: "left", kind: "BrowserScrollAction" };
    void action;
  });

  test("unknown properties on events and actions", () => {
    // @ts-expect-error events reject unknown properties
    const pause: PauseEvent = { id, timestamp, kind: "PauseEvent", paused_by: "me" };
    // @ts-expect-error actions reject unknown properties
    const action: Action = { command: "pwd", kind: "TerminalAction", cwd: "/" };
    void [pause, action];
  });

  test("an event whose fields belong to another kind", () => {
    // @ts-expect-error a PauseEvent has no observation
    const event: Event = { id, timestamp, kind: "PauseEvent", observation: { kind: "FinishObservation" } };
    void event;
  });
});

describe("ConversationStateUpdateEvent.value", () => {
  test("is any JSON value, not only an object", () => {
    expectTypeOf<ConversationStateUpdateEvent["value"]>().toEqualTypeOf<unknown>();
  });
});
