/**
 * @packageDocumentation
 * The reference server of the Agent Conversation Service interface.
 *
 * ```ts
 * import { parseConfig, startServer } from "@acs-toolkit/server";
 * const server = await startServer(parseConfig(["--port", "0", "--data-dir", "/tmp/acs"]));
 * console.log(server.url);
 * await server.close();
 * ```
 */
export { startServer, VERSION, type RunningServer, type StartOptions } from "./server.js";
export { createApp, type App, type AppDeps, type RequestListener } from "./app.js";
export type { Api, ApiBody, ApiReply, ApiRequest, Operation, OperationId, FailureReport } from "./api/index.js";
export { parseConfig, ConfigError, USAGE, type ServerConfig, type PostgresStoreConfig } from "./config.js";
export { ConversationService } from "./conversation-service.js";
// The core (`@acs-toolkit/server/core`, browser-safe), which the server's layers are built on.
export {
  ConversationCore,
  ConversationStates,
  EventBus,
  LiveSession,
  canonicalConversationId,
  conversationInfo,
  parseReplay,
  recordingRuntime,
  type ConversationCoreOptions,
  type ConversationRuntime,
  type EventListener,
  type LiveLog,
  type LivePhase,
  type LiveSessionOptions,
  type LiveTransport,
  type RuntimeContext,
  type RuntimeControls,
  type ServerErrorCode,
  type StateConformance,
  type TransientListener,
} from "./core/index.js";
export { openSqliteStore } from "./store/sqlite/index.js";
export { openPostgresStore, PostgresEventStore, type PostgresStoreOptions } from "./store/postgres/index.js";
export { MemoryEventStore, openMemoryStore, type MemoryStoreOptions } from "./store/memory.js";
export * from "./store/types.js";
export { eventTimeMicros, recordedTimestamp } from "./store/time.js";
export { createLogger, type Logger } from "./log.js";
export { attachLiveEvents, DEFAULT_MAX_CONNECTIONS_PER_CONVERSATION, LIVE_CLOSE, type LiveEvents, type LiveEventsOptions } from "./live/channel.js";
export { RecordedStates } from "./recorded-states.js";
export { ERROR_TYPES, RequestValidators, RequestValidationError, toValidationError, type PrecompiledValidators } from "./validation/request-validators.js";
export { RequestChecks, type Lazy, type OperationValidators } from "./validation/request-checks.js";
export { createKeyCheck } from "./keys.js";
export { createCipher } from "./secrets.js";
export { answerClientErrors, guardRequestTarget, rejectSocket } from "./http/client-errors.js";
export { outlastClientKeepAlive } from "./http/keep-alive.js";
export { writeReply } from "./http/write-reply.js";
export { pathEncodingProblem, pathTemplates } from "./api/routes.js";
export { reportEventLoopDelay, EVENT_LOOP_MESSAGE, type EventLoopDelay } from "./event-loop-report.js";
// Types that the exports above use in their signatures.
export type { SecretCipher } from "./secrets.js";
export type { SessionKeys } from "./keys.js";
export type { UploadLimits } from "./upload-admission.js";
export type { SqliteEventStore, SqliteStoreOptions, BodySearchTuning } from "./store/sqlite/index.js";
export type { Location, Json } from "./validation/request-validators.js";
export type { WriteHealth, WriteFailure } from "./write-health.js";
export { FileIoHealth, type FileIoHealthOptions, type FileIoStuck } from "./file-io-health.js";
export type { PathEncodingProblem, PathTemplate } from "./api/routes.js";
export type { BashEventsSession, BashEventsTransport, CommandOutcome, CommandRequest, CommandRunner } from "./api/bash.js";
export type { BashEventsHost } from "./live/bash-channel.js";
export type { WorkerPool, JobMessage } from "./threads/pool.js";
export type { PreparedEvent, RowBatch } from "./store/prepare.js";
/** A RowBatch's rows (event batches, from the import thread): what a memory store needs to take appendBatch in Node (MemoryStoreOptions). */
export { decodeRows } from "./store/row-batch.js";
