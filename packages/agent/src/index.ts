/**
 * @packageDocumentation
 * The agent runtime of the Agent Conversation Service toolkit: the loop the OpenHands agent runs
 * (LLM, tools, confirmation, condensation, restart recovery), producing the events OpenHands
 * produces, behind a small host interface ({@link ConversationHost}) that a server implements.
 */
export { AgentRuntime, NoSandboxError, type AgentRuntimeOptions } from "./agent/runtime.js";
export { AgentConversation, ConversationAlreadyRunningError, ConversationClosedError } from "./agent/conversation.js";
export { EXECUTION_STATUSES, lifecycleStatusOf, type AgentSettings, type ConversationHost, type RecordedEvent } from "./host.js";
export { classifyError } from "./errors/classify.js";
export { openAiLlmFactory, toLlmError, type OpenAiLlmOptions } from "./llm/openai.js";
export { contextWindowOf, DEFAULT_CONTEXT_WINDOWS, resolveModel, PROVIDER_BASE_URLS, type ResolvedModel } from "./llm/model.js";
export { DEFAULT_STUCK_THRESHOLDS, type StuckThresholds } from "./agent/stuck-detector.js";
export { DEFAULT_PRICES, costOf, priceOf, type ConversationStatsSnapshot, type MetricsSnapshot, type ModelPrice, type TokenUsage } from "./llm/stats.js";
export {
  LlmError,
  type ChatContentPart,
  type ChatMessage,
  type ChatTool,
  type ChatToolCall,
  type Llm,
  type LlmConfig,
  type LlmFactory,
  type LlmRequest,
  type LlmResponse,
  type LlmUsage,
} from "./llm/types.js";
export {
  bubblewrapSandbox,
  confinementProblem,
  DEFAULT_SANDBOX_LIMITS,
  detectBubblewrap,
  hostExecution,
  NO_SANDBOX_MESSAGE,
  probeBubblewrap,
  SandboxUnreachableError,
  sandboxLimits,
  type BubblewrapOptions,
  type Sandbox,
  type SandboxLimits,
  type SandboxRequest,
  type SandboxedCommand,
} from "./sandbox/sandbox.js";
export { runOneShot, type OneShotCommand, type OneShotResult } from "./sandbox/one-shot.js";
export { ForkServer, SANDBOX_NICE, type ProcessSpawner, type SpawnedProcess } from "./sandbox/fork-server.js";
export { watchProcessMemory, type ProcessMemoryWatch, type ProcessMemoryWatchOptions } from "./sandbox/process-memory.js";
export { openSandboxCgroups, SANDBOX_CPU_WEIGHT, type SandboxCgroup, type SandboxCgroupOptions, type SandboxCgroups } from "./sandbox/cgroups.js";
export { removeTree, WorkspaceFileError, WorkspaceFiles, type WorkspaceEntry } from "./tools/workspace-files.js";
export { SECRET_PLACEHOLDER, SecretMasker, secretEnvironment, type SecretEnvironment } from "./secrets.js";
export { systemClock, uuidIds, type Clock, type IdGenerator } from "./events/clock.js";
export { silentLogger, type Logger } from "./logger.js";
export type { CondenserOptions } from "./history/condenser.js";
