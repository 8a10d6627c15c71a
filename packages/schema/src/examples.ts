/**
 * Realistic events built from the `examples` of the spec itself: every event kind, an ActionEvent
 * for every Action variant, an ObservationEvent for every Observation variant, and a
 * SystemPromptEvent offering every tool definition. Used by tests, benchmarks and mocks so that no
 * sample event is typed by hand.
 */
import eventsSchema from "./generated/events.schema.json" with { type: "json" };
import { ACTION_KINDS, EVENT_KINDS, OBSERVATION_KINDS, TOOL_KINDS } from "./generated/kinds.js";
import type { ActionEvent, ClientTool, Event, MessageEvent, ObservationEvent, SystemPromptEvent, ToolDefinition } from "./generated/types.js";

type Defs = Record<string, { examples?: unknown[] }>;
const defs = (eventsSchema as unknown as { $defs: Defs }).$defs;

function firstExample<T>(name: string): T {
  const example = defs[name]?.examples?.[0];
  if (example === undefined) throw new Error(`spec: ${name} has no example`);
  return structuredClone(example) as T;
}

/**
 * A seeded pseudo-random generator (mulberry32) of numbers in [0, 1): the same seed gives the same
 * sequence on every run and machine, so that generated data, property tests and benchmarks replay
 * exactly. Not for anything secret.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A deterministic UUID v4-shaped id, unique per (seed, n). */
function idFor(seed: number, n: number): string {
  return `${(seed >>> 0).toString(16).padStart(8, "0")}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

export interface ExampleEventsOptions {
  /** Changes every id, so that several batches can be put in one conversation. Default 1. */
  seed?: number;
  /**
   * Time of the first event, as a `Date`, an ISO-8601 string (`"2026-02-05T11:24:45Z"`; without an
   * offset it is read as UTC, as the interface reads timestamps) or milliseconds since the epoch;
   * each next event is 1 ms later. Default 2026-02-05T11:24:45Z.
   */
  start?: Date | string | number;
}

/** `start` as epoch milliseconds. @throws RangeError naming the value when it is not a time. */
function startMillis(start: Date | string | number | undefined): number {
  if (start === undefined) return Date.UTC(2026, 1, 5, 11, 24, 45);
  const text = typeof start === "string" ? start.trim() : undefined;
  // An ISO date-time without an offset is UTC here (Date.parse would read it as local time).
  const millis =
    start instanceof Date ? start.getTime()
    : typeof start === "number" ? start
    : Date.parse(/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text!) ? `${text}Z` : text!);
  if (!Number.isFinite(millis)) {
    throw new RangeError(`exampleEvents: start must be a Date, an ISO-8601 date-time or epoch milliseconds, got ${JSON.stringify(String(start))}`);
  }
  return millis;
}

/** The action an observation kind answers (BrowserObservation answers every browser action, ClientToolObservation a client tool's action). */
function answeredBy(observationKind: string): string {
  if (observationKind === "BrowserObservation") return "BrowserNavigateAction";
  if (observationKind === "ClientToolObservation") return "ClientAction";
  return observationKind.replace(/Observation$/, "Action");
}

/**
 * A coherent trajectory covering every event kind and every Action, Observation and ToolDefinition
 * variant of the spec (a client tool's action too): unique ids, increasing timestamps (without zone
 * offset, as the reference records them), every observation, rejection and agent error answering an
 * earlier action, and a condensation that forgets earlier events.
 */
export function exampleEvents(options: ExampleEventsOptions = {}): Event[] {
  const seed = options.seed ?? 1;
  const start = startMillis(options.start);
  const events: Event[] = [];
  const push = <E extends Event>(event: E): E => {
    const n = events.length;
    event.id = idFor(seed, n);
    event.timestamp = new Date(start + n).toISOString().replace("Z", "");
    events.push(event);
    return event;
  };

  const system = firstExample<SystemPromptEvent>("SystemPromptEvent");
  system.tools = TOOL_KINDS.map((kind) => firstExample<ToolDefinition>(kind));
  push(system);
  const agentMessage = firstExample<MessageEvent>("MessageEvent");
  push<MessageEvent>({
    ...firstExample<MessageEvent>("MessageEvent"),
    source: "user",
    llm_message: { role: "user", content: [{ cache_prompt: false, type: "text", text: "Fix the failing test." }], thinking_blocks: [] },
    llm_response_id: null,
  });

  const actions = new Map<string, ActionEvent>();
  const actionTemplate = firstExample<ActionEvent>("ActionEvent");
  const clientTool = firstExample<ClientTool>("ClientTool");
  // Keyed by definition: the client tool's action under "ClientAction".
  for (const kind of [...ACTION_KINDS, "ClientAction"] as const) {
    const action = firstExample<NonNullable<ActionEvent["action"]>>(kind);
    const callId = `call_${seed}_${events.length}`;
    const toolName =
      kind === "ClientAction" ? clientTool.client_tool_name : kind.replace(/Action$/, "").replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
    const event = push<ActionEvent>({
      ...structuredClone(actionTemplate),
      action,
      tool_name: toolName,
      tool_call_id: callId,
      tool_call: { id: callId, name: toolName, arguments: JSON.stringify({ ...action, kind: undefined }), origin: "completion" },
    });
    actions.set(kind, event);
  }
  const observationTemplate = firstExample<ObservationEvent>("ObservationEvent");
  for (const kind of OBSERVATION_KINDS) {
    const action = actions.get(answeredBy(kind))!;
    push<ObservationEvent>({
      ...structuredClone(observationTemplate),
      observation: firstExample<ObservationEvent["observation"]>(kind),
      tool_name: action.tool_name,
      tool_call_id: action.tool_call_id,
      action_id: action.id,
    });
  }

  let condensationId = "";
  const unanswered = [actions.get("BrowserClickAction")!, actions.get("BrowserTypeAction")!];
  for (const kind of EVENT_KINDS) {
    if (["SystemPromptEvent", "MessageEvent", "ActionEvent", "ObservationEvent"].includes(kind)) continue;
    const event = firstExample<Event>(kind);
    if (event.kind === "HookExecutionEvent") {
      const action = actions.get("TerminalAction")!;
      event.tool_name = action.tool_name;
      event.action_id = action.id;
    }
    if (event.kind === "AgentErrorEvent" || event.kind === "UserRejectObservation") {
      const action = unanswered.shift()!;
      event.tool_name = action.tool_name;
      event.tool_call_id = action.tool_call_id;
      if (event.kind === "UserRejectObservation") event.action_id = action.id;
    }
    if (event.kind === "Condensation") event.forgotten_event_ids = events.slice(2, 6).map((e) => e.id);
    push(event);
    if (event.kind === "Condensation") condensationId = event.id;
    if (event.kind === "CondensationSummaryEvent") event.id = `${condensationId}-summary`;
  }
  push(agentMessage);
  return events;
}
