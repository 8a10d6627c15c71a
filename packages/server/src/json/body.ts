/**
 * JSON bodies decoded from bytes, with FastAPI-shaped errors: UTF-8 checked (the position of the
 * first bad byte), JSON.parse's refusal located at its character, nesting bounded. No transport:
 * the HTTP layer, the import threads and the live channel share it.
 */
import type { ValidationError } from "@acs-toolkit/schema";
import { RequestValidationError } from "../core/errors.js";
import { findTooDeep, tooDeepError } from "./depth.js";
import { findJsonSyntaxError } from "./syntax-error.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The value of a JSON body given as UTF-8 bytes (a leading byte order mark is skipped).
 * @throws RequestValidationError: not UTF-8, not JSON (`["body", <position>]`), nested too deep
 */
export function parseJsonBody(bytes: Uint8Array, loc: Array<string | number> = ["body"]): unknown {
  return parseJsonText(decodeJsonBody(bytes, loc), loc);
}

/** The text of a JSON body given as UTF-8 bytes (a leading byte order mark is skipped). @throws RequestValidationError: not UTF-8 */
export function decodeJsonBody(bytes: Uint8Array, loc: Array<string | number> = ["body"]): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new RequestValidationError([{ loc: [...loc, utf8Position(bytes)], msg: "JSON decode error: the text is not valid UTF-8", type: "json_invalid" }]);
  }
}

/** The value of a JSON text. @throws RequestValidationError (see parseJsonBody) */
export function parseJsonText(text: string, loc: Array<string | number> = ["body"]): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new RequestValidationError([jsonDecodeError(text, loc)]);
  }
  const deep = findTooDeep(value);
  if (deep) throw new RequestValidationError([tooDeepError(loc, deep)]);
  return value;
}

/** The 422 entry of a text JSON.parse refused: FastAPI's `json_invalid` at the character position. */
function jsonDecodeError(text: string, loc: Array<string | number>): ValidationError {
  const found = findJsonSyntaxError(text);
  return {
    loc: found ? [...loc, found.position] : loc,
    msg: `JSON decode error: ${found?.reason ?? "not valid JSON"}`,
    type: "json_invalid",
    ...(found && { ctx: { error: found.reason } }),
  } as ValidationError;
}

/** Characters before the first byte of `bytes` that is not part of valid UTF-8 (RFC 3629). */
function utf8Position(bytes: Uint8Array): number {
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at]!;
    const [size, low, high] =
      lead < 0x80 ? [1, 0, 0] :
      lead >= 0xc2 && lead <= 0xdf ? [2, 0x80, 0xbf] :
      lead === 0xe0 ? [3, 0xa0, 0xbf] :
      lead === 0xed ? [3, 0x80, 0x9f] :
      lead >= 0xe1 && lead <= 0xef ? [3, 0x80, 0xbf] :
      lead === 0xf0 ? [4, 0x90, 0xbf] :
      lead >= 0xf1 && lead <= 0xf3 ? [4, 0x80, 0xbf] :
      lead === 0xf4 ? [4, 0x80, 0x8f] : [0, 0, 0];
    if (size === 0 || at + size > bytes.length) break;
    // The second byte has the lead's own range (no overlong forms, no surrogates); the rest 80–BF.
    let valid = size === 1 || (bytes[at + 1]! >= low && bytes[at + 1]! <= high);
    for (let i = 2; valid && i < size; i++) valid = (bytes[at + i]! & 0xc0) === 0x80;
    if (!valid) break;
    at += size;
  }
  return [...new TextDecoder().decode(bytes.subarray(0, at))].length;
}
