/** Creating a conversation and reading its ConversationInfo. */
import type { ConversationCreateRequest, ConversationCreateResponse } from "@acs-toolkit/schema";
import { parseJsonBody } from "../json/body.js";
import { requireConversation, type ConversationRecord } from "../store/types.js";
import { JSON_MEDIA_TYPES } from "./body.js";
import type { ApiDeps } from "./deps.js";
import { jsonReply } from "./reply.js";
import type { ApiBody, Operation } from "./types.js";
import { isStartRequest, startConversation } from "./start-conversation.js";

/**
 * Creation bodies from this size on are parsed and stored off the request thread (a replay of a few
 * hundred events is parsed, validated and stored in place in a few milliseconds).
 */
const OFF_THREAD_BODY_BYTES = 256 * 1024;

/** A large or compressed body (or one of unknown length) streams to the import thread; a small one is read and parsed in place. */
const offThread = (body: ApiBody) => (body.compressed || !((body.length ?? NaN) < OFF_THREAD_BODY_BYTES)) && body.is(JSON_MEDIA_TYPES);

export function conversationOperations({ store, conversations, validators }: ApiDeps): Record<"createConversation" | "getConversation" | "batchGetConversations", Operation> {
  return {
    async createConversation({ body }) {
      let record: ConversationRecord;
      if (conversations.createFromJson && offThread(body)) record = await conversations.createFromJson(body.chunks(JSON_MEDIA_TYPES));
      else {
        const bytes = await body.jsonBytes();
        const request = bytes?.length ? parseJsonBody(bytes) : undefined;
        validators.body("createConversation", request);
        if (isStartRequest(request)) return startConversation({ store, conversations }, request);
        record = await conversations.create(request as ConversationCreateRequest);
      }
      // Without a runtime the conversation is STOPPED; the interface's enum has no ERROR.
      const status = record.status === "ERROR" ? "STOPPED" : record.status;
      return jsonReply({ status: "ok", conversation_id: record.id, message: null, conversation_status: status } satisfies ConversationCreateResponse);
    },

    async batchGetConversations({ query }) {
      const ids = validators.parameters("batchGetConversations", {}, query).query.ids as string[];
      const infos = await Promise.all(
        ids.map(async (id) => {
          const record = await store.getConversation(id.toLowerCase());
          return record ? conversations.info(record) : null;
        }),
      );
      return jsonReply(infos);
    },

    async getConversation({ params }) {
      const { path } = validators.parameters("getConversation", params, {});
      const record = await requireConversation(store, path.conversation_id as string);
      return jsonReply(await conversations.info(record));
    },
  };
}
