/**
 * The query string parser: node:querystring (repeated parameters become arrays, which validation
 * refuses; no nested objects), with every parameter read. Node's own bound (1,000 keys) would drop
 * the rest silently, so that `…&p999=1&limit=0` answered 200 where `limit=0` alone is a 422; here a
 * query string of more than MAX_QUERY_PARAMETERS parameters is marked, and validation answers 422
 * naming the first parameter past the bound.
 */
import { parse } from "node:querystring";
import { markQueryOverflow, MAX_QUERY_PARAMETERS } from "../validation/query-overflow.js";

type Query = Record<string, string | string[] | undefined>;

/** Express's "query parser": the parameters of `text`, marked when there are too many. */
export function parseQueryString(text: string | null | undefined): Query {
  if (!text) return {}; // Express passes null for a URL without a query string
  const query = parse(text, "&", "=", { maxKeys: 0 }) as Query; // the request line's length bounds them
  const pairs = text.split("&").filter((pair) => pair !== "");
  if (pairs.length > MAX_QUERY_PARAMETERS) markQueryOverflow(query, Object.keys(parse(pairs[MAX_QUERY_PARAMETERS]!))[0] ?? "");
  return query;
}
