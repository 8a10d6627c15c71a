/**
 * A tool call's arguments as OpenHands 1.43.1 reads and records them
 * (openhands-sdk/openhands/sdk/agent/utils.py `parse_tool_call_arguments`, agent/agent.py
 * `_get_action_event`, `_extract_summary`, `_emit_tool_error`): parsed leniently, recorded again as
 * Python's `json.dumps` writes them, a summary made up when the model gives none.
 */

/** Misspellings of `security_risk` that models write, read as it (utils.py `_SECURITY_RISK_TYPOS`). */
const SECURITY_RISK_TYPOS = ["security_rort", "securtiy_risk", "security_riks"];

const NAMED_ESCAPES: Readonly<Record<string, string>> = { "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r" };

/** A raw control character (U+0000–U+001F) as its JSON escape (utils.py `sanitize_json_control_chars`). */
const escapeControl = (char: string) => NAMED_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * The arguments of a tool call: JSON, retried with raw control characters escaped (some models write
 * a newline inside a string as is); anything but an object reads as `{}`; null values are dropped;
 * a misspelt `security_risk` is renamed.
 * @throws SyntaxError when the text is not JSON even so
 */
export function parseToolCallArguments(raw: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = JSON.parse(Array.from(raw, (char) => (char < " " ? escapeControl(char) : char)).join(""));
  }
  const args = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? { ...(parsed as Record<string, unknown>) } : {};
  const typo = SECURITY_RISK_TYPOS.find((name) => name in args);
  if (typo) {
    args.security_risk = args[typo];
    delete args[typo];
  }
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null));
}

/** A string as Python's `json.dumps` writes it (`ensure_ascii`: everything outside printable ASCII escaped). */
function pythonString(text: string): string {
  let out = '"';
  // Per UTF-16 code unit, so that a character outside the BMP becomes its surrogate pair, as in Python.
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    const code = text.charCodeAt(index);
    if (char === '"') out += '\\"';
    else if (char === "\\") out += "\\\\";
    else if (code >= 0x20 && code <= 0x7e) out += char;
    else if (Object.hasOwn(NAMED_ESCAPES, char)) out += NAMED_ESCAPES[char];
    else out += `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return `${out}"`;
}

/**
 * A JSON value as Python's `json.dumps` writes it with its defaults: `", "` and `": "` between items,
 * non-ASCII characters escaped. A number is written as JavaScript writes it (a float that JSON text
 * wrote as `1.0` reads back as 1 and is written so).
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return pythonString(value);
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : value > 0 ? "Infinity" : value < 0 ? "-Infinity" : "NaN";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([key, item]) => `${pythonString(key)}: ${pythonJsonDumps(item)}`)
    .join(", ")}}`;
}

/** The summary OpenHands writes when the model gives none: the tool and its other arguments (`_extract_summary`). */
export const defaultSummary = (toolName: string, args: Readonly<Record<string, unknown>>) => `${toolName}: ${pythonJsonDumps(args)}`;

/** The arguments recorded for a call whose arguments are not JSON (`_emit_tool_error`): a marker and the error. */
export const malformedArguments = (error: string) => pythonJsonDumps({ _openhands_malformed_tool_call: true, error });

/** Python's repr of a list of names, as the error texts show them: `['a', 'b']`. */
export const pythonList = (names: readonly string[]) => `[${names.map((name) => `'${name}'`).join(", ")}]`;
