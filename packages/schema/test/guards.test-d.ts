import { describe, expectTypeOf, test } from "vitest";
import {
  isActionEvent,
  isActionKind,
  isEventKind,
  isFileEditorAction,
  isMessageEvent,
  isObservationEvent,
  isTerminalAction,
  isTerminalObservation,
  isTerminalTool,
  type Action,
  type ActionEvent,
  type Event,
  type EventKind,
  type Message,
  type Observation,
  type ObservationEvent,
  type TerminalObservation,
  type ToolDefinition,
} from "@acs-toolkit/schema";

declare const event: Event;

describe("event guards narrow the Event union", () => {
  test("isActionEvent", () => {
    if (isActionEvent(event)) {
      expectTypeOf(event).toEqualTypeOf<ActionEvent>();
      expectTypeOf(event.action).toEqualTypeOf<Action | null | undefined>();
      expectTypeOf(event.tool_call.arguments).toBeString();
    } else {
      expectTypeOf(event).toEqualTypeOf<Exclude<Event, ActionEvent>>();
      // @ts-expect-error only an ActionEvent has an action
      void event.action;
    }
  });

  test("isObservationEvent", () => {
    if (isObservationEvent(event)) {
      expectTypeOf(event).toEqualTypeOf<ObservationEvent>();
      expectTypeOf(event.observation).toEqualTypeOf<Observation>();
      expectTypeOf(event.action_id).toBeString();
    }
  });

  test("isMessageEvent", () => {
    if (isMessageEvent(event)) {
      expectTypeOf(event.llm_message).toEqualTypeOf<Message>();
      expectTypeOf(event.source).toEqualTypeOf<"agent" | "user" | "environment" | "hook">();
    }
  });

  test("guards take an Event, not anything", () => {
    // @ts-expect-error a plain object is not an Event
    isActionEvent({ kind: "ActionEvent" });
    expectTypeOf(isActionEvent).parameter(0).toEqualTypeOf<Event>();
  });
});

describe("variant guards narrow nested unions", () => {
  test("action and observation of events", () => {
    if (isActionEvent(event) && isTerminalAction(event.action)) {
      expectTypeOf(event.action.command).toBeString();
      expectTypeOf(event.action.timeout).toEqualTypeOf<number | null | undefined>();
    }
    if (isActionEvent(event) && isFileEditorAction(event.action)) {
      expectTypeOf(event.action.command).toEqualTypeOf<"view" | "create" | "str_replace" | "insert" | "undo_edit">();
    }
    if (isObservationEvent(event) && isTerminalObservation(event.observation)) {
      expectTypeOf(event.observation).toEqualTypeOf<TerminalObservation>();
      expectTypeOf(event.observation.exit_code).toEqualTypeOf<number | null | undefined>();
    }
  });

  test("variant guards accept null and undefined", () => {
    expectTypeOf(isTerminalAction).parameter(0).toEqualTypeOf<Action | null | undefined>();
    expectTypeOf(isTerminalObservation).parameter(0).toEqualTypeOf<Observation | null | undefined>();
    expectTypeOf(isTerminalTool).parameter(0).toEqualTypeOf<ToolDefinition | null | undefined>();
  });
});

test("kind predicates narrow unknown values", () => {
  const value: unknown = "ActionEvent";
  if (isEventKind(value)) expectTypeOf(value).toEqualTypeOf<EventKind>();
  if (isActionKind(value)) expectTypeOf(value).toEqualTypeOf<Action["kind"]>();
});

test("a switch over kind is exhaustive", () => {
  const describeEvent = (e: Event): string => {
    switch (e.kind) {
      case "ActionEvent":
        return e.tool_name;
      case "ObservationEvent":
        return e.observation.kind;
      case "MessageEvent":
        return e.llm_message.role;
      case "Condensation":
      case "CondensationRequest":
      case "CondensationSummaryEvent":
      case "ConversationErrorEvent":
      case "ConversationStateUpdateEvent":
      case "LLMCompletionLogEvent":
      case "AgentErrorEvent":
      case "UserRejectObservation":
      case "SystemPromptEvent":
      case "TokenEvent":
      case "PauseEvent":
      case "ACPToolCallEvent":
      case "HookExecutionEvent":
      case "ServerErrorEvent":
      case "StreamingDeltaEvent":
      case "InterruptEvent":
        return e.kind;
      default:
        expectTypeOf(e).toBeNever();
        return e;
    }
  };
  expectTypeOf(describeEvent).returns.toBeString();
});
