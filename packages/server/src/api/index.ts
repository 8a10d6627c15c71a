/**
 * @packageDocumentation
 * The API without a transport: `@acs-toolkit/server/api`. One function per operation of the spec
 * (by `operationId`), from a plain request to a plain reply, with the store, conversation service,
 * validators, cursors, settings storage, files and runtime controls passed in. The reference
 * server's Node host and the mock's browser handlers both answer through it; nothing here imports
 * a Node built-in, Express or a native module.
 *
 * The README's "The API without a transport" shows it answering a request with the memory store
 * and the build's request checks (test/api/readme-api-example.ts runs it).
 */
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { HttpError } from "../core/errors.js";
import { RequestValidationError } from "../core/errors.js";
import { conversationOperations } from "./conversations.js";
import { conversationListOperations } from "./conversation-list.js";
import { controlOperations } from "./control.js";
import type { ApiDeps } from "./deps.js";
import { docsFiles } from "./docs.js";
import { errorReply, type FailureReport } from "./errors.js";
import { eventOperations } from "./events.js";
import { eventReadOperations } from "./event-reads.js";
import { fileOperations } from "./files.js";
import { metaOperations, type Activity } from "./meta.js";
import { jsonReply } from "./reply.js";
import { matchRoute, pathEncodingProblem, pathTemplates, type PathTemplate } from "./routes.js";
import { settingsOperations } from "./settings.js";
import { workspaceOperations } from "./workspace.js";
import { bashOperations, BashEventsSession, type BashEventsTransport } from "./bash.js";
import type { ApiBody, ApiReply, ApiRequest, Operation, OperationId } from "./types.js";

export type { ApiBody, ApiReply, ApiRequest, Operation, OperationId } from "./types.js";
export type { ApiDeps, ConversationFiles, ConversationPort, OpenedFile, ReceivedFiles, SettingsStorage } from "./deps.js";
export { errorReply, storageFullCause, storageFullDetail, type FailureReport } from "./errors.js";
export { jsonReply, partsReply, replyLength, textReply, JSON_TYPE } from "./reply.js";
export { matchRoute, pathEncodingProblem, pathTemplates, type PathEncodingProblem, type PathTemplate, type RouteMatch } from "./routes.js";
export { JSON_MEDIA_TYPES, JSONL_MEDIA_TYPES, mediaTypeIs, readJson } from "./body.js";
export { SETTINGS_DOCUMENT } from "./settings.js";
export { RequestChecks, type PrecompiledValidators } from "../validation/request-checks.js";
export { markQueryOverflow, MAX_QUERY_PARAMETERS } from "../validation/query-overflow.js";
export { memoryFiles } from "./memory-files.js";
export { DEFAULT_UPLOAD_LIMITS, type UploadLimits } from "../upload-admission.js";
export { BASH_EVENTS_CLOSE, BashEventsSession, MAX_OUTPUT_PIECE, NO_COMMANDS, type BashEventsTransport, type CommandOutcome, type CommandRequest, type CommandRunner } from "./bash.js";

/** Requests that do not make a server busy (idle_time of /server_info goes on). */
const PROBES: ReadonlySet<OperationId> = new Set(["getServerInfo", "getHealth"]);

/** The answer to a path no operation has. */
export const NOT_FOUND_REPLY = (): ApiReply => jsonReply({ detail: "Not Found" }, 404);

/** A body that is empty (a GET, or a host that has none to give). */
export const noBody: ApiBody = {
  length: 0,
  compressed: false,
  is: () => false,
  jsonBytes: async () => undefined,
  chunks: async function* () {},
  discard: () => {},
};

export interface Api {
  /** The spec's operations by method and path. */
  readonly templates: readonly PathTemplate[];
  /** Every operation of the spec. */
  readonly operations: Readonly<Record<OperationId, Operation>>;
  /** Calls an operation after its key check; every failure is answered (api/errors.ts) and told to `report`. */
  call(template: PathTemplate, request: ApiRequest, report?: FailureReport): Promise<ApiReply>;
  /**
   * Routes a request by method and raw path (still percent-encoded, without the query) and calls
   * its operation; a path no operation has is the JSON 404, a parameter whose escape does not
   * decode a 422 naming it. The reference's small files (/docs/live, …) answer GETs too.
   */
  handle(method: string, rawPath: string, request: Omit<ApiRequest, "params">, report?: FailureReport): Promise<ApiReply>;
  /** A connection of the bash-events socket over `transport`, answering as executeBashCommand does. */
  bashEvents(transport: BashEventsTransport, authTimeoutMs?: number): BashEventsSession;
}

/** The API over `deps`. */
export function createApi(deps: ApiDeps): Api {
  const startedAt = (deps.clock ?? Date.now)();
  const activity: Activity = { startedAt, lastCall: startedAt };
  const operations: Record<OperationId, Operation> = {
    ...eventOperations(deps),
    ...conversationOperations(deps),
    ...conversationListOperations(deps),
    ...controlOperations(deps),
    ...settingsOperations(deps),
    ...fileOperations(deps),
    ...metaOperations(deps, activity),
    ...eventReadOperations(deps),
    ...workspaceOperations(deps),
    ...bashOperations(deps),
  };
  // Routed by the bundled spec; `deps.openapi` is only what /openapi.json serves (the mock's has more).
  const templates = pathTemplates(openapiDocument as Parameters<typeof pathTemplates>[0]);
  const missing = templates.filter((t) => !operations[t.operationId]);
  if (missing.length) throw new Error(`the API has no function for ${missing.map((t) => t.operationId).join(", ")}`);
  const files = docsFiles(deps.asyncapi);

  const call = async (template: PathTemplate, request: ApiRequest, report?: FailureReport): Promise<ApiReply> => {
    try {
      const keyNeeded = template.key === "required" || (template.key === "optional" && !deps.publicRead);
      if (keyNeeded && !deps.keyAccepted(request.headers["x-session-api-key"])) {
        request.body.discard();
        throw new HttpError(401, "Unauthorized");
      }
      if (!PROBES.has(template.operationId)) activity.lastCall = (deps.clock ?? Date.now)();
      return await operations[template.operationId](request);
    } catch (error) {
      return errorReply(error, report);
    }
  };

  return {
    templates,
    operations,
    call,
    bashEvents: (transport, authTimeoutMs) => new BashEventsSession(transport, deps, authTimeoutMs),
    async handle(method, rawPath, request, report) {
      const problem = pathEncodingProblem(templates, method, rawPath);
      if (problem) {
        request.body.discard();
        if ("unknownRoute" in problem) return NOT_FOUND_REPLY();
        return errorReply(new RequestValidationError([{ loc: ["path", problem.parameter], msg: "is not valid percent-encoded UTF-8", type: "value_error" }]));
      }
      const match = matchRoute(templates, method, rawPath);
      if (match) return call(match.template, { ...request, params: match.params }, report);
      const file = method === "GET" || method === "HEAD" ? files.get(rawPath) : undefined;
      if (file) return file(request.headers.host);
      request.body.discard();
      return NOT_FOUND_REPLY();
    },
  };
}
