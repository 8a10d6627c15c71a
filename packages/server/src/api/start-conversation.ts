/**
 * The agent server's StartConversationRequest on `POST /api/conversations` (what OpenHands' web UI
 * and the SDK's RemoteConversation send), beside the interface's ConversationCreateRequest: the
 * spec's CreateConversationBody tells the two apart by the same keys as {@link isStartRequest}.
 */
import type { ConversationRecord } from "../store/types.js";
import type { StartConversationRequest, UserMessage } from "@acs-toolkit/schema";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { HttpError } from "../core/errors.js";
import { canonicalConversationId } from "../core/conversations.js";
import type { ApiDeps } from "./deps.js";
import { jsonReply } from "./reply.js";
import type { ApiReply } from "./types.js";

const START_PROPERTIES = (openapiDocument.components as { schemas: Record<string, { properties: Record<string, { default?: unknown }> }> }).schemas.StartConversationRequest!.properties;
/** The spec's default of StartConversationRequest's `max_iterations` (OpenHands': 500). */
const MAX_ITERATIONS_DEFAULT = START_PROPERTIES.max_iterations!.default;

/** Keys only a StartConversationRequest has (the spec's CreateConversationBody `if`). */
const START_KEYS = ["workspace", "agent", "agent_settings", "agent_profile_id"] as const;

/** Whether a parsed body of `POST /api/conversations` is the agent server's StartConversationRequest. */
export const isStartRequest = (body: unknown): body is StartConversationRequest =>
  typeof body === "object" && body !== null && !Array.isArray(body) && START_KEYS.some((key) => key in body);

/**
 * The fields of the request that the conversation's agent follows over the account's settings, where
 * they differ from the spec's defaults (OpenHands' web UI sends both on every start, at their
 * defaults unless the user changed them): a conversation without stuck detection, an own step limit.
 */
function ownState(request: StartConversationRequest): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  if (request.stuck_detection === false) state.stuck_detection = false;
  if (request.max_iterations !== undefined && request.max_iterations !== MAX_ITERATIONS_DEFAULT) state.max_iterations = request.max_iterations;
  return state;
}

/**
 * Starts a conversation as the agent server does: 201 and its ConversationInfo, or 200 and the
 * ConversationInfo of the conversation `conversation_id` names when it exists already. The initial
 * message goes the way of `POST …/events`, so `run` decides whether the agent starts on it.
 */
export async function startConversation({ store, conversations }: Pick<ApiDeps, "store" | "conversations">, request: StartConversationRequest): Promise<ApiReply> {
  const requestedId = request.conversation_id ?? undefined;
  let record: ConversationRecord;
  try {
    record = await conversations.create(requestedId === undefined ? {} : { conversation_id: requestedId }, ownState(request));
  } catch (error) {
    const existing = error instanceof HttpError && error.status === 409 && requestedId !== undefined ? await store.getConversation(canonicalConversationId(requestedId) ?? requestedId) : undefined;
    if (!existing) throw error;
    return jsonReply(await conversations.info(existing), 200);
  }
  if (request.tags && Object.keys(request.tags).length > 0) record = await store.updateConversation(record.id, { tags: request.tags });
  const first = request.initial_message;
  if (first) {
    const { run, ...message } = first;
    await conversations.deliverMessage(record.id, message as UserMessage, { run: run === true });
  }
  const current = (await store.getConversation(record.id)) ?? record;
  return jsonReply(await conversations.info(current), 201);
}
