/**
 * One invalid event per rule of ground-truth §1–5 and of the later releases (openhands-versions §1),
 * each rejected with the expected pointer and rule; the permissive objects accepting what they must
 * accept; and the corrections of openhands-versions §2 accepted.
 */
import { describe, expect, it } from "vitest";
import { eventsJsonSchema } from "@acs-toolkit/schema/documents";
import { EVENT_KINDS, TOOL_KINDS } from "@acs-toolkit/schema";
import { formatIssue, validateEvent } from "../src/index.js";
import { example } from "./support.js";

type Mutable = Record<string, any>;
interface Row {
  name: string;
  event: Mutable;
  pointer: string;
  rule: string;
  /** A fragment of the message. */
  says?: string;
}

const defs = (eventsJsonSchema as { $defs: Record<string, { required?: string[] }> }).$defs;

const withAction = (kind: string, patch: Mutable): Mutable => {
  const e = example("ActionEvent", kind);
  Object.assign(e.action, patch);
  return e;
};
const withObservation = (kind: string, patch: Mutable): Mutable => {
  const e = example("ObservationEvent", kind);
  Object.assign(e.observation, patch);
  return e;
};
const set = (e: Mutable, patch: Mutable): Mutable => Object.assign(e, patch);

// §2: every required field of every event kind, derived from the spec so no kind is skipped.
const missingRequired: Row[] = EVENT_KINDS.flatMap((kind) =>
  (defs[kind]?.required ?? [])
    .filter((field) => field !== "kind")
    .map((field) => {
      const event = example(kind);
      delete event[field];
      return { name: `${kind} without ${field}`, event, pointer: `/${field}`, rule: "required", says: `is required in ${kind}` };
    }),
);

const rows: Row[] = [
  // §1 serialization rules
  { name: "id neither UUID nor ULID", event: set(example("PauseEvent"), { id: "event-1" }), pointer: "/id", rule: "pattern", says: 'must be a UUID or ULID, got "event-1"' },
  { name: "timestamp not ISO-8601", event: set(example("PauseEvent"), { timestamp: "05/02/2026 11:24" }), pointer: "/timestamp", rule: "pattern" },
  { name: "timestamp with month 13", event: set(example("PauseEvent"), { timestamp: "2026-13-05T11:24:47" }), pointer: "/timestamp", rule: "pattern" },
  { name: "timestamp as a number", event: set(example("PauseEvent"), { timestamp: 1770290687 }), pointer: "/timestamp", rule: "type" },
  { name: "source outside the enum", event: set(example("PauseEvent"), { source: "system" }), pointer: "/source", rule: "enum", says: 'must be one of "agent", "user", "environment" or "hook", got "system"' },
  { name: "kind missing", event: (() => { const e = example("PauseEvent"); delete e.kind; return e; })(), pointer: "/kind", rule: "required" },
  { name: "kind not a string", event: set(example("PauseEvent"), { kind: 7 }), pointer: "/kind", rule: "type" },
  { name: "unknown event kind", event: set(example("PauseEvent"), { kind: "ResumeEvent" }), pointer: "/kind", rule: "unknownKind" },
  { name: "summary id on another kind", event: set(example("PauseEvent"), { id: "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d-summary" }), pointer: "/id", rule: "maxLength" },
  // §1 strictness: unknown properties rejected at each strict level
  { name: "unknown property on an event", event: set(example("MessageEvent"), { mood: "happy" }), pointer: "/mood", rule: "unknownProperty", says: "is not a property of MessageEvent" },
  { name: "unknown property on an action", event: withAction("TerminalAction", { shell: "zsh" }), pointer: "/action/shell", rule: "unknownProperty", says: "is not a property of TerminalAction" },
  { name: "unknown property on an observation", event: withObservation("TerminalObservation", { stderr: "" }), pointer: "/observation/stderr", rule: "unknownProperty" },
  { name: "unknown property on TextContent (thought)", event: (() => { const e = example("ActionEvent", "ThinkAction"); e.thought = [{ type: "text", text: "x", bold: true }]; return e; })(), pointer: "/thought/0/bold", rule: "unknownProperty", says: "is not a property of TextContent" },
  { name: "unknown property on TextContent (message)", event: (() => { const e = example("MessageEvent"); e.llm_message.content[0].lang = "en"; return e; })(), pointer: "/llm_message/content/0/lang", rule: "unknownProperty" },
  { name: "unknown property on TextContent (system prompt)", event: (() => { const e = example("SystemPromptEvent"); e.system_prompt.cached = true; return e; })(), pointer: "/system_prompt/cached", rule: "unknownProperty" },
  // §2 content and supporting types
  { name: "TextContent without text", event: (() => { const e = example("MessageEvent"); e.llm_message.content = [{ type: "text" }]; return e; })(), pointer: "/llm_message/content/0/text", rule: "required" },
  { name: "content element without type", event: (() => { const e = example("MessageEvent"); e.llm_message.content = [{ text: "hi" }]; return e; })(), pointer: "/llm_message/content/0/type", rule: "required" },
  { name: "content element of unknown type", event: (() => { const e = example("MessageEvent"); e.llm_message.content = [{ type: "audio", data: "" }]; return e; })(), pointer: "/llm_message/content/0/type", rule: "unknownKind", says: "expected one of text, image" },
  { name: "ImageContent without image_urls", event: (() => { const e = example("MessageEvent"); e.llm_message.content = [{ type: "image" }]; return e; })(), pointer: "/llm_message/content/0/image_urls", rule: "required" },
  { name: "message role outside the enum", event: (() => { const e = example("MessageEvent"); e.llm_message.role = "developer"; return e; })(), pointer: "/llm_message/role", rule: "enum" },
  { name: "message without role", event: (() => { const e = example("MessageEvent"); delete e.llm_message.role; return e; })(), pointer: "/llm_message/role", rule: "required" },
  { name: "thinking block without thinking", event: set(example("ActionEvent", "ThinkAction"), { thinking_blocks: [{ type: "thinking" }] }), pointer: "/thinking_blocks/0/thinking", rule: "required" },
  { name: "redacted thinking block without data", event: set(example("ActionEvent", "ThinkAction"), { thinking_blocks: [{ type: "redacted_thinking" }] }), pointer: "/thinking_blocks/0/data", rule: "required" },
  { name: "reasoning item summary not strings", event: set(example("ActionEvent", "ThinkAction"), { responses_reasoning_item: { summary: [1] } }), pointer: "/responses_reasoning_item/summary/0", rule: "type" },
  { name: "tool call origin outside the enum", event: (() => { const e = example("ActionEvent", "ThinkAction"); e.tool_call.origin = "api"; return e; })(), pointer: "/tool_call/origin", rule: "enum" },
  { name: "tool call without arguments", event: (() => { const e = example("ActionEvent", "ThinkAction"); delete e.tool_call.arguments; return e; })(), pointer: "/tool_call/arguments", rule: "required" },
  { name: "critic score 1.01", event: set(example("ActionEvent", "ThinkAction"), { critic_result: { score: 1.01, message: null } }), pointer: "/critic_result/score", rule: "maximum", says: "must be <= 1, got 1.01" },
  { name: "critic score -0.1", event: set(example("MessageEvent"), { critic_result: { score: -0.1, message: "x" } }), pointer: "/critic_result/score", rule: "minimum" },
  { name: "critic message a number", event: set(example("MessageEvent"), { critic_result: { score: 0.5, message: 1 } }), pointer: "/critic_result/message", rule: "type" },
  { name: "security_risk outside the enum", event: set(example("ActionEvent", "ThinkAction"), { security_risk: "CRITICAL" }), pointer: "/security_risk", rule: "enum" },
  { name: "action neither object nor null", event: set(example("ActionEvent", "ThinkAction"), { action: "think" }), pointer: "/action", rule: "type", says: "must be object or null" },
  { name: "summary_offset -1", event: set(example("Condensation"), { summary_offset: -1 }), pointer: "/summary_offset", rule: "minimum", says: "must be >= 0, got -1" },
  { name: "forgotten_event_ids holding a number", event: set(example("Condensation"), { forgotten_event_ids: [7] }), pointer: "/forgotten_event_ids/0", rule: "type" },
  { name: "rejection_source outside the enum", event: set(example("UserRejectObservation"), { rejection_source: "admin" }), pointer: "/rejection_source", rule: "enum" },
  { name: "token ids not integers", event: set(example("TokenEvent"), { prompt_token_ids: [1, "2"] }), pointer: "/prompt_token_ids/1", rule: "type" },
  { name: "token ids fractional", event: set(example("TokenEvent"), { response_token_ids: [1.5] }), pointer: "/response_token_ids/0", rule: "type" },
  { name: "log_data not a string", event: set(example("LLMCompletionLogEvent"), { log_data: { a: 1 } }), pointer: "/log_data", rule: "type" },
  // §3 action variants
  { name: "BrowserCloseTabAction tab_id a number", event: withAction("BrowserCloseTabAction", { tab_id: 1234 }), pointer: "/action/tab_id", rule: "type" },
  { name: "BrowserClickAction index -1", event: withAction("BrowserClickAction", { index: -1 }), pointer: "/action/index", rule: "minimum" },
  { name: "BrowserTypeAction index -1", event: withAction("BrowserTypeAction", { index: -1 }), pointer: "/action/index", rule: "minimum" },
  { name: "BrowserClickAction index 1.5", event: withAction("BrowserClickAction", { index: 1.5 }), pointer: "/action/index", rule: "type" },
  { name: "BrowserTypeAction without text", event: (() => { const e = example("ActionEvent", "BrowserTypeAction"); delete e.action.text; return e; })(), pointer: "/action/text", rule: "required" },
  { name: "BrowserGetContentAction start_from_char -1", event: withAction("BrowserGetContentAction", { start_from_char: -1 }), pointer: "/action/start_from_char", rule: "minimum" },
  { name: "BrowserScrollAction direction left", event: withAction("BrowserScrollAction", { direction: "left" }), pointer: "/action/direction", rule: "enum" },
  { name: "BrowserNavigateAction without url", event: (() => { const e = example("ActionEvent", "BrowserNavigateAction"); delete e.action.url; return e; })(), pointer: "/action/url", rule: "required" },
  { name: "BrowserSetStorageAction storage_state not an object", event: withAction("BrowserSetStorageAction", { storage_state: "cookies" }), pointer: "/action/storage_state", rule: "type" },
  { name: "BrowserAction with a field", event: withAction("BrowserAction", { url: "x" }), pointer: "/action/url", rule: "unknownProperty" },
  { name: "FinishAction without message", event: (() => { const e = example("ActionEvent", "FinishAction"); delete e.action.message; return e; })(), pointer: "/action/message", rule: "required" },
  { name: "ThinkAction without thought", event: (() => { const e = example("ActionEvent", "ThinkAction"); delete e.action.thought; return e; })(), pointer: "/action/thought", rule: "required" },
  { name: "TerminalAction command not a string", event: withAction("TerminalAction", { command: ["ls"] }), pointer: "/action/command", rule: "type" },
  { name: "TerminalAction timeout -1", event: withAction("TerminalAction", { timeout: -1 }), pointer: "/action/timeout", rule: "minimum" },
  { name: "FileEditorAction command outside the enum", event: withAction("FileEditorAction", { command: "delete" }), pointer: "/action/command", rule: "enum" },
  { name: "FileEditorAction insert_line -1", event: withAction("FileEditorAction", { insert_line: -1 }), pointer: "/action/insert_line", rule: "minimum" },
  { name: "PlanningFileEditorAction without path", event: (() => { const e = example("ActionEvent", "PlanningFileEditorAction"); delete e.action.path; return e; })(), pointer: "/action/path", rule: "required" },
  { name: "EditAction expected_replacements -1", event: withAction("EditAction", { expected_replacements: -1 }), pointer: "/action/expected_replacements", rule: "minimum" },
  { name: "ReadFileAction offset -1", event: withAction("ReadFileAction", { offset: -1 }), pointer: "/action/offset", rule: "minimum" },
  { name: "ReadFileAction limit 0", event: withAction("ReadFileAction", { limit: 0 }), pointer: "/action/limit", rule: "minimum", says: "must be >= 1, got 0" },
  { name: "ReadFileAction limit as text", event: withAction("ReadFileAction", { limit: "10" }), pointer: "/action/limit", rule: "type", says: 'must be integer or null, got string "10"' },
  { name: "WriteFileAction without content", event: (() => { const e = example("ActionEvent", "WriteFileAction"); delete e.action.content; return e; })(), pointer: "/action/content", rule: "required" },
  { name: "GlobAction without pattern", event: (() => { const e = example("ActionEvent", "GlobAction"); delete e.action.pattern; return e; })(), pointer: "/action/pattern", rule: "required" },
  { name: "GrepAction include not a string", event: withAction("GrepAction", { include: 3 }), pointer: "/action/include", rule: "type" },
  { name: "ListDirectoryAction recursive not a boolean", event: withAction("ListDirectoryAction", { recursive: "yes" }), pointer: "/action/recursive", rule: "type" },
  { name: "TaskTrackerAction command outside the enum", event: withAction("TaskTrackerAction", { command: "list" }), pointer: "/action/command", rule: "enum" },
  { name: "TaskTrackerAction task status outside the enum", event: withAction("TaskTrackerAction", { task_list: [{ title: "x", status: "blocked" }] }), pointer: "/action/task_list/0/status", rule: "enum" },
  { name: "TaskTrackerAction task without title", event: withAction("TaskTrackerAction", { task_list: [{ notes: "" }] }), pointer: "/action/task_list/0/title", rule: "required" },
  { name: "MCPToolAction data not an object", event: withAction("MCPToolAction", { data: [] }), pointer: "/action/data", rule: "type" },
  { name: "unknown action kind (with a suggestion)", event: withAction("TerminalAction", { kind: "TerminalActon" }), pointer: "/action/kind", rule: "unknownKind", says: 'did you mean "TerminalAction"?' },
  // §4 observation variants
  { name: "observation is_error not a boolean", event: withObservation("FinishObservation", { is_error: "no" }), pointer: "/observation/is_error", rule: "type" },
  { name: "TerminalObservation command a number", event: withObservation("TerminalObservation", { command: 1 }), pointer: "/observation/command", rule: "type" },
  { name: "TerminalObservation exit_code fractional", event: withObservation("TerminalObservation", { exit_code: 0.5 }), pointer: "/observation/exit_code", rule: "type" },
  { name: "TerminalObservation metadata pid as text", event: withObservation("TerminalObservation", { metadata: { pid: "12" } }), pointer: "/observation/metadata/pid", rule: "type" },
  { name: "FileEditorObservation command outside the enum", event: withObservation("FileEditorObservation", { command: "rename" }), pointer: "/observation/command", rule: "enum" },
  { name: "ListDirectoryObservation entry without size", event: withObservation("ListDirectoryObservation", { entries: [{ name: "a", path: "a", is_directory: false, modified_time: "2026-02-05T11:20:01" }] }), pointer: "/observation/entries/0/size", rule: "required" },
  { name: "ReadFileObservation lines_shown of 1 item", event: withObservation("ReadFileObservation", { lines_shown: [1] }), pointer: "/observation/lines_shown", rule: "minItems" },
  { name: "ReadFileObservation lines_shown of 3 items", event: withObservation("ReadFileObservation", { lines_shown: [1, 2, 3] }), pointer: "/observation/lines_shown", rule: "maxItems" },
  { name: "ReadFileObservation without file_path", event: (() => { const e = example("ObservationEvent", "ReadFileObservation"); delete e.observation.file_path; return e; })(), pointer: "/observation/file_path", rule: "required" },
  { name: "GlobObservation without files", event: (() => { const e = example("ObservationEvent", "GlobObservation"); delete e.observation.files; return e; })(), pointer: "/observation/files", rule: "required" },
  { name: "GrepObservation without search_path", event: (() => { const e = example("ObservationEvent", "GrepObservation"); delete e.observation.search_path; return e; })(), pointer: "/observation/search_path", rule: "required" },
  { name: "TaskTrackerObservation without command", event: (() => { const e = example("ObservationEvent", "TaskTrackerObservation"); delete e.observation.command; return e; })(), pointer: "/observation/command", rule: "required" },
  { name: "MCPToolObservation without tool_name", event: (() => { const e = example("ObservationEvent", "MCPToolObservation"); delete e.observation.tool_name; return e; })(), pointer: "/observation/tool_name", rule: "required" },
  { name: "EditObservation replacements_made as text", event: withObservation("EditObservation", { replacements_made: "1" }), pointer: "/observation/replacements_made", rule: "type" },
  { name: "unknown observation kind", event: withObservation("FinishObservation", { kind: "DoneObservation" }), pointer: "/observation/kind", rule: "unknownKind" },
  // §5 tool definitions
  { name: "tool without description", event: (() => { const e = example("SystemPromptEvent"); delete e.tools[0].description; return e; })(), pointer: "/tools/0/description", rule: "required" },
  { name: "tool without title", event: (() => { const e = example("SystemPromptEvent"); delete e.tools[1].title; return e; })(), pointer: "/tools/1/title", rule: "required" },
  { name: "tool pairing the wrong action", event: (() => { const e = example("SystemPromptEvent"); e.tools[1].action_type = "ThinkAction"; return e; })(), pointer: "/tools/1/action_type", rule: "const" },
  { name: "unknown tool kind", event: (() => { const e = example("SystemPromptEvent"); e.tools[0].kind = "SearchTool"; return e; })(), pointer: "/tools/0/kind", rule: "unknownKind" },
  { name: "MCP tool without mcp_tool", event: (() => { const e = example("SystemPromptEvent"); const i = e.tools.findIndex((t: Mutable) => t.kind === "MCPToolDefinition"); delete e.tools[i].mcp_tool; return e; })(), pointer: "/tools/0/mcp_tool", rule: "required" },
  { name: "tool annotations readOnlyHint as text", event: (() => { const e = example("SystemPromptEvent"); e.tools[2].annotations.readOnlyHint = "true"; return e; })(), pointer: "/tools/2/annotations/readOnlyHint", rule: "type" },
  { name: "OpenHands' own tool annotations readOnlyHint null (only mcp_tool's may be)", event: (() => { const e = example("SystemPromptEvent"); e.tools[2].annotations.readOnlyHint = null; return e; })(), pointer: "/tools/2/annotations/readOnlyHint", rule: "type" },
  { name: "mcp_tool annotations hint as text", event: (() => { const e = example("SystemPromptEvent"); const i = e.tools.findIndex((t: Mutable) => t.kind === "MCPToolDefinition"); e.tools[i].mcp_tool.annotations = { readOnlyHint: "yes" }; return e; })(), pointer: "/tools/0/mcp_tool/annotations/readOnlyHint", rule: "type", says: "must be boolean or null" },
  { name: "ClientTool action_type not a client action", event: (() => { const e = example("SystemPromptEvent"); const i = e.tools.findIndex((t: Mutable) => t.kind === "ClientTool"); e.tools[i].action_type = "TerminalAction"; return e; })(), pointer: `/tools/${TOOL_KINDS.indexOf("ClientTool")}/action_type`, rule: "pattern", says: 'must be ClientAction_<tool name>, got "TerminalAction"' },
  // later releases (openhands-versions §1)
  { name: "parent_id neither an event id nor __root__", event: set(example("PauseEvent"), { parent_id: "root" }), pointer: "/parent_id", rule: "pattern", says: 'must be an event id (UUID or ULID) or "__root__", got "root"' },
  { name: "an event id __root__ (reserved)", event: set(example("PauseEvent"), { id: "__root__" }), pointer: "/id", rule: "pattern" },
  { name: "classification of an unknown kind", event: set(example("AgentErrorEvent"), { classification: { kind: "oops", retryable: false } }), pointer: "/classification/kind", rule: "enum" },
  { name: "classification without retryable", event: set(example("ConversationErrorEvent"), { classification: { kind: "auth" } }), pointer: "/classification/retryable", rule: "required" },
  { name: "classification with an unknown property", event: set(example("AgentErrorEvent"), { classification: { kind: "auth", retryable: false, hint: "x" } }), pointer: "/classification/hint", rule: "unknownProperty" },
  { name: "extended_content of an observation not TextContent", event: set(example("ObservationEvent", "FinishObservation"), { extended_content: [{ type: "text" }] }), pointer: "/extended_content/0/text", rule: "required" },
  { name: "HookExecutionEvent hook_event_type outside the enum", event: set(example("HookExecutionEvent"), { hook_event_type: "PreCommit" }), pointer: "/hook_event_type", rule: "enum" },
  { name: "ACPToolCallEvent content not an array", event: set(example("ACPToolCallEvent"), { content: "done" }), pointer: "/content", rule: "type" },
  { name: "InterruptEvent with a field", event: set(example("InterruptEvent"), { reason: "user" }), pointer: "/reason", rule: "unknownProperty" },
  { name: "TaskAction without prompt", event: (() => { const e = example("ActionEvent", "TaskAction"); delete e.action.prompt; return e; })(), pointer: "/action/prompt", rule: "required" },
  { name: "TaskAction max_turns 0", event: withAction("TaskAction", { max_turns: 0 }), pointer: "/action/max_turns", rule: "minimum" },
  { name: "WorkflowAction max_concurrency 65", event: withAction("WorkflowAction", { max_concurrency: 65 }), pointer: "/action/max_concurrency", rule: "maximum" },
  { name: "VisionInspectAction empty question", event: withAction("VisionInspectAction", { question: "" }), pointer: "/action/question", rule: "minLength" },
  { name: "DelegateAction command outside the enum", event: withAction("DelegateAction", { command: "kill" }), pointer: "/action/command", rule: "enum" },
  { name: "WorkflowObservation status outside the enum", event: withObservation("WorkflowObservation", { status: "running" }), pointer: "/observation/status", rule: "enum" },
  { name: "ClientToolObservation with a field", event: withObservation("ClientToolObservation", { result: "ok" }), pointer: "/observation/result", rule: "unknownProperty" },
  { name: "a client action kind without a tool name", event: set(example("ActionEvent", "TerminalAction"), { action: { kind: "ClientAction_" } }), pointer: "/action/kind", rule: "unknownKind" },
  { name: "the pre-1.0 event format (action and args, no kind)", event: { id: 12, timestamp: "2025-06-01T10:00:00.000000", source: "agent", message: "Running command: ls", action: "run", args: { command: "ls" } }, pointer: "/kind", rule: "required" },
  { name: "a never released kind (SystemPromptUpdateEvent, branch fix-tools)", event: set(example("SystemPromptEvent"), { kind: "SystemPromptUpdateEvent" }), pointer: "/kind", rule: "unknownKind" },
];

describe("invalid events: one per rule", () => {
  it.each([...missingRequired, ...rows].map((row) => [row.name, row] as const))("%s", (_name, row) => {
    const result = validateEvent(row.event);
    expect(result.ok).toBe(false);
    expect(result.errors).toHaveLength(1);
    const [issue] = result.errors;
    expect({ pointer: issue!.pointer, rule: issue!.rule }).toEqual({ pointer: row.pointer, rule: row.rule });
    if (row.says) expect(issue!.message).toContain(row.says);
  });

  it("derives a required-field row for every required field of every kind", () => {
    expect(missingRequired.length).toBeGreaterThanOrEqual(40);
  });
});

describe("permissive objects accept unknown properties (ground-truth §1)", () => {
  const accepted: Array<[string, Mutable]> = [
    ["Message", (() => { const e = example("MessageEvent"); e.llm_message.annotations = []; return e; })()],
    ["ImageContent", (() => { const e = example("MessageEvent"); e.llm_message.content = [{ type: "image", image_urls: ["data:image/png;base64,AAAA"], detail: "high" }]; return e; })()],
    ["ThinkingBlock", set(example("ActionEvent", "ThinkAction"), { thinking_blocks: [{ type: "thinking", thinking: "hm", signature: null, cache_control: {} }] })],
    ["RedactedThinkingBlock", set(example("ActionEvent", "ThinkAction"), { thinking_blocks: [{ type: "redacted_thinking", data: "xx", extra: 1 }] })],
    ["ReasoningItemModel", set(example("ActionEvent", "ThinkAction"), { responses_reasoning_item: { id: "rs_1", summary: [], type: "reasoning" } })],
    ["MessageToolCall (responses_item_id)", (() => { const e = example("ActionEvent", "ThinkAction"); e.tool_call.responses_item_id = "fc_1"; return e; })()],
    ["CriticResult", set(example("ActionEvent", "ThinkAction"), { critic_result: { score: 0.9, message: null, metadata: { event_ids: [] }, model: "critic-1" } })],
    ["ToolDefinition", (() => { const e = example("SystemPromptEvent"); e.tools[0].version = 2; return e; })()],
    ["ToolAnnotations", (() => { const e = example("SystemPromptEvent"); e.tools[0].annotations.experimentalHint = true; return e; })()],
    ["TaskItem", withAction("TaskTrackerAction", { task_list: [{ title: "x", owner: "me" }] })],
    ["TerminalMetadata", withObservation("TerminalObservation", { metadata: { pid: 4, session: "s" } })],
    ["FileEntry", withObservation("ListDirectoryObservation", { entries: [{ name: "a", path: "a", is_directory: false, size: 1, modified_time: "2026-02-05T11:20:01", mode: "644" }] })],
    ["MCPToolAction data (free-form)", withAction("MCPToolAction", { data: { anything: { goes: [1, "x"] } } })],
    ["ConversationStateUpdateEvent value (any JSON)", set(example("ConversationStateUpdateEvent"), { value: [null, { deep: true }] })],
    ["mcp_tool (keys of newer MCP versions)", (() => { const e = example("SystemPromptEvent"); const i = e.tools.findIndex((t: Mutable) => t.kind === "MCPToolDefinition"); e.tools[i].mcp_tool.icons = [{ src: "x.png" }]; e.tools[i].mcp_tool.execution = {}; return e; })()],
    ["a client tool's action (fields from the client's parameters)", set(example("ActionEvent", "TerminalAction"), { action: { kind: "ClientAction_lookup_ticket", ticket_id: "OPS-1", depth: 2, nested: { any: [1] } } })],
  ];
  it.each(accepted)("%s", (_name, event) => {
    expect(validateEvent(event)).toEqual({ ok: true, errors: [], warnings: [] });
  });
});

describe("accepted shapes of ground-truth §1", () => {
  const ok = (event: Mutable) => expect(validateEvent(event).errors.map(formatIssue)).toEqual([]);
  it.each([
    ["no offset, microseconds", "2026-02-05T11:24:47.142819"],
    ["no offset, no fraction", "2026-02-05T11:24:47"],
    ["Z", "2026-02-05T11:24:47Z"],
    ["+02:00", "2026-02-05T11:24:47.1+02:00"],
    ["-0530", "2026-02-05T11:24:47-0530"],
  ])("timestamp %s", (_name, timestamp) => ok(set(example("PauseEvent"), { timestamp })));

  it.each([
    ["hyphenated UUID", "974caa29-4f4b-4c30-b4e1-5169f41e6d3d"],
    ["upper-case UUID", "974CAA29-4F4B-4C30-B4E1-5169F41E6D3D"],
    ["ULID", "01J8Z3N5Q2W7XK4T9B6C1D0E2F"],
  ])("id as %s", (_name, id) => ok(set(example("PauseEvent"), { id })));

  it("a CondensationSummaryEvent id with the -summary suffix", () =>
    ok(set(example("CondensationSummaryEvent"), { id: "0b9f3c1e-5d2a-4c8e-9f7b-3a1d2e4f5a6b-summary" })));

  it("optional fields absent (recordings) or explicit null (API output)", () => {
    const absent = example("ActionEvent", "TerminalAction");
    for (const key of ["reasoning_content", "responses_reasoning_item", "critic_result", "summary"]) delete absent[key];
    ok(absent);
    ok({ ...absent, reasoning_content: null, responses_reasoning_item: null, critic_result: null, summary: null, action: null });
  });

  it("parent_id: an earlier event's id, __root__, or null", () => {
    for (const parent_id of ["fa7668e4-a43d-4fa4-b75c-ffd642afb5b5", "01J8Z3N5Q2W7XK4T9B6C1D0E2F", "__root__", null]) ok(set(example("PauseEvent"), { parent_id }));
  });

  it("the hook source", () => {
    ok(set(example("HookExecutionEvent"), { source: "hook" }));
    ok(set(example("MessageEvent"), { source: "hook" }));
  });

  it("the corrections of ground-truth (openhands-versions §2)", () => {
    // #1 a later condensation forgets an earlier one's summary; forgotten ids are any strings
    ok(set(example("Condensation"), { forgotten_event_ids: ["0b9f3c1e-5d2a-4c8e-9f7b-3a1d2e4f5a6b-summary", "cond-2-summary", "x"] }));
    // #2 mcp_tool: hints bool | null, `meta` and `_meta`, unknown keys
    const mcp = example("SystemPromptEvent");
    const i = mcp.tools.findIndex((t: Mutable) => t.kind === "MCPToolDefinition");
    mcp.tools[i].mcp_tool = { ...mcp.tools[i].mcp_tool, annotations: { title: null, readOnlyHint: null, destructiveHint: true, idempotentHint: null, openWorldHint: null }, meta: { a: 1 }, _meta: null, icons: null };
    ok(mcp);
    // #3 tab_id has no length constraint
    ok(withAction("BrowserCloseTabAction", { tab_id: "abcde" }));
    ok(withAction("BrowserSwitchTabAction", { tab_id: "7" }));
    // #9 a null CriticResult.message and TerminalObservation.command are stored as absent
    ok(set(example("MessageEvent"), { critic_result: { score: 0.5 } }));
    const terminal = example("ObservationEvent", "TerminalObservation");
    delete terminal.observation.command;
    ok(terminal);
    // #11 the goal key, and the deleting execution status
    ok(set(example("ConversationStateUpdateEvent"), { key: "goal", value: { status: "active" } }));
    ok(set(example("ConversationStateUpdateEvent"), { key: "execution_status", value: "deleting" }));
  });

  it("default sources may be left out", () => {
    const e = example("ObservationEvent", "FinishObservation");
    delete e.source;
    ok(e);
  });
});
