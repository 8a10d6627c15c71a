/**
 * Where a JSON pointer's target is in JSON text: the line and column an editor, a terminal or a CI
 * annotation can show. Only run for issues (it scans the text), never on the path of valid events.
 */
import { unescapeToken } from "./pointer.js";

/** A span of JSON text. Offsets and columns count UTF-16 code units. */
export interface TextLocation {
  /** 0-based offset of the span in the text. */
  offset: number;
  /** Length of the span: the value, or `"key": value` when the pointer names an object member. */
  length: number;
  /** 1-based line of the span's start. */
  line: number;
  /** 1-based column of the span's start. */
  column: number;
  /**
   * False when the target does not exist (a missing required property): the span is then the
   * first character of its nearest existing parent.
   */
  found: boolean;
}

/**
 * Locates the target of a JSON pointer in JSON text, without parsing the text into values. Answers
 * undefined when the text is not JSON enough to walk. A repeated key resolves to its last
 * occurrence, as `JSON.parse` does.
 *
 * @example
 * locatePointer('{\n  "action": {"tab_id": "abcde"}\n}', "/action/tab_id");
 * // { offset: 15, length: 17, line: 2, column: 14, found: true }
 */
export function locatePointer(text: string, pointer: string): TextLocation | undefined {
  const tokens = pointer === "" ? [] : pointer.slice(1).split("/").map(unescapeToken);
  let start = skipWhitespace(text, 0);
  if (start >= text.length) return undefined;
  let end = skipValue(text, start);
  if (end < 0) return undefined;
  let spanStart = start;
  for (const token of tokens) {
    const child = findChild(text, start, token);
    if (child === undefined) return at(text, start, 1, false);
    if (child === null) return undefined;
    [spanStart, start, end] = child;
  }
  return at(text, spanStart, end - spanStart, true);
}

/**
 * The member (object) or element (array) `token` of the value at `start`: [span start (the key for
 * a member), value start, value end]; undefined when absent, null when the text is broken.
 */
function findChild(text: string, start: number, token: string): [number, number, number] | undefined | null {
  const open = text.charCodeAt(start);
  if (open === 123 /* { */) {
    let found: [number, number, number] | undefined;
    let i = skipWhitespace(text, start + 1);
    if (text.charCodeAt(i) === 125) return undefined;
    for (;;) {
      const keyStart = i;
      const keyEnd = skipString(text, i);
      if (keyEnd < 0) return null;
      const raw = text.slice(keyStart + 1, keyEnd - 1);
      let key = raw;
      if (raw.includes("\\")) {
        try {
          key = JSON.parse(text.slice(keyStart, keyEnd)) as string;
        } catch {
          return null;
        }
      }
      i = skipWhitespace(text, keyEnd);
      if (text.charCodeAt(i) !== 58 /* : */) return null;
      const valueStart = skipWhitespace(text, i + 1);
      const valueEnd = skipValue(text, valueStart);
      if (valueEnd < 0) return null;
      if (key === token) found = [keyStart, valueStart, valueEnd];
      i = skipWhitespace(text, valueEnd);
      const c = text.charCodeAt(i);
      if (c === 44 /* , */) i = skipWhitespace(text, i + 1);
      else if (c === 125) return found;
      else return found ?? null;
    }
  }
  if (open === 91 /* [ */) {
    if (!/^(?:0|[1-9]\d*)$/.test(token)) return undefined;
    const wanted = Number(token);
    let i = skipWhitespace(text, start + 1);
    if (text.charCodeAt(i) === 93) return undefined;
    for (let index = 0; ; index++) {
      const valueEnd = skipValue(text, i);
      if (valueEnd < 0) return null;
      if (index === wanted) return [i, i, valueEnd];
      i = skipWhitespace(text, valueEnd);
      const c = text.charCodeAt(i);
      if (c === 44) i = skipWhitespace(text, i + 1);
      else return c === 93 ? undefined : null;
    }
  }
  return undefined;
}

function at(text: string, offset: number, length: number, found: boolean): TextLocation {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { offset, length: Math.max(1, length), line, column: offset - lineStart + 1, found };
}

function skipWhitespace(text: string, i: number): number {
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) break;
  }
  return i;
}

/** The index after the string that opens at `i`, or -1. */
function skipString(text: string, i: number): number {
  if (text.charCodeAt(i) !== 34) return -1;
  let from = i + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index after the JSON value that starts at `i`, or -1 when the text ends first. */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 34) return skipString(text, i);
  if (c === 123 || c === 91) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === 34) {
        j = skipString(text, j) - 1;
        if (j < 0) return -1;
      } else if (d === 123 || d === 91) depth++;
      else if (d === 125 || d === 93) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A number or a literal: up to the next delimiter.
  let j = i;
  for (; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d === 44 || d === 93 || d === 125 || d === 32 || d === 10 || d === 13 || d === 9) break;
  }
  return j === i ? -1 : j;
}
