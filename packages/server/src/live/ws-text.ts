/** A `ws` message's bytes (one buffer, fragments, or an ArrayBuffer) as UTF-8 text. */
import type { RawData } from "ws";

export function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data as ArrayBuffer).toString("utf8");
}
