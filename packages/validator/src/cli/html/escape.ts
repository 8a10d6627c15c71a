/** Text of a recording made safe and short enough to put in an HTML report. */

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Escapes `text` for an HTML text node or a quoted attribute value. Control characters (except
 * tab, line feed and carriage return) and bidirectional overrides and isolates become "·", as in
 * the human format: recorded content must neither break the markup nor reorder what is shown.
 */
export function escapeHtml(text: string): string {
  return (
    text
      .replace(/[&<>"']/g, (c) => ENTITIES[c]!)
      // eslint-disable-next-line no-control-regex -- control characters are what this replaces
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "·")
  );
}

/**
 * `text` cut to `max` characters, with what was cut said at the end. The cut never splits a
 * surrogate pair.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${(text.length - end).toLocaleString("en-US")} more characters)`;
}

/** Escaped and clipped: the usual way text of an event reaches the report. */
export const shown = (text: string, max: number): string => escapeHtml(clip(text, max));

/** 1,234,567 (grouped by hand: toLocaleString builds a formatter on every call, too slow per event). */
export const count = (value: number): string => (Number.isSafeInteger(value) ? String(value).replace(/\B(?=(\d{3})+$)/g, ",") : value.toLocaleString("en-US"));
