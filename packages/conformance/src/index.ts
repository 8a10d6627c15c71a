/**
 * @packageDocumentation
 * The conformance suite of the Agent Conversation Service interface: black-box checks derived from
 * the spec, run against any running implementation (the reference server, the mock, another
 * team's backend).
 *
 * ```ts
 * import { runConformance, formatText } from "@acs-toolkit/conformance";
 * const report = await runConformance({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.SESSION_API_KEY });
 * process.stdout.write(formatText(report));
 * ```
 */
export {
  runConformance,
  selectChecks,
  matchesPattern,
  UnreachableError,
  UnknownPatternError,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_SETTLE_MS,
  type CheckResult,
  type CheckStatus,
  type ConformanceOptions,
  type ConformanceReport,
} from "./runner.js";
export { CHECKS } from "./checks/index.js";
export { CheckFailure, SkipCheck, type Check, type Need } from "./check.js";
export type { CheckContext } from "./context.js";
export { formatCheckTable, formatJson, formatJUnit, formatResultLine, formatText, formatTotal } from "./report.js";
export { main as runCli, USAGE, type Output as CliOutput } from "./cli.js";
// Types that the exports above use in their signatures.
export type { Reply, RequestOptions } from "./http.js";
export type { SpecOperation, SpecResponses } from "./spec.js";
export type { AnyEvent } from "./data.js";
export type { Between, SeededConversation, StoredSecrets } from "./context.js";
export type { Closed, Frame, LiveSocket } from "./socket.js";
