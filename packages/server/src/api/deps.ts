/** What the operations are given: every dependency explicit, none reached through a global. */
import type { ConversationCreateRequest, ConversationInfo, Health, MessageEvent, UserMessage } from "@acs-toolkit/schema";
import type { CursorCodec } from "../core/cursor.js";
import type { RuntimeContext, RuntimeControls } from "../core/runtime.js";
import type { SettingsSealer, StoredSettings } from "../core/settings.js";
import type { AppendedBatch, ConversationRecord, EventStore } from "../store/types.js";
import type { RequestChecks } from "../validation/request-checks.js";
import type { ApiBody } from "./types.js";
import type { CommandRunner } from "./bash.js";

/** The conversation service as the operations use it (the core's `ConversationCore`, or the server's `ConversationService`). */
export interface ConversationPort {
  /** `state`: fields of the agent's state the conversation starts with (a StartConversationRequest's `max_iterations`, …). */
  create(request: ConversationCreateRequest, state?: Readonly<Record<string, unknown>>): Promise<ConversationRecord>;
  /** Creates from the JSON bytes of a body as they arrive, off the calling thread; absent: bodies are read whole. */
  createFromJson?(body: AsyncIterable<Uint8Array>): Promise<ConversationRecord>;
  info(record: ConversationRecord): Promise<ConversationInfo>;
  deliverMessage(conversationId: string, message: UserMessage, options: { run: boolean }): Promise<MessageEvent>;
  /** Appends a JSONL batch of events, all or none; absent: appendEventBatch answers 501. */
  appendBatch?(conversationId: string, body: AsyncIterable<Uint8Array>): Promise<AppendedBatch>;
  contextFor(conversationId: string): RuntimeContext;
  /** Deletes a conversation: what runs for it stopped, it and its events removed, its live subscribers closed. @throws ConversationNotFoundError */
  delete(conversationId: string): Promise<void>;
}

/** How the settings document is kept: secrets sealed by `sealer`, stored text read back by `read`. */
export interface SettingsStorage {
  sealer: SettingsSealer;
  /** A stored document's settings, and whether it was of an older version (then written back at once). */
  read(text: string): { settings: StoredSettings; upgraded: boolean };
}

/** A stored file opened for a download. */
export interface OpenedFile {
  size: number;
  /** Exactly `size` bytes (a file may grow while it is read). */
  chunks(): AsyncIterable<Uint8Array>;
  /** Closes the file unread. */
  cancel(): void;
}

/** What an upload stored and skipped (UploadResponse without the URLs). */
export interface ReceivedFiles {
  /** Whether the form had a `files` field at all. */
  sawField: boolean;
  stored: Array<{ name: string }>;
  skipped: Array<{ name: string; reason: string; detail?: string | null }>;
}

/** A conversation's files (the workspace the agent sees). */
export interface ConversationFiles {
  /** Stores the files of a `multipart/form-data` body. @throws RequestValidationError for a body that is no such form */
  receive(conversationId: string, body: ApiBody, headers: Record<string, string | undefined>): Promise<ReceivedFiles>;
  /** The file named `name`, or undefined when there is none. */
  open(conversationId: string, name: string): Promise<OpenedFile | undefined>;
  /** Removes every file of a deleted conversation (nothing when it has none). */
  remove(conversationId: string): Promise<void>;
}

export interface ApiDeps {
  store: EventStore;
  conversations: ConversationPort;
  /** The runtime's controls; undefined for the recording runtime (run and the policies answer 400). */
  controls: RuntimeControls | undefined;
  validators: RequestChecks;
  cursors: CursorCodec;
  settings: SettingsStorage;
  /** A conversation's files; absent: uploadFiles and downloadFile answer 501. */
  files?: ConversationFiles;
  /** /health's answer. */
  health(): Promise<Health>;
  /** The OpenAPI document served at /openapi.json (requests are routed and validated by the bundled spec whatever this is). */
  openapi: Record<string, unknown>;
  asyncapi: Record<string, unknown>;
  /** Whether X-Session-API-Key is an accepted key. */
  keyAccepted(presented: string | undefined): boolean;
  /** Event search and count without a key (`--public-read`). */
  publicRead: boolean;
  /** What /server_info says of this server beside its times; default: its name, no version, no tools. */
  server?: { title?: string; version?: string; tools?: readonly string[] };
  /** Milliseconds since the epoch, for /server_info's times (a fake clock in tests); default `Date.now`. */
  clock?: () => number;
  /**
   * The absolute path of the folder that holds the conversations' workspaces, each agent's HOME
   * being `<workspaceRoot>/<conversation_id>` (the server's `<data-dir>/uploads`): GET
   * /api/file/home's `home`. Default `/workspace`, for a host without a disk (the browser mock).
   */
  workspaceRoot?: string;
  /**
   * Runs the bash routes' commands in the sandbox of the conversation whose workspace holds their
   * `cwd`; absent: nothing runs, and each command is answered with `exit_code` -1 saying so.
   */
  commands?: CommandRunner;
}
