/**
 * Statements on the pool: what runs one, a transaction on one connection, and which failures mean
 * that the database cannot answer now (StoreUnavailableError, a 503) rather than a bad request.
 */
import type pg from "pg";
import { StoreUnavailableError } from "../types.js";

/** What runs a statement: the pool, or a client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** Whether `q` is a client of the pool (in a transaction): it can run a COPY. */
export const isClient = (q: Queryable): q is pg.PoolClient => typeof (q as Partial<pg.PoolClient>).release === "function";

/** SQLSTATE classes that mean "the database cannot answer now": connection, resources, operator, system. */
const UNAVAILABLE_STATE = /^(08|53|57|58)/;
/** Client-side failures of the same kind (pg gives these no SQLSTATE). */
const UNAVAILABLE_CLIENT = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE|EHOSTUNREACH)$|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|is not currently accepting connections/;

/** `error` as a StoreUnavailableError when it means the database cannot answer now; else undefined. */
export function unavailable(error: unknown): StoreUnavailableError | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  const byState = typeof code === "string" && UNAVAILABLE_STATE.test(code);
  if (!byState && !(typeof code === "string" && UNAVAILABLE_CLIENT.test(code)) && !UNAVAILABLE_CLIENT.test(error.message)) return undefined;
  const detail = code === "57014" ? "the database did not answer within the statement timeout" : `the database is unavailable (${error.message})`;
  return new StoreUnavailableError(detail, { cause: error });
}

/**
 * Runs `fn` in a transaction on one connection of `pool`, then `committed` once it has committed;
 * a connection that failed is dropped, not reused.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (tx: Queryable) => Promise<T>, committed: () => void): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A checked-out client whose connection dies also emits 'error' (the query rejects as well);
  // unheard, that event would end the process.
  const onError = (error: Error) => void (broken = error);
  client.on("error", onError);
  try {
    await client.query("begin");
    const result = await fn(client);
    await client.query("commit");
    committed();
    return result;
  } catch (error) {
    await client.query("rollback").catch((rollbackError: unknown) => {
      broken = rollbackError as Error;
    });
    if (unavailable(error)) broken = error as Error;
    throw error;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}
