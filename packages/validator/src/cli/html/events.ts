/**
 * One event of a recording as HTML, in the manner of a conversation: messages as chat bubbles,
 * actions with their tool and arguments, observations under the action they answer, errors,
 * condensations and state changes compactly. Every piece of an event is escaped text: nothing
 * in a recording becomes markup.
 */
import { count, shown } from "./escape.js";
import { argumentsOf, contentText, fieldValue, isObject, previewJson, text, timeOf, type JsonObject } from "./text.js";

/** An event as the report shows it. */
export interface EventView {
  /** 0-based position in its input; shown 1-based. */
  index: number;
  /** Its element id in the report. */
  anchor: string;
  /** The line its text starts on, when the input counts lines. */
  line?: number;
  /** Its own file, in an event directory. */
  file?: string;
  /** The parsed event; undefined when its text is not JSON. */
  value: unknown;
  parseError?: string;
  /** The start of its text, when it is not JSON. */
  rawText?: string;
}

/** The ActionEvent an observation, rejection or agent error answers. */
export interface AnsweredAction {
  /** Its position (0-based) in the input. */
  index: number;
  /** Its element id, when the report shows it. */
  anchor?: string;
}

interface RenderOptions {
  /** The action this event answers (by `tool_call_id`), when it was read earlier. */
  answers?: AnsweredAction;
  /** The event shown just before is the action this one answers: drawn as one block with it. */
  joined?: boolean;
  /** The worst of the event's issues, when it has any. */
  flag?: "error" | "warning";
}

/** How much of each kind of text is shown. */
const LIMIT = { message: 8_000, output: 4_000, argument: 1_000, prompt: 20_000, line: 300, ids: 50 } as const;

/** The event's `<article>`: a line of facts, its content, then `issues` (already HTML). */
export function renderEvent(view: EventView, issues: string, options: RenderOptions = {}): string {
  const event = view.value;
  const kind = text(event, "kind");
  let body: { className: string; html: string };
  if (view.parseError !== undefined) body = notJson(view);
  else if (!isObject(event)) body = { className: "other", html: `<p class="line">Not an event: <code>${shown(previewJson(event, LIMIT.line), LIMIT.line)}</code></p>` };
  else body = (kind !== undefined && Object.hasOwn(RENDERERS, kind) ? RENDERERS[kind]! : other)(event, options);
  const flagged = options.flag ? ` has-${options.flag}` : "";
  return `<article class="ev ${body.className}${options.joined ? " joined" : ""}${flagged}" id="${view.anchor}">${meta(view, kind, event)}${body.html}${issues}</article>\n`;
}

/** `#13 · line 13 · 11:24:47.142 · ActionEvent · agent`, the number a link to the event itself. */
function meta(view: EventView, kind: string | undefined, event: unknown): string {
  const parts = [`<a href="#${view.anchor}">#${count(view.index + 1)}</a>`];
  if (view.file !== undefined) parts.push(`<span class="file">${shown(view.file, LIMIT.line)}</span>`);
  else if (view.line !== undefined) parts.push(`line ${count(view.line)}`);
  const timestamp = text(event, "timestamp");
  const time = timeOf(timestamp);
  if (time !== undefined) parts.push(`<time title="${shown(timestamp ?? "", LIMIT.line)}">${shown(time, LIMIT.line)}</time>`);
  if (kind !== undefined) parts.push(`<span class="kind">${shown(kind, LIMIT.line)}</span>`);
  const source = text(event, "source");
  if (source !== undefined) parts.push(`<span class="source">${shown(source, LIMIT.line)}</span>`);
  return `<p class="meta">${parts.join(" · ")}</p>`;
}

type Renderer = (event: JsonObject, options: RenderOptions) => { className: string; html: string };

const pre = (className: string, value: string, max: number) => `<pre class="${className}">${shown(value, max)}</pre>`;
const code = (value: string) => `<code>${shown(value, LIMIT.line)}</code>`;
const reasoning = (value: string) => (value.trim() === "" ? "" : `<details class="reasoning"><summary>reasoning</summary>${pre("text", value, LIMIT.message)}</details>`);

/**
 * The answered action: a link to it (`#3`), its number alone when the report does not show it, or
 * the tool call's id when no earlier action made it.
 */
function callRef(answers: AnsweredAction | undefined, toolCallId: string | undefined): string {
  if (answers) return answers.anchor ? `<a href="#${answers.anchor}">#${count(answers.index + 1)}</a>` : `#${count(answers.index + 1)}, not shown`;
  return toolCallId !== undefined ? `tool call ${code(toolCallId)}` : "";
}

const inParentheses = (text: string) => (text === "" ? "" : ` (${text})`);

function message(event: JsonObject): { className: string; html: string } {
  const llm = isObject(event.llm_message) ? event.llm_message : {};
  const role = text(llm, "role");
  const source = text(event, "source");
  const side = source === "user" || role === "user" ? "from-user" : source === "agent" || role === "assistant" ? "from-agent" : "from-other";
  const { text: body, images } = contentText(llm.content);
  let html = `<div class="bubble">${body === "" ? "<em>(no text)</em>" : shown(body, LIMIT.message)}${images > 0 ? `<p class="note">${count(images)} image${images === 1 ? "" : "s"} (not shown)</p>` : ""}</div>`;
  const thinking = thinkingText(llm.thinking_blocks) || (text(llm, "reasoning_content") ?? "");
  html = reasoning(thinking) + html;
  const skills = Array.isArray(event.activated_skills) ? event.activated_skills.filter((s): s is string => typeof s === "string") : [];
  if (skills.length > 0) html += `<p class="note">skills: ${shown(skills.join(", "), LIMIT.line)}</p>`;
  const extended = contentText(event.extended_content).text;
  if (extended !== "") html += `<details class="extended"><summary>extended content</summary>${pre("text", extended, LIMIT.message)}</details>`;
  return { className: `msg ${side}`, html };
}

function thinkingText(blocks: unknown): string {
  if (!Array.isArray(blocks)) return "";
  return blocks.map((b) => text(b, "thinking") ?? "").filter(Boolean).join("\n\n");
}

/** The tool, the action's summary, then its arguments: a terminal command as a command line. */
function action(event: JsonObject): { className: string; html: string } {
  const act = event.action;
  const toolCall = isObject(event.tool_call) ? event.tool_call : {};
  const tool = text(event, "tool_name") ?? text(toolCall, "name") ?? "(no tool)";
  const actionKind = text(act, "kind");
  const summary = text(event, "summary");
  let html = "";
  const thought = contentText(event.thought).text;
  if (thought !== "") html += `<p class="thought">${shown(thought, LIMIT.message)}</p>`;
  html += reasoning(text(event, "reasoning_content") ?? thinkingText(event.thinking_blocks));
  html += `<p class="tool"><span class="tool-name">${shown(tool, LIMIT.line)}</span>${actionKind !== undefined ? ` <span class="variant">${shown(actionKind, LIMIT.line)}</span>` : ""}${summary ? ` ${shown(summary, LIMIT.line)}` : ""}</p>`;
  const command = text(act, "command");
  if (actionKind === "TerminalAction" && command !== undefined) html += pre("cmd", `$ ${command}`, LIMIT.argument);
  else html += argumentList(argumentsOf(act, toolCall.arguments));
  return { className: "act", html };
}

function argumentList(pairs: [string, unknown][]): string {
  if (pairs.length === 0) return "";
  return `<dl class="args">${pairs.map(([name, value]) => `<dt>${shown(name, LIMIT.line)}</dt><dd>${shown(fieldValue(value, LIMIT.argument), LIMIT.argument)}</dd>`).join("")}</dl>`;
}

/** An observation, under the action it answers: its output, and whether the tool failed. */
function observation(event: JsonObject, options: RenderOptions): { className: string; html: string } {
  const obs = isObject(event.observation) ? event.observation : {};
  const failed = obs.is_error === true;
  const facts: string[] = [];
  if (typeof obs.exit_code === "number") facts.push(`exit code ${obs.exit_code}`);
  if (obs.timeout === true) facts.push("timed out");
  if (failed) facts.push("error");
  const { text: output, images } = contentText(obs.content);
  const variant = text(obs, "kind");
  const ref = callRef(options.answers, text(event, "tool_call_id"));
  let html = `<p class="tool">↳ <span class="tool-name">${shown(text(event, "tool_name") ?? "(no tool)", LIMIT.line)}</span>${variant !== undefined ? ` <span class="variant">${shown(variant, LIMIT.line)}</span>` : ""} result${ref ? ` of ${ref}` : ""}${facts.length ? ` · ${facts.join(" · ")}` : ""}</p>`;
  html += output !== "" ? pre("out", output, LIMIT.output) : `<p class="note">(no output text)</p>`;
  if (images > 0) html += `<p class="note">${count(images)} image${images === 1 ? "" : "s"} (not shown)</p>`;
  return { className: `obs${failed ? " failed" : ""}`, html };
}

function rejection(event: JsonObject, options: RenderOptions): { className: string; html: string } {
  const by = text(event, "rejection_source") ?? "user";
  const reason = text(event, "rejection_reason") ?? "User rejected the action";
  return {
    className: "obs rejected",
    html: `<p class="tool">✋ <span class="tool-name">${shown(text(event, "tool_name") ?? "(no tool)", LIMIT.line)}</span> rejected by ${shown(by, LIMIT.line)}${inParentheses(callRef(options.answers, text(event, "tool_call_id")))}</p><p>${shown(reason, LIMIT.message)}</p>`,
  };
}

function agentError(event: JsonObject, options: RenderOptions): { className: string; html: string } {
  return {
    className: "obs failed agent-error",
    html: `<p class="tool">⚠ agent error in <span class="tool-name">${shown(text(event, "tool_name") ?? "(no tool)", LIMIT.line)}</span>${inParentheses(callRef(options.answers, text(event, "tool_call_id")))}${classification(event)}</p>${pre("out", text(event, "error") ?? "", LIMIT.output)}`,
  };
}

function classification(event: JsonObject): string {
  const kind = text(event.classification, "kind");
  return kind !== undefined ? ` · ${shown(kind, LIMIT.line)}` : "";
}

/** ConversationErrorEvent and ServerErrorEvent: a code and a detail. */
function failure(event: JsonObject): { className: string; html: string } {
  return {
    className: "failure",
    html: `<p class="tool">⚠ ${code(text(event, "code") ?? "(no code)")}${classification(event)}</p>${pre("out", text(event, "detail") ?? "", LIMIT.output)}`,
  };
}

function condensation(event: JsonObject): { className: string; html: string } {
  const forgotten = Array.isArray(event.forgotten_event_ids) ? event.forgotten_event_ids : [];
  const summary = text(event, "summary");
  let html = `<p class="tool">Condensation: forgot ${count(forgotten.length)} event${forgotten.length === 1 ? "" : "s"}${typeof event.summary_offset === "number" ? `, summary at ${event.summary_offset}` : ""}</p>`;
  if (summary) html += pre("text", summary, LIMIT.message);
  if (forgotten.length > 0) {
    const ids = forgotten.slice(0, LIMIT.ids).map((id) => code(typeof id === "string" ? id : previewJson(id, 60)));
    html += `<details class="forgotten"><summary>forgotten ids</summary><p>${ids.join(" ")}${forgotten.length > LIMIT.ids ? ` … ${count(forgotten.length - LIMIT.ids)} more` : ""}</p></details>`;
  }
  return { className: "cond", html };
}

/** A state change: `execution_status = running`, the status also as a class (colour). */
function stateUpdate(event: JsonObject): { className: string; html: string } {
  const key = text(event, "key") ?? "(no key)";
  const value = event.value;
  const status = key === "execution_status" && typeof value === "string" && /^[a-z_]{1,40}$/.test(value) ? ` status-${value}` : "";
  return { className: `line state${status}`, html: `<p class="line">state ${code(key)} = ${code(fieldValue(value, LIMIT.line))}</p>` };
}

function systemPrompt(event: JsonObject): { className: string; html: string } {
  const tools = Array.isArray(event.tools) ? event.tools : [];
  const names = tools.map((t) => text(t, "title") ?? text(t, "kind") ?? "?").slice(0, 40);
  const prompt = text(event.system_prompt, "text") ?? "";
  const dynamic = text(event.dynamic_context, "text");
  return {
    className: "system",
    html: `<details><summary>System prompt · ${count(prompt.length)} characters · ${count(tools.length)} tool${tools.length === 1 ? "" : "s"}${names.length ? `: ${shown(names.join(", "), LIMIT.line)}` : ""}</summary>${pre("text", prompt, LIMIT.prompt)}${dynamic ? pre("text", dynamic, LIMIT.prompt) : ""}</details>`,
  };
}

function acpToolCall(event: JsonObject): { className: string; html: string } {
  const facts = [text(event, "tool_kind"), text(event, "status"), event.is_error === true ? "error" : undefined].filter((f): f is string => f !== undefined);
  let html = `<p class="tool"><span class="tool-name">${shown(text(event, "title") ?? "(no title)", LIMIT.line)}</span>${facts.length ? ` · ${shown(facts.join(" · "), LIMIT.line)}` : ""}</p>`;
  if (isObject(event.raw_input)) html += argumentList(argumentsOf(event.raw_input, undefined));
  if (event.raw_output !== undefined && event.raw_output !== null) html += pre("out", fieldValue(event.raw_output, LIMIT.output), LIMIT.output);
  return { className: `act acp${event.is_error === true ? " failed" : ""}`, html };
}

function hook(event: JsonObject): { className: string; html: string } {
  const facts = [`exit code ${typeof event.exit_code === "number" ? event.exit_code : "?"}`];
  if (event.blocked === true) facts.push("blocked");
  if (event.success === false) facts.push("failed");
  const output = [text(event, "reason"), text(event, "error"), text(event, "stdout"), text(event, "stderr")].filter((s) => s).join("\n");
  return {
    className: "line hook",
    html: `<p class="line">hook ${shown(text(event, "hook_event_type") ?? "?", LIMIT.line)} ${code(text(event, "hook_command") ?? "")} · ${facts.join(" · ")}</p>${output ? pre("out", output, LIMIT.output) : ""}`,
  };
}

/** Kinds with nothing to show but that they happened, or a field or two. */
const compact =
  (label: string, field?: string): Renderer =>
  (event) => {
    const value = field !== undefined ? event[field] : undefined;
    return { className: "line", html: `<p class="line">${label}${value !== undefined ? ` ${code(fieldValue(value, LIMIT.line))}` : ""}</p>` };
  };

/** A kind the report does not know: its fields as JSON. */
function other(event: JsonObject): { className: string; html: string } {
  return { className: "other", html: pre("json", previewJson(event, LIMIT.output), LIMIT.output) };
}

function notJson(view: EventView): { className: string; html: string } {
  return { className: "other bad", html: `<p class="line">Not JSON: ${shown(view.parseError ?? "", LIMIT.line)}</p>${pre("json", view.rawText ?? "", LIMIT.output)}` };
}

const RENDERERS: Record<string, Renderer> = {
  MessageEvent: message,
  ActionEvent: action,
  ObservationEvent: observation,
  UserRejectObservation: rejection,
  AgentErrorEvent: agentError,
  ConversationErrorEvent: failure,
  ServerErrorEvent: failure,
  Condensation: condensation,
  CondensationRequest: compact("Condensation requested"),
  CondensationSummaryEvent: (event) => ({ className: "cond", html: `<p class="tool">Condensation summary</p>${pre("text", text(event, "summary") ?? "", LIMIT.message)}` }),
  ConversationStateUpdateEvent: stateUpdate,
  SystemPromptEvent: systemPrompt,
  PauseEvent: compact("⏸ Paused"),
  InterruptEvent: compact("⏹ Interrupted"),
  ACPToolCallEvent: acpToolCall,
  HookExecutionEvent: hook,
  TokenEvent: (event) => compact(`Tokens: ${count(Array.isArray(event.prompt_token_ids) ? event.prompt_token_ids.length : 0)} prompt, ${count(Array.isArray(event.response_token_ids) ? event.response_token_ids.length : 0)} response`)(event, {}),
  LLMCompletionLogEvent: compact("LLM completion log", "filename"),
  StreamingDeltaEvent: compact("Streaming delta", "content"),
};
