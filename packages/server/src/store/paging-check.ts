/**
 * The paging arguments every store checks the same way (the contract suite tests the bound): in a
 * module of its own, with no Node built-in, as the in-memory store runs in a browser too.
 */
import type { SearchQuery } from "./types.js";

/** The largest page a search returns (SearchQuery.limit). */
const MAX_LIMIT = 100;

/** The limit and order of a query, checked. @throws RangeError for a limit outside 1..MAX_LIMIT or an unknown order */
export function checkedPaging(query: SearchQuery): Pick<SearchQuery, "limit" | "order"> {
  const { limit, order } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new RangeError(`limit must be an integer in 1..${MAX_LIMIT}, got ${limit}`);
  if (order !== "asc" && order !== "desc") throw new RangeError(`order must be "asc" or "desc"`);
  return { limit, order };
}
