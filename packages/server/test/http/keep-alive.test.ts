/**
 * Idle keep-alive connections outlast Node's client agents (5 s idle), so that a proxy built on them
 * (the OpenHands web UI's static server) never reuses a socket the server is closing ("socket hang
 * up", a 502 to the browser).
 */
import { globalAgent } from "node:http";
import { KEEP_ALIVE_TIMEOUT_MS } from "../../src/http/keep-alive.js";
import { expect, it } from "vitest";
import { startTestServer } from "../support/harness.js";

it("keeps an idle connection open longer than Node's client agents keep theirs", async () => {
  const t = await startTestServer();
  try {
    expect(t.server.http.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan((globalAgent as unknown as { options: { timeout?: number } }).options.timeout ?? 5_000);
  } finally {
    await t.close();
  }
});
