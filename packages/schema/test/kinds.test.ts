import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as schema from "@acs-toolkit/schema";
import {
  ACTION_KINDS,
  CLIENT_ACTION_KIND_PREFIX,
  CONVERSATION_STATUSES,
  DEFAULT_EVENT_SOURCE,
  EVENT_KINDS,
  EVENT_SOURCES,
  OBSERVATION_KINDS,
  PROVIDER_TYPES,
  SECURITY_RISKS,
  KIND_RELEASES,
  LIVE_ONLY_EVENT_KINDS,
  OPENHANDS_RELEASE,
  TOOL_KINDS,
  isActionKind,
  isClientAction,
  isEventKind,
  isObservationKind,
  isToolKind,
} from "@acs-toolkit/schema";

type Json = Record<string, any>;
const load = (name: string): Json =>
  JSON.parse(readFileSync(new URL(`../src/generated/${name}`, import.meta.url), "utf8"));
const eventsSchema = load("events.schema.json");
const openapi = load("openapi.json");
const openapiSchemas: Json = openapi.components.schemas;

// Variant names as the interface document (seed) lists them; order there differs from the spec's.
const INTERFACE_ACTIONS = `MCPToolAction FinishAction ThinkAction BrowserAction BrowserClickAction BrowserCloseTabAction
  BrowserGetContentAction BrowserGetStateAction BrowserGetStorageAction BrowserGoBackAction BrowserListTabsAction
  BrowserNavigateAction BrowserScrollAction BrowserSetStorageAction BrowserStartRecordingAction
  BrowserStopRecordingAction BrowserSwitchTabAction BrowserTypeAction FileEditorAction EditAction ListDirectoryAction
  ReadFileAction WriteFileAction GlobAction GrepAction PlanningFileEditorAction TaskTrackerAction TerminalAction`;
const INTERFACE_OBSERVATIONS = `MCPToolObservation FinishObservation ThinkObservation BrowserObservation
  FileEditorObservation EditObservation ListDirectoryObservation ReadFileObservation WriteFileObservation
  GlobObservation GrepObservation PlanningFileEditorObservation TaskTrackerObservation TerminalObservation`;
const INTERFACE_TOOLS = `MCPToolDefinition FinishTool ThinkTool BrowserClickTool BrowserCloseTabTool
  BrowserGetContentTool BrowserGetStateTool BrowserGetStorageTool BrowserGoBackTool BrowserListTabsTool
  BrowserNavigateTool BrowserScrollTool BrowserSetStorageTool BrowserStartRecordingTool BrowserStopRecordingTool
  BrowserSwitchTabTool BrowserToolSet BrowserTypeTool FileEditorTool EditTool ListDirectoryTool ReadFileTool
  WriteFileTool GlobTool GrepTool PlanningFileEditorTool TaskTrackerTool TerminalTool`;
const INTERFACE_EVENTS = `SystemPromptEvent MessageEvent ActionEvent ObservationEvent AgentErrorEvent
  UserRejectObservation PauseEvent ConversationErrorEvent ConversationStateUpdateEvent LLMCompletionLogEvent
  Condensation CondensationRequest CondensationSummaryEvent TokenEvent`;
const words = (text: string) => text.split(/\s+/).filter(Boolean).sort();

// Kinds later releases added (openhands-versions §1.2, §1.4–1.6): since, [removed,] [loaded by the server].
const LATER_KINDS: Record<string, { since: string; removed?: string; loaded?: string }> = {
  ACPToolCallEvent: { since: "1.12.0" },
  HookExecutionEvent: { since: "1.13.0" },
  ServerErrorEvent: { since: "1.16.0" },
  StreamingDeltaEvent: { since: "1.18.1" },
  InterruptEvent: { since: "1.23.0" },
  ...Object.fromEntries(["TaskAction", "TaskObservation", "TaskTool", "TaskToolSet"].map((k) => [k, { since: "1.12.0", loaded: "1.16.0" }])),
  ...Object.fromEntries(["InvokeSkillAction", "InvokeSkillObservation", "InvokeSkillTool"].map((k) => [k, { since: "1.18.0" }])),
  ...Object.fromEntries(["SwitchLLMAction", "SwitchLLMObservation", "SwitchLLMTool"].map((k) => [k, { since: "1.22.0" }])),
  ...Object.fromEntries(["WorkflowAction", "WorkflowObservation", "WorkflowTool", "WorkflowToolSet"].map((k) => [k, { since: "1.27.0" }])),
  ...Object.fromEntries(["VisionInspectAction", "VisionInspectObservation", "VisionInspectTool"].map((k) => [k, { since: "1.31.0" }])),
  ...Object.fromEntries(["ClientToolObservation", "ClientTool", "ClientAction_<name>"].map((k) => [k, { since: "1.28.0" }])),
  DelegateAction: { since: "1.9.0", loaded: "1.11.5" },
  DelegateObservation: { since: "1.9.0", loaded: "1.11.5" },
  DelegateTool: { since: "1.9.0", removed: "1.23.0", loaded: "1.11.5" },
  ...Object.fromEntries(
    ["ApplyPatchAction", "ApplyPatchObservation", "ApplyPatchTool", "ConsultTomAction", "ConsultTomObservation", "TomConsultTool", "SleeptimeComputeAction", "SleeptimeComputeObservation", "SleeptimeComputeTool"].map(
      (k) => [k, { since: "1.9.0", loaded: "never" }],
    ),
  ),
};

const UNIONS = [
  { union: "Event", kinds: EVENT_KINDS, isKind: isEventKind, nullable: false, documented: INTERFACE_EVENTS },
  { union: "Action", kinds: ACTION_KINDS, isKind: isActionKind, nullable: true, documented: INTERFACE_ACTIONS },
  { union: "Observation", kinds: OBSERVATION_KINDS, isKind: isObservationKind, nullable: true, documented: INTERFACE_OBSERVATIONS },
  { union: "ToolDefinition", kinds: TOOL_KINDS, isKind: isToolKind, nullable: true, documented: INTERFACE_TOOLS },
] as const;

const ALL_KINDS: string[] = UNIONS.flatMap(({ kinds }) => [...kinds]);
const guardOf = (kind: string) => (schema as Record<string, unknown>)[`is${kind}`] as (value: unknown) => boolean;

// Action is SdkAction (discriminated by kind) or ClientAction (kind ClientAction_<tool name>).
const discriminated = (union: string) => (union === "Action" ? "SdkAction" : union);

describe.each(UNIONS)("$union kinds", ({ union, kinds, isKind, nullable, documented }) => {
  it("without a release marking are the kinds the interface document lists (the core)", () => {
    expect(kinds.filter((kind) => !(kind in KIND_RELEASES)).sort()).toEqual(words(documented));
  });

  it("with a release marking are the later kinds of the reference, with their releases", () => {
    const later = Object.fromEntries(kinds.filter((kind) => kind in KIND_RELEASES).map((kind) => [kind, KIND_RELEASES[kind]]));
    expect(later).toEqual(Object.fromEntries(Object.entries(LATER_KINDS).filter(([kind]) => (kinds as readonly string[]).includes(kind))));
    for (const kind of kinds) expect(eventsSchema.$defs[kind]["x-acs-since"], kind).toBe(LATER_KINDS[kind]?.since);
  });

  it("equal the discriminator mapping keys of events.schema.json, in order", () => {
    const definition = eventsSchema.$defs[discriminated(union)];
    expect(definition.discriminator.propertyName).toBe("kind");
    expect(Object.keys(definition.discriminator.mapping)).toEqual([...kinds]);
    expect(definition.oneOf.map((entry: Json) => entry.$ref)).toEqual(kinds.map((k) => `#/$defs/${k}`));
  });

  it("equal the discriminator mapping keys of openapi.json, in order", () => {
    const mapping = openapiSchemas[discriminated(union)].discriminator.mapping;
    expect(mapping).toEqual(Object.fromEntries(kinds.map((k) => [k, `#/components/schemas/${k}`])));
  });

  it("name variants whose `kind` is that very name", () => {
    for (const kind of kinds) {
      expect(eventsSchema.$defs[kind].properties.kind, kind).toEqual({ type: "string", const: kind });
    }
  });

  it.each([...kinds])(`is%s narrows exactly its own kind`, (kind) => {
    const guard = guardOf(kind);
    expect(guard).toBeTypeOf("function");
    for (const other of ALL_KINDS) expect(guard({ kind: other }), `is${kind}({ kind: ${other} })`).toBe(other === kind);
  });

  it(`is${union === "ToolDefinition" ? "Tool" : union}Kind accepts exactly these kinds`, () => {
    for (const kind of ALL_KINDS) expect(isKind(kind), kind).toBe((kinds as readonly string[]).includes(kind));
    for (const value of [undefined, null, 1, {}, "", kinds[0].toLowerCase(), `openhands.sdk.${kinds[0]}`, "ClientAction_"]) {
      expect(isKind(value)).toBe(false);
    }
    expect(isKind("ClientAction_lookup_ticket")).toBe(union === "Action");
  });

  if (nullable) {
    it("guards accept null and undefined (an ActionEvent's action may be null)", () => {
      for (const kind of kinds) {
        expect(guardOf(kind)(null)).toBe(false);
        expect(guardOf(kind)(undefined)).toBe(false);
      }
    });
  }
});

it("LIVE_ONLY_EVENT_KINDS are the kinds the agent server never stores (openhands-versions §1.2)", () => {
  expect(LIVE_ONLY_EVENT_KINDS).toEqual(["ServerErrorEvent", "StreamingDeltaEvent"]);
});

it("the search filter `kind` takes every event kind, short and fully qualified", () => {
  const pattern = new RegExp(openapi.components.parameters.KindFilter.schema.pattern);
  for (const kind of EVENT_KINDS) {
    expect(pattern.test(kind), kind).toBe(true);
    expect(pattern.test(`openhands.sdk.event.module.${kind}`), kind).toBe(true);
  }
});

it("kinds are unique across the four unions (one guard per name)", () => {
  expect(new Set(ALL_KINDS).size).toBe(ALL_KINDS.length);
});

describe("ClientAction: the kinds of client tools' actions (ClientAction_<tool name>)", () => {
  it("is the pattern variant of Action, and no named kind matches its pattern", () => {
    expect(eventsSchema.$defs.Action.oneOf).toEqual([{ $ref: "#/$defs/SdkAction" }, { $ref: "#/$defs/ClientAction" }]);
    const pattern = new RegExp(eventsSchema.$defs.ClientAction.properties.kind.pattern);
    expect(pattern.source).toBe(`^${CLIENT_ACTION_KIND_PREFIX}.+$`);
    expect(ALL_KINDS.filter((kind) => pattern.test(kind))).toEqual([]);
  });

  it("isClientAction narrows exactly the prefixed kinds", () => {
    expect(isClientAction({ kind: "ClientAction_lookup_ticket" })).toBe(true);
    for (const kind of ["ClientAction_", "ClientAction", "clientaction_x", "TerminalAction"]) expect(isClientAction({ kind } as never), kind).toBe(false);
    expect(isClientAction(null)).toBe(false);
    expect(isClientAction(undefined)).toBe(false);
  });
});

it("the runtime exports are the constants and exactly one guard per kind", () => {
  const expected = [
    "ACTION_KINDS",
    "CONVERSATION_STATUSES",
    "DEFAULT_EVENT_SOURCE",
    "EVENT_KINDS",
    "EVENT_SOURCES",
    "OBSERVATION_KINDS",
    "PROVIDER_TYPES",
    "SECURITY_RISKS",
    "TOOL_KINDS",
    "CLIENT_ACTION_KIND_PREFIX",
    "KIND_RELEASES",
    "LIVE_ONLY_EVENT_KINDS",
    "OPENHANDS_RELEASE",
    "isClientAction",
    "isActionKind",
    "isEventKind",
    "isObservationKind",
    "isToolKind",
    ...ALL_KINDS.map((kind) => `is${kind}`),
    // The settings table (generated/settings.ts).
    "MCP_SHTTP_DEFAULT_TIMEOUT",
    "SETTINGS_FIELDS",
    "SETTINGS_PROPERTIES",
    "SETTINGS_STRUCTURED_FIELDS",
    // The live channel's close codes (generated/live.ts).
    "LIVE_CLOSE_CODES",
    "LIVE_CLOSE_CODE_LIST",
  ];
  expect(Object.keys(schema).sort()).toEqual(expected.sort());
});

it("guards work on real events from the spec examples", () => {
  for (const kind of EVENT_KINDS) {
    const examples: Json[] = eventsSchema.$defs[kind].examples ?? [];
    expect(examples.length, `${kind} has an example`).toBeGreaterThan(0);
    for (const example of examples) {
      expect(EVENT_KINDS.filter((k) => guardOf(k)(example))).toEqual([kind]);
    }
  }
});

describe("enum constants", () => {
  it.each([
    ["EventSource", EVENT_SOURCES],
    ["SecurityRisk", SECURITY_RISKS],
    ["ConversationStatus", CONVERSATION_STATUSES],
    ["ProviderType", PROVIDER_TYPES],
  ] as const)("%s", (name, values) => {
    expect(openapiSchemas[name].enum).toEqual([...values]);
  });

  it("have the values of the interface, and the hook source of release 1.13.0", () => {
    expect(EVENT_SOURCES).toEqual(["agent", "user", "environment", "hook"]);
    expect(eventsSchema.$defs.EventSource["x-acs-enum-since"]).toEqual({ hook: "1.13.0" });
    expect(SECURITY_RISKS).toEqual(["UNKNOWN", "LOW", "MEDIUM", "HIGH"]);
    expect(CONVERSATION_STATUSES).toEqual(["STARTING", "RUNNING", "STOPPED"]);
    expect(PROVIDER_TYPES).toEqual(["github", "gitlab", "bitbucket", "enterprise_sso"]);
  });
});

describe("the core's parts that came after release 1.9.0 (x-acs-core-since)", () => {
  // The interface catalogue is that of 1.11.5; the SDK's tags say when these came (1.11.2 → 1.11.3:
  // event/llm_convertible/system.py and observation.py; 1.11.4 → 1.11.5: browser_use/definition.py).
  it("are the dynamic context and the rejection source of 1.11.3, the browser recording of 1.11.5, and nothing else", () => {
    const marked: Record<string, string> = {};
    const walk = (node: unknown, at: string) => {
      if (typeof node !== "object" || node === null) return;
      if (!Array.isArray(node) && typeof (node as Json)["x-acs-core-since"] === "string") marked[at] = (node as Json)["x-acs-core-since"];
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
    };
    walk(eventsSchema.$defs, "");
    expect(marked).toEqual({
      "/SystemPromptEvent/properties/dynamic_context": "1.11.3",
      "/UserRejectObservation/properties/rejection_source": "1.11.3",
      "/BrowserStartRecordingAction": "1.11.5",
      "/BrowserStopRecordingAction": "1.11.5",
      "/BrowserStartRecordingTool": "1.11.5",
      "/BrowserStopRecordingTool": "1.11.5",
    });
    // Core all the same: no x-acs-since, so not in KIND_RELEASES, and in the interface's lists.
    for (const kind of ["BrowserStartRecordingAction", "BrowserStopRecordingAction", "BrowserStartRecordingTool", "BrowserStopRecordingTool"]) {
      expect(eventsSchema.$defs[kind]["x-acs-since"], kind).toBeUndefined();
      expect(KIND_RELEASES[kind], kind).toBeUndefined();
    }
    expect(openapiSchemas.SystemPromptEvent.properties.dynamic_context["x-acs-core-since"]).toBe("1.11.3");
  });
});

it("OPENHANDS_RELEASE is the release of ServerInfo.version's default", () => {
  expect(OPENHANDS_RELEASE).toBe(openapiSchemas.ServerInfo.properties.version.default);
  expect(OPENHANDS_RELEASE).toMatch(/^\d+\.\d+\.\d+$/);
});

describe("DEFAULT_EVENT_SOURCE", () => {
  // ground-truth §2; null = the kind requires `source`.
  const GROUND_TRUTH = {
    Condensation: "environment",
    CondensationRequest: "environment",
    CondensationSummaryEvent: "environment",
    ConversationErrorEvent: null,
    ConversationStateUpdateEvent: "environment",
    LLMCompletionLogEvent: "environment",
    ActionEvent: "agent",
    MessageEvent: null,
    AgentErrorEvent: "agent",
    ObservationEvent: "environment",
    UserRejectObservation: "environment",
    SystemPromptEvent: "agent",
    TokenEvent: null,
    PauseEvent: "user",
    // openhands-versions §1.2
    ACPToolCallEvent: "agent",
    HookExecutionEvent: "hook",
    ServerErrorEvent: null,
    StreamingDeltaEvent: "agent",
    InterruptEvent: "user",
  };

  it("matches the ground truth and the reference", () => {
    expect(DEFAULT_EVENT_SOURCE).toEqual(GROUND_TRUTH);
    expect(Object.keys(DEFAULT_EVENT_SOURCE)).toEqual([...EVENT_KINDS]);
  });

  it.each([...EVENT_KINDS])("%s agrees with its schema", (kind) => {
    const definition = eventsSchema.$defs[kind];
    const expected = DEFAULT_EVENT_SOURCE[kind];
    if (expected === null) {
      expect(definition.required).toContain("source");
      expect(definition.properties.source).not.toHaveProperty("default");
    } else {
      expect(definition.required).not.toContain("source");
      expect(definition.properties.source.default).toBe(expected);
    }
  });
});
