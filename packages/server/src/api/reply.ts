/** Building replies: JSON as Express's `res.json` sends it, text with its media type, parts as given. */
import type { ApiReply } from "./types.js";

const encoder = new TextEncoder();

/** The media type of every JSON answer. */
export const JSON_TYPE = "application/json; charset=utf-8";

/** A reply of `parts` (bytes written in order) of media type `type`. */
export function partsReply(parts: readonly Uint8Array[], type = JSON_TYPE, status = 200, headers: Record<string, string> = {}): ApiReply {
  return { status, headers: { "Content-Type": type, ...headers }, body: parts };
}

/** `value` as JSON (`JSON.stringify`, as `res.json`). */
export function jsonReply(value: unknown, status = 200, headers: Record<string, string> = {}): ApiReply {
  return partsReply([encoder.encode(JSON.stringify(value))], JSON_TYPE, status, headers);
}

/** A text of media type `type` (UTF-8). */
export function textReply(text: string, type: string): ApiReply {
  return partsReply([encoder.encode(text)], `${type}; charset=utf-8`);
}

/** The length of a reply's body in bytes (a stream's announced length). */
export function replyLength(reply: ApiReply): number {
  if (reply.stream) return reply.stream.length;
  let length = 0;
  for (const part of reply.body) length += part.byteLength;
  return length;
}
