/**
 * Scenarios from files: a recording (JSONL, one event a line, as the reference implementation writes
 * them; a JSON array of events; an EventPage) works as is, and a scenario document
 * `{"name", "description", "conversation_id", "preload", "events": [...]}` names and places it.
 * Every event is validated on load; errors name the file, the line and the field.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Event } from "@acs-toolkit/schema";
import { canonicalConversationId } from "@acs-toolkit/server";
import { trajectoryEntries, validateEvent, type TrajectoryEntry } from "@acs-toolkit/validator";
import { deriveSeed, randomUuid, seededRandom } from "../random.js";
import type { Scenario } from "./types.js";

/** One problem of a scenario file. */
export interface ScenarioFileIssue {
  file: string;
  /** 1-based line of the culprit (the field's own line when the text shows it). */
  line?: number;
  /** JSON pointer of the field inside the file's JSON (for JSONL: inside the line's event). */
  pointer: string;
  message: string;
}

/** A scenario file that cannot be served; `message` lists every issue as `file:line: pointer: message`. */
export class ScenarioFileError extends Error {
  override readonly name = "ScenarioFileError";
  constructor(readonly issues: ScenarioFileIssue[]) {
    super(issues.map(formatScenarioIssue).join("\n"));
  }
}

export function formatScenarioIssue(issue: ScenarioFileIssue): string {
  return `${issue.file}${issue.line !== undefined ? `:${issue.line}` : ""}: ${issue.pointer || "/"}: ${issue.message}`;
}

const MAX_ISSUES = 50;

interface ScenarioDocument {
  name?: unknown;
  description?: unknown;
  conversation_id?: unknown;
  preload?: unknown;
  events?: unknown;
}

const isScenarioDocument = (value: unknown): value is ScenarioDocument =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Array.isArray((value as ScenarioDocument).events) && !("kind" in value);

/**
 * Reads and validates a scenario file.
 * @param seed gives a file without `conversation_id` a stable id
 * @throws ScenarioFileError naming file, line and field of every problem (up to 50)
 */
export function loadScenarioFile(file: string, seed = 1): Scenario {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ScenarioFileError([{ file, pointer: "", message: `cannot be read: ${(error as Error).message}` }]);
  }
  return parseScenario(text, file, seed);
}

/** Validates the text of a scenario file (see {@link loadScenarioFile}); `file` names it in errors. */
export function parseScenario(text: string, file: string, seed = 1): Scenario {
  const issues: ScenarioFileIssue[] = [];
  let document: ScenarioDocument | undefined;
  let eventsPointer = "";
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (isScenarioDocument(parsed)) {
        document = parsed;
        eventsPointer = "/events";
      } else if (typeof parsed === "object" && parsed !== null && Array.isArray((parsed as { items?: unknown }).items) && !("kind" in parsed)) {
        eventsPointer = "/items";
      }
    } catch {
      // JSONL: read line by line below.
    }
  } else if (trimmed.startsWith("[")) {
    eventsPointer = "";
  }
  const entries: Iterable<TrajectoryEntry> = document ? trajectoryEntries(document.events as unknown[]) : trajectoryEntries(text);
  const lines = lineIndex(text);
  const isJsonl = !document && eventsPointer === "" && !trimmed.startsWith("[") && !(trimmed.startsWith("{") && isSingleValue(trimmed));
  let positions: Map<string, number> | undefined;
  /** Line of `pointer` inside event `index` (whole-document JSON: found by scanning the text once). */
  const lineOf = (index: number, entryLine: number | undefined, pointer: string): number | undefined => {
    if (isJsonl && entryLine !== undefined) {
      const lineText = text.split("\n")[entryLine - 1] ?? "";
      const offset = valuePositions(lineText).get(pointer);
      return offset === undefined ? entryLine : entryLine + countNewlines(lineText, offset);
    }
    positions ??= valuePositions(text);
    const full = `${eventsPointer}/${index}${pointer}`;
    for (let p = full; ; p = p.slice(0, p.lastIndexOf("/"))) {
      const offset = positions.get(p);
      if (offset !== undefined) return lines(offset);
      if (p === "") return entryLine;
    }
  };

  if (document) {
    if (document.name !== undefined && (typeof document.name !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(document.name))) {
      issues.push({ file, line: locate(text, "/name"), pointer: "/name", message: "must be a name of letters, digits, '.', '_' or '-' (at most 64)" });
    }
    if (document.conversation_id !== undefined && (typeof document.conversation_id !== "string" || !canonicalConversationId(document.conversation_id))) {
      issues.push({ file, line: locate(text, "/conversation_id"), pointer: "/conversation_id", message: "must be a UUID" });
    }
    if (document.preload !== undefined && (!Number.isInteger(document.preload) || (document.preload as number) < 0)) {
      issues.push({ file, line: locate(text, "/preload"), pointer: "/preload", message: "must be a whole number ≥ 0" });
    }
    if (document.description !== undefined && typeof document.description !== "string") {
      issues.push({ file, line: locate(text, "/description"), pointer: "/description", message: "must be a string" });
    }
  }

  const events: Event[] = [];
  const ids = new Map<string, number>();
  let index = 0;
  for (const entry of entries) {
    const at = isJsonl ? "" : `${eventsPointer}/${index}`;
    if (entry.parseError !== undefined) {
      issues.push({ file, line: entry.line, pointer: at, message: `is not valid JSON: ${entry.parseError}` });
    } else {
      const result = validateEvent(entry.value);
      if (result.ok) {
        const event = entry.value as Event;
        const first = ids.get(event.id);
        if (first !== undefined) {
          issues.push({ file, line: lineOf(index, entry.line, "/id"), pointer: `${at}/id`, message: `repeats the id ${JSON.stringify(event.id)} of event ${first}` });
        } else ids.set(event.id, index);
        events.push(event);
      } else {
        for (const issue of result.errors) {
          issues.push({ file, line: lineOf(index, entry.line, issue.pointer), pointer: `${at}${issue.pointer}`, message: issue.message });
        }
      }
    }
    if (issues.length >= MAX_ISSUES) break;
    index++;
  }
  if (issues.length === 0 && events.length === 0) issues.push({ file, pointer: eventsPointer, message: "holds no event" });
  if (issues.length) throw new ScenarioFileError(issues.slice(0, MAX_ISSUES));

  const name = typeof document?.name === "string" ? document.name : path.basename(file).replace(/\.(jsonl?|ndjson)$/i, "");
  const firstUserMessage = events.findIndex((e) => e.kind === "MessageEvent" && e.source === "user");
  const preload = typeof document?.preload === "number" ? Math.min(document.preload, events.length) : firstUserMessage + 1;
  return {
    name,
    description: typeof document?.description === "string" ? document.description : `${events.length} events from ${path.basename(file)}`,
    conversationId:
      typeof document?.conversation_id === "string" ? canonicalConversationId(document.conversation_id)! : randomUuid(seededRandom(deriveSeed(seed, `file:${name}`))),
    events,
    preload,
    origin: file,
  };
}

function isSingleValue(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function countNewlines(text: string, end: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** offset → 1-based line, by binary search over the offsets of newlines. */
function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

function locate(text: string, pointer: string): number | undefined {
  const offset = valuePositions(text).get(pointer);
  return offset === undefined ? undefined : lineIndex(text)(offset);
}

/**
 * The text offset where each value of a JSON text starts, by JSON pointer (a small scanner: the
 * text is known to be JSON, or the first value of it is used).
 */
function valuePositions(text: string): Map<string, number> {
  const positions = new Map<string, number>();
  let i = 0;
  const skip = () => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const readString = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return text.slice(start + 1, i - 1);
    }
  };
  const escape = (token: string) => token.replace(/~/g, "~0").replace(/\//g, "~1");
  const value = (pointer: string, depth: number): void => {
    skip();
    positions.set(pointer, i);
    if (depth > 64) return;
    const ch = text[i];
    if (ch === "{") {
      i++;
      for (;;) {
        skip();
        if (text[i] === "}") return void i++;
        if (text[i] !== '"') return;
        const key = readString();
        skip();
        if (text[i] !== ":") return;
        i++;
        value(`${pointer}/${escape(key)}`, depth + 1);
        skip();
        if (text[i] === ",") i++;
        else if (text[i] === "}") return void i++;
        else return;
      }
    } else if (ch === "[") {
      i++;
      for (let n = 0; ; n++) {
        skip();
        if (text[i] === "]") return void i++;
        value(`${pointer}/${n}`, depth + 1);
        skip();
        if (text[i] === ",") i++;
        else if (text[i] === "]") return void i++;
        else return;
      }
    } else if (ch === '"') {
      readString();
    } else {
      while (i < text.length && !",]}".includes(text[i]!) && !" \t\r\n".includes(text[i]!)) i++;
    }
  };
  value("", 0);
  return positions;
}
