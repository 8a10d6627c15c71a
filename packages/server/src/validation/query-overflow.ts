/**
 * A query with more parameters than a request may have: the host's query parser marks it (not
 * enumerable, so the parameters stay as they are) and validation answers 422 naming the first
 * parameter past the bound, instead of dropping the rest silently.
 */
import type { ValidationError } from "@acs-toolkit/schema";

/** Parameters a query string may have. */
export const MAX_QUERY_PARAMETERS = 1000;

const OVERFLOW = Symbol("acs.queryOverflow");

/** Marks `query` as having more than MAX_QUERY_PARAMETERS parameters, `name` the first one past the bound. */
export function markQueryOverflow(query: object, name: string): void {
  Object.defineProperty(query, OVERFLOW, { value: name, enumerable: false });
}

/** The name of the first parameter past MAX_QUERY_PARAMETERS, when a parsed query has too many. */
function queryOverflow(query: object): string | undefined {
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
