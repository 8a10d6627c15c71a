import { type ValidationIssue } from "./issues.js";
import { NOTHING, TrajectoryChecker } from "./sequence.js";
import { validateEvent, type ValidateOptions } from "./validate.js";

/** An issue of one event of a trajectory. */
export interface TrajectoryIssue extends ValidationIssue {
  /** Position of the event in the trajectory (0-based). */
  index: number;
  /** 1-based line of the event, for JSONL input. */
  line?: number;
  /** The event's `id`, when it has a string one. */
  eventId?: string;
}

export interface TrajectoryResult {
  ok: boolean;
  /** Number of events read (lines that are not JSON count too). */
  count: number;
  errors: TrajectoryIssue[];
  warnings: TrajectoryIssue[];
  /** True when `maxErrors` stopped the validation early. */
  truncated: boolean;
}

export interface TrajectoryOptions extends ValidateOptions {
  /** Stop after this many errors (default: no limit). */
  maxErrors?: number;
  /**
   * Also check the sequence rules (`SEQUENCE_RULES`: unique ids, observations answer earlier
   * actions, …) with a {@link TrajectoryChecker}. Default false: each event is validated alone.
   */
  sequence?: boolean;
}

/**
 * What {@link validateTrajectory} reads: an array of events, an iterable of events, an EventPage,
 * or text holding a JSON array, an EventPage, one event, or JSONL (one event a line).
 */
export type TrajectoryInput = string | Iterable<unknown> | { items: readonly unknown[] };

/** One event of a trajectory as read, before validation. */
export interface TrajectoryEntry {
  value: unknown;
  /** 1-based line, for JSONL and single-event text. */
  line?: number;
  /** Set when the text of this entry is not JSON (`value` is then undefined). */
  parseError?: string;
}

/**
 * Reads the events of a trajectory without validating them: the same inputs as
 * {@link validateTrajectory}, in order, each with its line where the input is text.
 */
export function* trajectoryEntries(input: TrajectoryInput): Generator<TrajectoryEntry> {
  if (typeof input === "string") {
    yield* entriesOfText(input);
    return;
  }
  if (!isIterable(input) && Array.isArray((input as { items?: unknown }).items)) {
    for (const value of (input as { items: unknown[] }).items) yield { value };
    return;
  }
  for (const value of input as Iterable<unknown>) yield { value };
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.iterator in value;
}

function* entriesOfText(text: string): Generator<TrajectoryEntry> {
  const trimmed = text.trim();
  if (trimmed === "") return;
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    let whole: unknown;
    let parsed = false;
    try {
      whole = JSON.parse(trimmed);
      parsed = true;
    } catch {
      // Not one JSON value: JSONL, read below line by line (or a broken array, reported there).
    }
    if (parsed) {
      if (Array.isArray(whole)) for (const value of whole) yield { value };
      else if (isPage(whole)) for (const value of whole.items) yield { value };
      else yield { value: whole, line: 1 + countLines(text.slice(0, text.length - text.trimStart().length)) };
      return;
    }
    if (trimmed.startsWith("[")) {
      yield { value: undefined, parseError: parseErrorOf(trimmed) };
      return;
    }
  }
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    try {
      yield { value: JSON.parse(line), line: i + 1 };
    } catch (error) {
      yield { value: undefined, line: i + 1, parseError: error instanceof Error ? error.message : String(error) };
    }
  }
}

const isPage = (value: unknown): value is { items: unknown[] } =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Array.isArray((value as { items?: unknown }).items) && !("kind" in value);

function countLines(text: string): number {
  let count = 0;
  for (const ch of text) if (ch === "\n") count++;
  return count;
}

function idOf(value: unknown): string | undefined {
  try {
    const id = typeof value === "object" && value !== null ? (value as { id?: unknown }).id : undefined;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined; // a throwing getter is reported by validateEvent
  }
}

function parseErrorOf(text: string): string {
  try {
    JSON.parse(text);
    return "unknown error";
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Validates a recorded trajectory, reporting each issue with the index (and, for JSONL, the line)
 * of its event.
 *
 * @example
 * const result = validateTrajectory(readFileSync("conversation.jsonl", "utf8"));
 * for (const e of result.errors) console.error(`line ${e.line}: ${e.pointer} ${e.message}`);
 */
export function validateTrajectory(input: TrajectoryInput, options: TrajectoryOptions = {}): TrajectoryResult {
  const maxErrors = options.maxErrors ?? Infinity;
  const checker = options.sequence ? new TrajectoryChecker() : undefined;
  const errors: TrajectoryIssue[] = [];
  const warnings: TrajectoryIssue[] = [];
  let count = 0;
  let truncated = false;
  for (const entry of trajectoryEntries(input)) {
    const index = count++;
    const where = { index, ...(entry.line !== undefined && { line: entry.line }) };
    if (entry.parseError !== undefined) {
      errors.push({ ...where, pointer: "", rule: "json", message: `is not valid JSON: ${entry.parseError}` });
      checker?.check(undefined, entry.line);
    } else {
      const result = validateEvent(entry.value, options);
      const sequence = checker ? checker.check(entry.value, entry.line) : NOTHING;
      const id = idOf(entry.value);
      const located = { ...where, ...(id !== undefined && { eventId: id }) };
      for (const issue of result.errors) errors.push({ ...located, ...issue });
      for (const issue of sequence.errors) errors.push({ ...located, ...issue });
      for (const issue of result.warnings) warnings.push({ ...located, ...issue });
      for (const issue of sequence.warnings) warnings.push({ ...located, ...issue });
    }
    if (errors.length >= maxErrors) {
      truncated = true;
      errors.length = maxErrors;
      break;
    }
  }
  return { ok: errors.length === 0, count, errors, warnings, truncated };
}

/**
 * Checks only the sequence rules (`SEQUENCE_RULES`) over a trajectory, without validating each
 * event against the schema: the inputs of {@link validateTrajectory}, each issue with the index,
 * line (text input) and id of its event.
 *
 * @example
 * const { ok, errors } = checkSequence(readFileSync("conversation.jsonl", "utf8"));
 * for (const e of errors) console.error(`line ${e.line}: ${e.pointer} ${e.message} (${e.rule})`);
 */
export function checkSequence(input: TrajectoryInput): Omit<TrajectoryResult, "truncated"> {
  const checker = new TrajectoryChecker();
  const errors: TrajectoryIssue[] = [];
  const warnings: TrajectoryIssue[] = [];
  let count = 0;
  for (const entry of trajectoryEntries(input)) {
    const index = count++;
    const result = checker.check(entry.value, entry.line);
    if (result === NOTHING) continue;
    const id = idOf(entry.value);
    const where = { index, ...(entry.line !== undefined && { line: entry.line }), ...(id !== undefined && { eventId: id }) };
    for (const issue of result.errors) errors.push({ ...where, ...issue });
    for (const issue of result.warnings) warnings.push({ ...where, ...issue });
  }
  return { ok: errors.length === 0, count, errors, warnings };
}
