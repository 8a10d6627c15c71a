/** Yielding to the event loop where the host has one task queue or another (Node, a browser, a worker). */

/**
 * Resolves in a later task (Node's `setImmediate`, else `setTimeout(0)`): a loop that awaits it
 * between steps never holds the event loop, even over a store that answers at once.
 */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === "function") setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}
