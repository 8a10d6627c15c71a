/**
 * @packageDocumentation
 * The reference server's core, with no transport: `@acs-toolkit/server/core`. The conversation
 * service ({@link ConversationCore}: create, record in order per conversation, user messages,
 * status, the derived agent state, ConversationInfo and `full_state`), the {@link EventBus} that
 * pushes stored events to live subscribers, and the live channel's protocol ({@link LiveSession}:
 * authentication, `after_id` / `resend_all` / `resend_mode` catch-up, `full_state`, error frames,
 * the spec's close codes) over any {@link LiveTransport}; page cursors ({@link cursorCodec}, the
 * signature injected), the checks of the search and count queries ({@link checkEventQuery}) and the
 * settings' merge and view ({@link storeSettings}, {@link settingsView}, sealing injected), which
 * the server and the browser mock share. Nothing here imports a Node built-in,
 * `ws`, Express or a native module: the server's HTTP routes and `ws` channel are thin layers over
 * it, and so are the mock's MSW handlers that run in a browser.
 *
 * ```ts
 * import { ConversationCore, EventBus, recordingRuntime } from "@acs-toolkit/server/core";
 * import { openMemoryStore } from "@acs-toolkit/server/store";
 *
 * const store = openMemoryStore();
 * const bus = new EventBus();
 * const conversations = new ConversationCore(store, bus, recordingRuntime);
 * const record = await conversations.create({ initial_user_msg: "Hello" });
 * bus.subscribe(record.id, (events) => console.log(events.map((e) => e.json)));
 * console.log(await conversations.info(record));
 * ```
 */
export { EventBus, type EventListener, type TransientListener } from "./bus.js";
export {
  ConversationCore,
  canonicalConversationId,
  checkUserMessage,
  conversationInfo,
  initialMessage,
  parseReplay,
  MAX_WAITING_MESSAGES,
  TooManyMessagesError,
  type ConversationCoreOptions,
} from "./conversations.js";
export { ConversationStates, shallowConformance, type StateConformance } from "./state.js";
export { LiveSession, LIVE_CLOSE, truncateReason, type LiveLog, type LivePhase, type LiveSessionOptions, type LiveTransport, type ServerErrorCode } from "./live.js";
export { HttpError, RequestValidationError, toValidationError, ERROR_TYPES, type Location } from "./errors.js";
export { recordingRuntime, type ConversationRuntime, type RuntimeContext, type RuntimeControls } from "./runtime.js";
export { nextTask } from "./tasks.js";
export { cursorCodec, pageStart, NOT_A_CURSOR, UNSIGNED_CURSORS, type CursorCodec, type CursorResult, type CursorScope, type CursorSigner } from "./cursor.js";
export { checkEventQuery, SEARCH_PARAMETERS, type ParameterSchema, type EventQuery, type EventQueryCheck, type EventQueryOperation } from "./event-query.js";
export {
  createSettingsCore,
  defaultStoredSettings,
  secretFields,
  settingsView,
  storeGitProviders,
  storeSettings,
  KEEP_WHEN_NULL,
  PLAIN_SECRETS,
  SETTINGS_DEFAULTS,
  SPEC_SETTINGS_TABLE,
  STORED_SETTINGS_VERSION,
  type SealedSecret,
  type SettingsCore,
  type SettingsSealer,
  type SettingsTable,
  type StoredSettings,
  type StoredScalars,
  type StoredCustomSecret,
  type StoredMCPConfig,
  type StoredMCPSHTTPServer,
  type StoredMCPSSEServer,
  type StoredMCPStdioServer,
  type StoredProviderToken,
  type SecretField,
  type DefaultedField,
  type KeptField,
  type Fields,
  type FieldName,
  type FieldsWhere,
} from "./settings.js";
