/**
 * Size budgets of the published packages: the unpacked size of each tarball (what `npm install`
 * writes for the package itself). Figures of 0.1.0 in comments; the budgets leave room for growth
 * but not for a second copy of anything (the validator's compiled validators are 1.2 MB, the
 * schema's documents 0.55 MB, Swagger UI 1.9 MB).
 */
export const UNPACKED_BUDGETS: Record<string, number> = {
  "@acs-toolkit/schema": 2_300_000, // 2.16 MB: documents once (JSON), declarations for ESM and CJS; the catalogue of every release (19 kinds, 40 tools); the search semantics (12 KB); 1.80 MB before the agent server's routes of the web UI (25 operations: 0.36 MB of declarations and documents)
  "@acs-toolkit/validator": 2_300_000, // 2.06 MB: compiled validators once (every release's catalogue), without maps
  "@acs-toolkit/client": 720_000, // 0.66 MB: 0.47 MB before the agent server's routes of the web UI (their methods' declarations)
  "@acs-toolkit/server": 4_650_000, // 4.00 MB: Swagger UI 1.9 MB (instead of swagger-ui-dist's 12 MB installed), the request validators compiled at build time twice (CJS that Node loads synchronously, ESM for browsers: 0.2 MB each), the agent runtime's wiring, the PostgreSQL store, the API and core subpaths; 4.47 MB with the agent server's routes of the web UI
  "@acs-toolkit/mock": 650_000, // 0.54 MB: Prism's operations cached gzipped (0.15 MB; 1.26 MB as JSON, every operation's schemas inline, the Event union in the event-batch body's); the browser entry (msw-browser: 35 KB of code, its 76 KB map, 19 KB of declarations)
  "@acs-toolkit/conformance": 550_000, // 0.40 MB
  "@acs-toolkit/agent": 1_100_000, // 1.00 MB, maps included: the runtime, its sandbox (memory groups, /tmp quota, fork server) and test kit; 0.72 MB before OpenHands 1.43.1's prompt sections and tool texts, project skills and the stuck detector
};

/**
 * What `npm install @acs-toolkit/client` adds to node_modules for an app that uses `subscribe`,
 * apart from openapi-fetch and @acs-toolkit/schema (types): the client and `ws`.
 */
export const CLIENT_FOOTPRINT_BUDGET = 2_000_000;
