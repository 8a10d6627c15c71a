/** Defaults shared by the Node world (world.ts) and the browser's (browser/world.ts), with no Node import. */

/** The key the mock accepts when none is configured (printed at start). */
export const DEFAULT_MOCK_KEY = "mock-session-key";
/** The default time of the first event of the built-in scenarios (deterministic output). */
export const DEFAULT_START = Date.UTC(2026, 1, 5, 11, 24, 45);
/** The mock's name at /server_info. */
export const MOCK_TITLE = "Agent Conversation Service mock (acs-mock)";
