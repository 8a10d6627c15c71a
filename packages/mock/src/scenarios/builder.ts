/**
 * Builds trajectories from the spec's own examples (`@acs-toolkit/schema/examples`): every action,
 * observation and tool definition starts as the spec's example of that variant, and a scenario only
 * changes the fields it tells a story with. Ids, timings and choices come from a seeded PRNG.
 */
import { CLIENT_ACTION_KIND_PREFIX } from "@acs-toolkit/schema";
import type {
  ActionEvent,
  ActionKind,
  ObservationKind,
  ToolKind,
  AgentErrorEvent,
  Event,
  MessageEvent,
  ObservationEvent,
  SystemPromptEvent,
  TextContent,
  ToolDefinition,
  UserRejectObservation,
} from "@acs-toolkit/schema";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { randomUuid } from "../random.js";

export type Action = NonNullable<ActionEvent["action"]>;
type Observation = ObservationEvent["observation"];
// The kind types are the generated ones (kinds.ts of @acs-toolkit/schema), not restated here.
export type { ActionKind, ToolKind };

interface Templates {
  system: SystemPromptEvent;
  action: Map<string, ActionEvent>;
  observation: Map<string, ObservationEvent>;
  tool: Map<string, ToolDefinition>;
  event: Map<string, Event>;
}

let templates: Templates | undefined;

/** The spec's example of every event kind and variant, read once. */
function examples(): Templates {
  if (templates) return templates;
  const events = exampleEvents();
  const system = events.find((e): e is SystemPromptEvent => e.kind === "SystemPromptEvent")!;
  templates = {
    system,
    action: new Map(events.filter((e): e is ActionEvent => e.kind === "ActionEvent" && e.action !== null && e.action !== undefined).map((e) => [e.action!.kind, e])),
    observation: new Map(events.filter((e): e is ObservationEvent => e.kind === "ObservationEvent").map((e) => [e.observation.kind, e])),
    tool: new Map(system.tools.map((t) => [t.kind, t])),
    event: new Map(events.map((e) => [e.kind, e])),
  };
  return templates;
}

/** JSON texts of the examples copied, by kind: a fresh copy is parsed from them (JSON data: faster than structuredClone). */
const copies = new Map<string, string>();

/** A fresh copy of a JSON value, the example `key` names. */
function copyOf<T>(key: string, value: T): T {
  let text = copies.get(key);
  if (text === undefined) copies.set(key, (text = JSON.stringify(value)));
  return JSON.parse(text) as T;
}

/** The spec's example of an action variant (a fresh copy). */
export function exampleAction<K extends ActionKind>(kind: K): Extract<Action, { kind: K }> {
  return copyOf(`action:${kind}`, examples().action.get(kind)!.action) as Extract<Action, { kind: K }>;
}

/** The spec's example of an observation variant (a fresh copy). */
export function exampleObservation<K extends ObservationKind>(kind: K): Extract<Observation, { kind: K }> {
  return copyOf(`observation:${kind}`, examples().observation.get(kind)!.observation) as Extract<Observation, { kind: K }>;
}

/** The kind of the spec's example of a client tool's action (`ClientAction_<tool name>`). */
export function exampleClientActionKind(): ActionKind {
  return [...examples().action.keys()].find((kind) => kind.startsWith(CLIENT_ACTION_KIND_PREFIX)) as ActionKind;
}

/** The observation kind that answers an action kind. */
export function observationKindFor(action: ActionKind): ObservationKind {
  if (action.startsWith(CLIENT_ACTION_KIND_PREFIX)) return "ClientToolObservation";
  if (action.startsWith("Browser")) return "BrowserObservation";
  if (action === "MCPToolAction") return "MCPToolObservation";
  return action.replace(/Action$/, "Observation") as ObservationKind;
}

/** The tool name the agent calls for an action kind (`TerminalAction` → `terminal`). */
export function toolNameFor(action: ActionKind): string {
  if (action === "MCPToolAction") return "list_files";
  if (action.startsWith(CLIENT_ACTION_KIND_PREFIX)) return action.slice(CLIENT_ACTION_KIND_PREFIX.length);
  return action
    .replace(/Action$/, "")
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toLowerCase();
}

export const text = (value: string): TextContent => ({ cache_prompt: false, type: "text", text: value });

/** A reference-style timestamp: ISO-8601 without offset, with microseconds. */
function formatTimestamp(micros: number): string {
  const millis = Math.floor(micros / 1000);
  return `${new Date(millis).toISOString().slice(0, 19)}.${String(micros % 1_000_000).padStart(6, "0")}`;
}

export interface ActOptions {
  thought?: string;
  summary?: string;
  risk?: ActionEvent["security_risk"];
}

/**
 * Appends events with seeded ids and a clock that only moves forward (so that timestamp order is
 * append order, as in a real run).
 */
export class TrajectoryBuilder {
  readonly events: Event[] = [];
  /** Microseconds since the epoch. */
  private clock: number;
  private responseCounter = 0;
  private callCounter = 0;

  constructor(
    private readonly random: () => number,
    startMillis: number,
  ) {
    this.clock = startMillis * 1000;
  }

  /** Lets between `minMs` and `maxMs` pass (uniformly drawn). */
  wait(minMs: number, maxMs = minMs): this {
    this.clock += Math.round((minMs + this.random() * (maxMs - minMs)) * 1000) + 1;
    return this;
  }

  /** Appends an event with a fresh id and the current clock. */
  add<E extends Event>(event: Omit<E, "id" | "timestamp"> & { id?: string }): E {
    // `id` and `timestamp` first, the event's fields (as a spread: over these two where it has
    // them), `kind` last, as the reference writes it; one object, built in that order.
    const ordered: Record<string, unknown> = { id: event.id ?? randomUuid(this.random), timestamp: formatTimestamp(this.clock) };
    for (const key of Object.keys(event)) if (key !== "kind") ordered[key] = (event as Record<string, unknown>)[key];
    ordered.kind = (event as { kind: string }).kind;
    this.events.push(ordered as E);
    return ordered as E;
  }

  private responseId(): string {
    this.responseCounter++;
    let id = "chatcmpl-";
    for (let i = 0; i < 24; i++) id += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(this.random() * 62)];
    return id;
  }

  system(tools: readonly ToolKind[], dynamicContext?: string): SystemPromptEvent {
    const template = examples().system;
    return this.add<SystemPromptEvent>({
      source: "agent",
      system_prompt: structuredClone(template.system_prompt),
      tools: tools.map((kind) => structuredClone(examples().tool.get(kind)!)),
      ...(dynamicContext !== undefined && { dynamic_context: text(dynamicContext) }),
      kind: "SystemPromptEvent",
    });
  }

  user(message: string, extra: Partial<MessageEvent> = {}): MessageEvent {
    return this.add<MessageEvent>({
      source: "user",
      llm_message: { role: "user", content: [text(message)], thinking_blocks: [] },
      llm_response_id: null,
      activated_skills: [],
      extended_content: [],
      sender: null,
      critic_result: null,
      ...extra,
      kind: "MessageEvent",
    });
  }

  agent(message: string, extra: Partial<MessageEvent> = {}): MessageEvent {
    return this.add<MessageEvent>({
      source: "agent",
      llm_message: { role: "assistant", content: [text(message)], thinking_blocks: [] },
      llm_response_id: this.responseId(),
      activated_skills: [],
      extended_content: [],
      sender: null,
      critic_result: null,
      ...extra,
      kind: "MessageEvent",
    });
  }

  state(key: string, value: unknown): Event {
    return this.add({ source: "environment", key, value, kind: "ConversationStateUpdateEvent" } as Event);
  }

  /** An ActionEvent calling the tool of `action` (the tool call's arguments are the action's fields). */
  act(action: Action, options: ActOptions = {}): ActionEvent {
    const callId = `call_${randomUuid(this.random).replace(/-/g, "").slice(0, 24)}`;
    this.callCounter++;
    const name = toolNameFor(action.kind);
    const { kind: _kind, ...args } = action as Action & Record<string, unknown>;
    return this.add<ActionEvent>({
      source: "agent",
      thought: options.thought ? [text(options.thought)] : [],
      thinking_blocks: [],
      action,
      tool_name: name,
      tool_call_id: callId,
      tool_call: { id: callId, name, arguments: JSON.stringify(action.kind === "MCPToolAction" ? (args as { data: unknown }).data : args), origin: "completion" },
      llm_response_id: this.responseId(),
      security_risk: options.risk ?? "LOW",
      ...(options.summary !== undefined && { summary: options.summary }),
      kind: "ActionEvent",
    });
  }

  /** An ActionEvent whose call could not be executed (`action: null`; an AgentErrorEvent follows). */
  actUnknownTool(toolName: string, args: Record<string, unknown>, thought: string): ActionEvent {
    const callId = `call_${randomUuid(this.random).replace(/-/g, "").slice(0, 24)}`;
    return this.add<ActionEvent>({
      source: "agent",
      thought: [text(thought)],
      thinking_blocks: [],
      action: null,
      tool_name: toolName,
      tool_call_id: callId,
      tool_call: { id: callId, name: toolName, arguments: JSON.stringify(args), origin: "completion" },
      llm_response_id: this.responseId(),
      security_risk: "UNKNOWN",
      kind: "ActionEvent",
    });
  }

  /** The ObservationEvent answering `action`, its observation built by `fill` from the spec's example. */
  observe<K extends ObservationKind>(action: ActionEvent, kind: K, fill: (observation: Extract<Observation, { kind: K }>) => void = () => {}): ObservationEvent {
    const observation = exampleObservation(kind);
    fill(observation);
    return this.add<ObservationEvent>({
      source: "environment",
      tool_name: action.tool_name,
      tool_call_id: action.tool_call_id,
      observation,
      action_id: action.id,
      kind: "ObservationEvent",
    });
  }

  agentError(action: ActionEvent, error: string): AgentErrorEvent {
    return this.add<AgentErrorEvent>({ source: "agent", tool_name: action.tool_name, tool_call_id: action.tool_call_id, error, kind: "AgentErrorEvent" });
  }

  /** A hook that ran for `action` (release 1.13.0), recorded with the hook source. */
  hook(action: ActionEvent, type: "PreToolUse" | "PostToolUse", command: string): Event {
    return this.add({
      source: "hook",
      hook_event_type: type,
      hook_command: command,
      tool_name: action.tool_name,
      success: true,
      blocked: false,
      exit_code: 0,
      stdout: "",
      stderr: "",
      action_id: action.id,
      kind: "HookExecutionEvent",
    } as Event);
  }

  reject(action: ActionEvent, reason: string, by: "user" | "hook" = "user"): UserRejectObservation {
    return this.add<UserRejectObservation>({
      source: "environment",
      tool_name: action.tool_name,
      tool_call_id: action.tool_call_id,
      action_id: action.id,
      rejection_reason: reason,
      rejection_source: by,
      kind: "UserRejectObservation",
    });
  }

  tokens(prompt: number, response: number): Event {
    const ids = (n: number) => Array.from({ length: n }, () => Math.floor(this.random() * 100_000));
    return this.add({ source: "agent", prompt_token_ids: ids(prompt), response_token_ids: ids(response), kind: "TokenEvent" } as Event);
  }

  completionLog(model: string): Event {
    const id = this.responseId();
    return this.add({
      source: "environment",
      filename: `${model}-${Math.floor(this.clock / 1_000_000)}.${String(this.clock % 1_000_000).padStart(6, "0")}.json`,
      log_data: JSON.stringify({ messages: [], response: { id, model } }),
      model_name: model,
      usage_id: "agent",
      kind: "LLMCompletionLogEvent",
    } as Event);
  }
}
