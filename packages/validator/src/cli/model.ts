/** What the command reports, whatever the output format. */
import type { Format } from "./read.js";

/** A line of the input around an issue, cut to a readable width, with the span to mark. */
export interface Fragment {
  text: string;
  /** 0-based start of the marked span in `text`, and its length (at least 1). */
  mark: number;
  length: number;
}

export interface ReportedIssue {
  severity: "error" | "warning";
  /** A schema keyword (`required`, `maxLength`, …), `unknownKind`, `json`, `sequence/…`, `directory/…` or `input/…`. */
  rule: string;
  message: string;
  /** The file as shown (relative to the working directory), or `<stdin>`. */
  file: string;
  line?: number;
  column?: number;
  /** JSON pointer into the file's document (`/items/3/action/kind`); absent for issues about a whole input. */
  pointer?: string;
  /** Position of the event in its trajectory (0-based) and its id. */
  index?: number;
  eventId?: string;
  fragment?: Fragment;
  /** The input could not be read as a recording at all: exit code 2. */
  fatal?: boolean;
}

export interface InputReport {
  file: string;
  format?: Format;
  events: number;
  errors: number;
  warnings: number;
  bytes: number;
  /** Why the input could not be read, when it could not. */
  unreadable?: { rule: string; message: string };
}

export interface RunReport {
  inputs: InputReport[];
  events: number;
  /** Events per kind (`(no kind)` for events without a string kind, `(not JSON)` for unreadable ones). */
  kinds: Record<string, number>;
  errors: number;
  warnings: number;
  errorsByRule: Record<string, number>;
  warningsByRule: Record<string, number>;
  /** True when --max-errors stopped the run. */
  truncated: boolean;
  /** Inputs not read because --max-errors stopped the run. */
  skippedInputs: number;
  exitCode: 0 | 1 | 2;
}

/** Exit codes: documented in the README and in --help. */
export const EXIT_VALID = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;

/** `valid`, `invalid` or `an input could not be read`, after the exit code. */
export function verdict(report: RunReport): string {
  if (report.exitCode === 2) return "an input could not be read";
  return report.exitCode === 1 ? "invalid" : "valid";
}

const FRAGMENT_WIDTH = 100;

/**
 * The line of `text` holding `offset`, cut to about 100 characters around it, with control and
 * bidirectional characters replaced so that input cannot drive the terminal.
 */
export function fragmentAt(text: string, offset: number, length: number): Fragment | undefined {
  if (text.length === 0) return undefined;
  // `offset` may be the end of the text (JSON that ends too soon): the mark is then just past it.
  const at = Math.max(0, Math.min(offset, text.length));
  const lineStart = text.lastIndexOf("\n", at - 1) + 1;
  let lineEnd = text.indexOf("\n", at);
  if (lineEnd < 0) lineEnd = text.length;
  if (text.charCodeAt(lineEnd - 1) === 13) lineEnd--;
  let start = lineStart;
  let end = lineEnd;
  if (end - start > FRAGMENT_WIDTH) {
    start = Math.max(lineStart, Math.min(at - 30, lineEnd - FRAGMENT_WIDTH));
    end = Math.min(lineEnd, start + FRAGMENT_WIDTH);
  }
  const prefix = start > lineStart ? "…" : "";
  const suffix = end < lineEnd ? "…" : "";
  const shown = prefix + sanitize(text.slice(start, end)) + suffix;
  const mark = prefix.length + (at - start);
  const markLength = Math.max(1, Math.min(length, end - at));
  return { text: shown, mark, length: markLength };
}

/** Replaces characters that would move the cursor, change colours or reorder text. */
export function sanitize(text: string): string {
  // Control characters are exactly what must not reach a terminal from the input.
  // eslint-disable-next-line no-control-regex -- control characters are what this strips from terminal output
  return text.replace(/\t/g, " ").replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, "·");
}
