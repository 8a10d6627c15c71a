/**
 * The conversations as a list, and a conversation's update and delete: the agent server's
 * `GET /api/conversations/search`, `GET /api/conversations/count`, `PATCH` and `DELETE
 * /api/conversations/{conversation_id}` (conversation_router.py, 1.43.1), in its shapes.
 */
import type { ConversationInfo, ConversationPage, ConversationSortOrder, ExecutionStatus, Success, UpdateConversationRequest } from "@acs-toolkit/schema";
import { canonicalConversationId } from "../core/conversations.js";
import { RequestValidationError } from "../core/errors.js";
import { requireConversation, type ConversationListQuery, type ConversationRecord } from "../store/types.js";
import { readJson } from "./body.js";
import type { ApiDeps } from "./deps.js";
import { jsonReply } from "./reply.js";
import type { Operation } from "./types.js";

type ListOperations = "searchConversations" | "countConversations" | "deleteConversation" | "updateConversation";

/** How each sort order of the agent server lists the store's conversations. */
const SORT_ORDERS: Record<ConversationSortOrder, Pick<ConversationListQuery, "by" | "order">> = {
  CREATED_AT: { by: "createdAt", order: "asc" },
  CREATED_AT_DESC: { by: "createdAt", order: "desc" },
  UPDATED_AT: { by: "updatedAt", order: "asc" },
  UPDATED_AT_DESC: { by: "updatedAt", order: "desc" },
};

/** Conversations read from the store per step of a walk (a status filter, a count by status). */
const WALK_STEP = 100;

/** A conversation id as the agent server writes a next_page_id: the UUID's 32 hex digits. */
const hex = (id: string) => id.replaceAll("-", "");

const SUCCESS: Success = { success: true };

export function conversationListOperations({ store, conversations, validators, files }: ApiDeps): Record<ListOperations, Operation> {
  /**
   * The conversations in `sort` order from `from` on (inclusive), a step at a time, each with its
   * ConversationInfo (the status a filter reads is part of it).
   */
  async function* walk(sort: Pick<ConversationListQuery, "by" | "order">, from?: ConversationListQuery["from"]): AsyncGenerator<ConversationInfo & { record: ConversationRecord }> {
    for (let start = from; ; ) {
      const records = await store.listConversations({ ...sort, limit: WALK_STEP + 1, from: start });
      const step = records.slice(0, WALK_STEP);
      for (const [index, info] of (await Promise.all(step.map((record) => conversations.info(record)))).entries()) yield { ...info, record: step[index]! };
      const next = records[WALK_STEP];
      if (!next) return;
      start = { key: next[sort.by], id: next.id };
    }
  }

  /** The position a page_id names: the conversation's, where it stands in the order now. @throws RequestValidationError for an id no conversation has */
  const startOf = async (pageId: string, sort: Pick<ConversationListQuery, "by" | "order">): Promise<ConversationListQuery["from"]> => {
    const record = await store.getConversation(canonicalConversationId(pageId) ?? pageId);
    // A conversation deleted since the page before: starting over silently (the agent server's
    // way) would list the first pages again to a client that believes it is going on.
    if (!record) throw new RequestValidationError([{ loc: ["query", "page_id"], msg: "is not the id of a conversation (it may have been deleted): start again without page_id", type: "value_error" }]);
    return { key: record[sort.by], id: record.id };
  };

  return {
    async searchConversations({ query }) {
      const q = validators.parameters("searchConversations", {}, query).query as { page_id?: string; limit?: number; status?: ExecutionStatus; sort_order?: ConversationSortOrder };
      const limit = q.limit ?? 100;
      const sort = SORT_ORDERS[q.sort_order ?? "CREATED_AT_DESC"];
      const from = q.page_id === undefined ? undefined : await startOf(q.page_id, sort);
      const page: ConversationPage = { items: [], next_page_id: null };
      if (q.status === undefined) {
        // One read of the page and the conversation after it (the next page's first).
        const records = await store.listConversations({ ...sort, limit: limit + 1, from });
        page.items = await Promise.all(records.slice(0, limit).map((record) => conversations.info(record)));
        if (records[limit]) page.next_page_id = hex(records[limit].id);
        return jsonReply(page);
      }
      for await (const { record, ...info } of walk(sort, from)) {
        if (info.execution_status !== q.status) continue;
        if (page.items.length === limit) {
          page.next_page_id = hex(record.id);
          break;
        }
        page.items.push(info);
      }
      return jsonReply(page);
    },

    async countConversations({ query }) {
      const { status } = validators.parameters("countConversations", {}, query).query as { status?: ExecutionStatus };
      if (status === undefined) return jsonReply(await store.countConversations());
      let n = 0;
      for await (const info of walk(SORT_ORDERS.CREATED_AT)) if (info.execution_status === status) n++;
      return jsonReply(n);
    },

    async deleteConversation({ params }) {
      const { path } = validators.parameters("deleteConversation", params, {});
      const id = (await requireConversation(store, path.conversation_id as string)).id;
      await conversations.delete(id);
      await files?.remove(id);
      return jsonReply(SUCCESS);
    },

    async updateConversation({ params, body }) {
      const json = await readJson(body);
      const { path } = validators.parameters("updateConversation", params, {});
      const id = (await requireConversation(store, path.conversation_id as string)).id;
      validators.body("updateConversation", json);
      const { title, tags } = json as UpdateConversationRequest;
      // Stored trimmed, as the agent server stores it; a title of whitespace alone would be an empty one.
      const trimmed = typeof title === "string" ? title.trim() : undefined;
      if (trimmed === "") throw new RequestValidationError([{ loc: ["body", "title"], msg: "must not be blank (whitespace alone)", type: "string_too_short" }]);
      await store.updateConversation(id, { ...(trimmed !== undefined && { title: trimmed }), ...(tags !== null && tags !== undefined && { tags }) });
      return jsonReply(SUCCESS);
    },
  };
}
