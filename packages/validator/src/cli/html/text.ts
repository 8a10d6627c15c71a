/**
 * What of an event is shown, read defensively: an event in the report may be invalid (that is
 * why it is there), so every field is checked before use and nothing here throws.
 */

/** A JSON object (not an array, not null). */
export type JsonObject = Record<string, unknown>;

/** Whether `value` is a JSON object. */
export const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** `value[key]` when it is a string. */
export function text(value: unknown, key: string): string | undefined {
  if (!isObject(value)) return undefined;
  const field = value[key];
  return typeof field === "string" ? field : undefined;
}

/** The text of a content list (TextContent, ImageContent): texts joined, images counted. */
export function contentText(content: unknown): { text: string; images: number } {
  if (typeof content === "string") return { text: content, images: 0 };
  if (!Array.isArray(content)) return { text: "", images: 0 };
  const parts: string[] = [];
  let images = 0;
  for (const item of content) {
    if (!isObject(item)) continue;
    if (typeof item.text === "string") parts.push(item.text);
    else if (Array.isArray(item.image_urls)) images += item.image_urls.length;
    else if (item.type === "image") images++;
  }
  return { text: parts.join("\n\n"), images };
}

/**
 * Compact JSON of `value`, at most about `max` characters: it stops walking once it has that
 * many, so that a large value costs what is shown, not its size.
 */
export function previewJson(value: unknown, max: number): string {
  const out: string[] = [];
  let length = 0;
  const push = (part: string) => {
    out.push(part);
    length += part.length;
  };
  const walk = (node: unknown, depth: number): void => {
    if (length > max) return;
    if (node === null || typeof node === "number" || typeof node === "boolean") return push(String(node));
    if (typeof node === "string") return push(JSON.stringify(node.length > max ? node.slice(0, max) : node));
    if (depth > 20) return push("…");
    if (Array.isArray(node)) {
      push("[");
      for (let i = 0; i < node.length && length <= max; i++) {
        if (i > 0) push(",");
        walk(node[i], depth + 1);
      }
      return push("]");
    }
    if (isObject(node)) {
      push("{");
      let first = true;
      for (const key in node) {
        if (length > max) break;
        if (!first) push(",");
        first = false;
        push(`${JSON.stringify(key)}:`);
        walk(node[key], depth + 1);
      }
      return push("}");
    }
    push("null");
  };
  walk(value, 0);
  const joined = out.join("");
  return joined.length > max ? `${joined.slice(0, max)}…` : joined;
}

/** A field's value as a line of the arguments list: strings as they are, the rest as JSON. */
export const fieldValue = (value: unknown, max: number): string => (typeof value === "string" ? (value.length > max ? `${value.slice(0, max)}…` : value) : previewJson(value, max));

/**
 * The arguments of an action as name and value, `kind` left out, at most `limit` of them. For an
 * ActionEvent without an action, the tool call's `arguments` (JSON text) are read instead.
 */
export function argumentsOf(action: unknown, toolCallArguments: unknown, limit = 12): [string, unknown][] {
  let source: unknown = action;
  if (!isObject(source) && typeof toolCallArguments === "string" && toolCallArguments.length <= 1_000_000) {
    try {
      source = JSON.parse(toolCallArguments);
    } catch {
      return [["arguments", toolCallArguments]];
    }
  }
  if (!isObject(source)) return [];
  const pairs: [string, unknown][] = [];
  for (const key in source) {
    if (key === "kind") continue;
    if (pairs.length >= limit) break;
    pairs.push([key, source[key]]);
  }
  return pairs;
}

/** `11:24:47.142` of an ISO timestamp, or the value itself when it is not one. */
export function timeOf(timestamp: unknown): string | undefined {
  if (typeof timestamp !== "string") return undefined;
  const match = /T(\d\d:\d\d:\d\d(?:\.\d{1,3})?)/.exec(timestamp);
  return match ? match[1] : timestamp.slice(0, 40);
}
