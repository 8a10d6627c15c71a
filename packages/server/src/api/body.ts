/** Reading request bodies in the operations: JSON parsed with the interface's 422s. */
import { parseJsonBody } from "../json/body.js";
import type { ApiBody } from "./types.js";

/** Media types read as JSON (`application/json`, and `+json` types such as `application/merge-patch+json`). */
export const JSON_MEDIA_TYPES: readonly string[] = ["application/json", "application/*+json"];
/** Media types read as JSON Lines (one JSON value per line): the body of an event batch. */
export const JSONL_MEDIA_TYPES: readonly string[] = ["application/x-ndjson", "application/jsonl"];

/** A JSON body's value; undefined when there is none (an empty body is none, not a syntax error). @throws as ApiBody.jsonBytes, RequestValidationError */
export async function readJson(body: ApiBody): Promise<unknown> {
  const bytes = await body.jsonBytes();
  return bytes?.length ? parseJsonBody(bytes) : undefined;
}

/** Whether a media type (`type/subtype`, parameters dropped) is one of `types`, which may hold `*` wildcards. */
export function mediaTypeIs(contentType: string | undefined, types: readonly string[]): boolean {
  const type = contentType?.split(";", 1)[0]!.trim().toLowerCase();
  if (!type || !/^[\w.+-]+\/[\w.+-]+$/.test(type)) return false;
  return types.some((wanted) => {
    const pattern = new RegExp(`^${wanted.toLowerCase().replace(/[.+?^$()|[\]\\]/g, "\\$&").replace(/\*/g, "[\\w.-]+")}$`);
    return pattern.test(type);
  });
}
