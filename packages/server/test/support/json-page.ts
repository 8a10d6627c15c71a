/** searchJson against search: what the page as bytes must hold for a given page of events. */
import type { JsonPage, Position, SearchPage } from "../../src/store/types.js";

/** A JsonPage with its bytes as text (comparable with jsonPageFor). */
export interface ReadableJsonPage extends Omit<JsonPage, "json"> {
  json: string;
}

/** What searchJson must give for the query that gave `page`: the same JSON texts, joined by `,`. */
export function jsonPageFor(page: SearchPage): ReadableJsonPage {
  const last = nextAfter(page);
  return { json: page.items.map((e) => e.json).join(","), count: page.items.length, last: last && { ts: last.ts, seq: last.seq }, hasMore: page.hasMore };
}

/** Where the next page of `page` starts after: its last item, or where its scan budget ran out. */
export function nextAfter(page: SearchPage): Position | undefined {
  const last = page.resumeAfter ?? page.items.at(-1);
  return last && { ts: last.ts, seq: last.seq };
}

export function readable(page: JsonPage): ReadableJsonPage {
  return { ...page, json: Buffer.from(page.json).toString("utf8") };
}
