/** Type tests of what later OpenHands releases added: new event kinds, fields and variants, client tools' actions. */
import { describe, expectTypeOf, test } from "vitest";
import {
  isActionEvent,
  isClientAction,
  isHookExecutionEvent,
  isInterruptEvent,
  isTaskAction,
  isTaskObservation,
  isClientTool,
  type Action,
  type ActionKind,
  type AgentErrorEvent,
  type ClientAction,
  type ErrorClassification,
  type Event,
  type EventSource,
  type HookEventType,
  type KindRelease,
  type KIND_RELEASES,
  type MCPToolDescription,
  type MessageToolCall,
  type ObservationEvent,
  type TaskAction,
  type TextContent,
} from "@acs-toolkit/schema";

declare const event: Event;
declare const tool: Parameters<typeof isClientTool>[0];

describe("new event kinds", () => {
  test("HookExecutionEvent narrows with its fields, source hook", () => {
    if (isHookExecutionEvent(event)) {
      expectTypeOf(event.hook_event_type).toEqualTypeOf<HookEventType>();
      expectTypeOf(event.blocked).toEqualTypeOf<boolean | undefined>();
      expectTypeOf(event.exit_code).toBeNumber();
      expectTypeOf(event.source).toEqualTypeOf<EventSource | undefined>();
      expectTypeOf<"hook">().toExtend<EventSource>();
    }
  });

  test("InterruptEvent has only the common fields", () => {
    if (isInterruptEvent(event)) {
      expectTypeOf(event.kind).toEqualTypeOf<"InterruptEvent">();
      // @ts-expect-error an InterruptEvent has no code
      void event.code;
    }
  });

  test("every event may carry a parent_id (release 1.31.0)", () => {
    expectTypeOf<Event["parent_id"]>().toEqualTypeOf<string | null | undefined>();
  });

  test("error events carry a classification (release 1.40.0)", () => {
    expectTypeOf<AgentErrorEvent["classification"]>().toEqualTypeOf<ErrorClassification | null | undefined>();
    expectTypeOf<ErrorClassification["kind"]>().toEqualTypeOf<
      "auth" | "quota" | "rate_limit" | "config" | "transient" | "agent_action" | "internal" | "unknown"
    >();
  });

  test("new fields of existing kinds", () => {
    expectTypeOf<ObservationEvent["extended_content"]>().toEqualTypeOf<TextContent[] | undefined>();
    expectTypeOf<MessageToolCall["responses_item_id"]>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<NonNullable<MCPToolDescription["annotations"]>["readOnlyHint"]>().toEqualTypeOf<boolean | null | undefined>();
  });
});

describe("new action variants and client tools", () => {
  test("TaskAction narrows", () => {
    if (isActionEvent(event) && isTaskAction(event.action)) {
      expectTypeOf(event.action).toEqualTypeOf<TaskAction>();
      expectTypeOf(event.action.prompt).toBeString();
      expectTypeOf(event.action.max_turns).toEqualTypeOf<number | null | undefined>();
    }
    if (event.kind === "ObservationEvent" && isTaskObservation(event.observation)) expectTypeOf(event.observation.task_id).toBeString();
  });

  test("a client tool's action has a ClientAction_<name> kind and free fields", () => {
    expectTypeOf<ClientAction["kind"]>().toEqualTypeOf<`ClientAction_${string}`>();
    expectTypeOf<`ClientAction_${string}`>().toExtend<ActionKind>();
    const lookup: Action = { kind: "ClientAction_lookup_ticket", ticket_id: "OPS-1" };
    if (isClientAction(lookup)) expectTypeOf(lookup.ticket_id).toBeUnknown();
  });

  test("narrowing by kind still tells SDK actions from client actions", () => {
    const describe = (action: Action): string => {
      if (action.kind === "TerminalAction") return action.command;
      if (action.kind === "FinishAction") return action.message;
      return action.kind;
    };
    expectTypeOf(describe).returns.toBeString();
  });

  test("ClientTool names the client's tool", () => {
    if (isClientTool(tool)) {
      expectTypeOf(tool.client_tool_name).toBeString();
      expectTypeOf(tool.action_type).toEqualTypeOf<`ClientAction_${string}`>();
    }
  });

  test("KIND_RELEASES maps kinds to their releases", () => {
    expectTypeOf<(typeof KIND_RELEASES)[string]>().toEqualTypeOf<KindRelease>();
  });
});
