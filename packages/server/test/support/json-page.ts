/** searchJson against search: what the page as bytes must hold for a given page of events. */
import type { JsonPage, SearchPage } from "../../src/store/types.js";

/** A JsonPage with its bytes as text (comparable with jsonPageFor). */
export interface ReadableJsonPage extends Omit<JsonPage, "json"> {
  json: string;
}

/** What searchJson must give for the query that gave `page`: the same JSON texts, joined by `,`. */
export function jsonPageFor(page: SearchPage): ReadableJsonPage {
  const last = page.items.at(-1);
  return { json: page.items.map((e) => e.json).join(","), count: page.items.length, last: last && { ts: last.ts, seq: last.seq }, hasMore: page.hasMore };
}

export function readable(page: JsonPage): ReadableJsonPage {
  return { ...page, json: Buffer.from(page.json).toString("utf8") };
}
