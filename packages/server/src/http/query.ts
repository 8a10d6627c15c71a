/**
 * The query string parser: node:querystring (repeated parameters become arrays, which validation
 * refuses; no nested objects), with every parameter read. Node's own bound (1,000 keys) would drop
 * the rest silently, so that `…&p999=1&limit=0` answered 200 where `limit=0` alone is a 422; here a
 * query string of more than MAX_QUERY_PARAMETERS parameters is marked, and validation answers 422
 * naming the first parameter past the bound.
 */
import { parse } from "node:querystring";
import type { ValidationError } from "@acs-toolkit/schema";

/** Parameters a query string may have. */
export const MAX_QUERY_PARAMETERS = 1000;

const OVERFLOW = Symbol("acs.queryOverflow");

type Query = Record<string, string | string[] | undefined>;

/** Express's "query parser": the parameters of `text`, marked when there are too many. */
export function parseQueryString(text: string | null | undefined): Query {
  if (!text) return {}; // Express passes null for a URL without a query string
  const query = parse(text, "&", "=", { maxKeys: 0 }) as Query; // the request line's length bounds them
  const pairs = text.split("&").filter((pair) => pair !== "");
  if (pairs.length > MAX_QUERY_PARAMETERS) {
    const name = Object.keys(parse(pairs[MAX_QUERY_PARAMETERS]!))[0] ?? "";
    Object.defineProperty(query, OVERFLOW, { value: name, enumerable: false });
  }
  return query;
}

/** The name of the first parameter past MAX_QUERY_PARAMETERS, when a parsed query has too many. */
export function queryOverflow(query: object): string | undefined {
  return (query as { [OVERFLOW]?: string })[OVERFLOW];
}

/** The 422 detail of a query with more than MAX_QUERY_PARAMETERS parameters (none for another), named by the first one past the bound. */
export function overflowDetails(query: object): ValidationError[] {
  const overflow = queryOverflow(query);
  if (overflow === undefined) return [];
  return [
    {
      loc: ["query", overflow],
      msg: `was not read: the query string has more than ${MAX_QUERY_PARAMETERS} parameters, and this is parameter ${MAX_QUERY_PARAMETERS + 1}`,
      type: "value_error",
    },
  ];
}
