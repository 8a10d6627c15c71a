/**
 * Resolves in a later task of the event loop (after due I/O and timers), not in the microtasks of
 * this one. Awaiting a store that answers at once (SQLite, memory) never yields: a loop over many
 * pages, or jobs queued behind a slow one, would otherwise run as one task and hold the event loop
 * past its 50 ms budget.
 */
export const nextTask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
