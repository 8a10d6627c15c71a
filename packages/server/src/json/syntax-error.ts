/**
 * Where a JSON text is broken, as FastAPI reports it: the position (in characters, i.e. Unicode code
 * points, the way Python counts) and the reason of Python's json module ("Expecting value",
 * "Expecting ',' delimiter", …). Node's JSON.parse names no position in some of its messages and
 * quotes the input in others (a secret in a body would be echoed), so a failed parse is scanned
 * again here. The grammar is JSON.parse's (RFC 8259: no NaN, no Infinity), so every text that
 * JSON.parse refuses has an error here. Iterative: any nesting depth, linear time.
 */

interface JsonSyntaxError {
  /** Characters (code points) before the offending one. */
  position: number;
  /** Python's wording, never a piece of the text. */
  reason: string;
}

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const SIMPLE_ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** The number of code points in `text` before UTF-16 index `index`. */
function codePointIndex(text: string, index: number): number {
  let pairs = 0;
  for (let i = 1; i < index; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xdc00 && code <= 0xdfff) {
      const before = text.charCodeAt(i - 1);
      if (before >= 0xd800 && before <= 0xdbff) pairs++;
    }
  }
  return index - pairs;
}

/** The first syntax error of `text`, or undefined when it is one JSON value (with whitespace around). */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const length = text.length;
  const skip = (at: number) => {
    while (at < length && WHITESPACE.has(text.charCodeAt(at))) at++;
    return at;
  };
  const fail = (at: number, reason: string): JsonSyntaxError => ({ position: codePointIndex(text, at), reason });

  /** The index after the string that opens at `at` (a `"`), or its error. */
  const string = (at: number): number | JsonSyntaxError => {
    for (let i = at + 1; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code === 0x22) return i + 1;
      if (code <= 0x1f) return fail(i, "Invalid control character at");
      if (code !== 0x5c) continue;
      if (i + 1 >= length) break;
      const escape = text[i + 1]!;
      if (escape === "u") {
        if (!HEX4.test(text.slice(i + 2, i + 6))) return fail(i + 1, "Invalid \\uXXXX escape");
        i += 5;
      } else if (SIMPLE_ESCAPES.has(escape)) i++;
      else return fail(i, "Invalid \\escape");
    }
    return fail(at, "Unterminated string starting at");
  };

  const stack: Array<"object" | "array"> = [];
  let at = skip(0);
  let expectingValue = true;
  for (;;) {
    if (expectingValue) {
      const char = text[at];
      if (char === "{") {
        at = skip(at + 1);
        if (text[at] === "}") {
          at++;
          expectingValue = false;
          continue;
        }
        stack.push("object");
        const key = member(at);
        if (typeof key !== "number") return key;
        at = key;
        continue;
      }
      if (char === "[") {
        at = skip(at + 1);
        if (text[at] === "]") {
          at++;
          expectingValue = false;
          continue;
        }
        stack.push("array");
        continue;
      }
      if (char === '"') {
        const end = string(at);
        if (typeof end !== "number") return end;
        at = end;
      } else if (text.startsWith("null", at) || text.startsWith("true", at)) at += 4;
      else if (text.startsWith("false", at)) at += 5;
      else {
        NUMBER.lastIndex = at;
        const number = NUMBER.exec(text);
        if (!number) return fail(at, "Expecting value");
        at += number[0].length;
      }
      expectingValue = false;
      continue;
    }
    // After a value: close containers, or a comma and the next member.
    const top = stack[stack.length - 1];
    at = skip(at);
    if (top === undefined) return at === length ? undefined : fail(at, "Extra data");
    const char = text[at];
    if ((top === "object" && char === "}") || (top === "array" && char === "]")) {
      stack.pop();
      at++;
      continue;
    }
    if (char !== ",") return fail(at, "Expecting ',' delimiter");
    at = skip(at + 1);
    if (top === "array") {
      expectingValue = true;
      continue;
    }
    const key = member(at);
    if (typeof key !== "number") return key;
    at = key;
    expectingValue = true;
  }

  /** `"key" :` at `at`; the index of the value after it, or the error. */
  function member(from: number): number | JsonSyntaxError {
    if (text[from] !== '"') return fail(from, "Expecting property name enclosed in double quotes");
    const end = string(from);
    if (typeof end !== "number") return end;
    const colon = skip(end);
    if (text[colon] !== ":") return fail(colon, "Expecting ':' delimiter");
    return skip(colon + 1);
  }
}
