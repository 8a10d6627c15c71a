/**
 * @packageDocumentation
 * The mock server of the Agent Conversation Service interface, for frontend work: Prism checks every
 * request against the bundled spec, and a stateful in-memory world (the reference server's own code:
 * search, paging, settings, uploads, the live channel) answers, with built-in scenarios streaming at
 * a realistic pace and a scripted agent that answers every message.
 *
 * ```ts
 * import { startMock } from "@acs-toolkit/mock";
 * const mock = await startMock({ port: 0, speed: "instant" });
 * console.log(mock.url, mock.world.scenarios.map((s) => s.conversationId));
 * await mock.close();
 * ```
 */
export { startMock, createMock, type MockOptions, type RunningMock } from "./mock.js";
export { createWorld, DEFAULT_MOCK_KEY, DEFAULT_START, type World, type WorldOptions } from "./world.js";
export { createFront, createPrismFront, frontHandler, parsePrefer, parseDuration, type Front, type FrontAnswer, type FrontOptions, type FrontRequest, type NodeHandler, type Preferences } from "./front.js";
export { mapViolations, type MappedViolations, type PrismViolation } from "./violations.js";
export type { ObservedBus, ScenarioWorld, ScenarioWorldOptions } from "./scenario-world.js";
export { ScriptedAgent, ScenarioStreamer, MAX_GAP_MS, type EventRecorder, type RuntimeLog, type Scheduler, type ScenarioStreamerOptions, type ScriptedAgentOptions, type Speed } from "./runtime.js";
export { BUILT_IN_SCENARIOS, happyScenario, errorsScenario, condensationScenario, confirmationScenario, longScenario } from "./scenarios/builtin.js";
export { loadScenarioFile, parseScenario, ScenarioFileError, formatScenarioIssue, type ScenarioFileIssue } from "./scenarios/load.js";
export type { Scenario, ScenarioOptions } from "./scenarios/types.js";
export { parseMockArgs, MOCK_USAGE, MockConfigError, type MockCliConfig } from "./config.js";
