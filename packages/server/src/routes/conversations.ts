/** Creating and reading conversations. */
import { Router, type RequestHandler } from "express";
import type { AgentConversationState, ConversationCreateRequest, ConversationCreateResponse, ConversationInfo, SendMessageRequest } from "@acs-toolkit/schema";
import type { ConversationService } from "../conversations.js";
import type { RequestValidators } from "../http/validation.js";
import { requireConversation, type ConversationRecord, type EventStore } from "../store/types.js";

export interface ConversationRoutesDeps {
  store: EventStore;
  conversations: ConversationService;
  validators: RequestValidators;
  auth: RequestHandler;
  json: RequestHandler;
}

function conversationInfo(record: ConversationRecord, state: AgentConversationState): ConversationInfo {
  return {
    ...state,
    conversation_id: record.id,
    status: record.status,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    event_count: record.eventCount,
    repository: record.repository,
    selected_branch: record.selectedBranch,
    git_provider: record.gitProvider,
  };
}

export function conversationRoutes({ store, conversations, validators, auth, json }: ConversationRoutesDeps): Router {
  const router = Router();

  router.post("/api/conversations", auth, json, (req, res) => {
    validators.body("createConversation", req.body);
    const record = conversations.create(req.body as ConversationCreateRequest);
    // Without a runtime the conversation is STOPPED; the interface's enum has no ERROR.
    const status = record.status === "ERROR" ? "STOPPED" : record.status;
    const response: ConversationCreateResponse = { status: "ok", conversation_id: record.id, message: null, conversation_status: status };
    res.json(response);
  });

  router.get("/api/conversations/:conversation_id", auth, (req, res) => {
    const { path } = validators.parameters("getConversation", req.params as Record<string, string>, {});
    const record = requireConversation(store, path.conversation_id as string);
    res.json(conversationInfo(record, conversations.states.of(record)));
  });

  router.post("/api/conversations/:conversation_id/events", auth, json, (req, res) => {
    const { path } = validators.parameters("sendMessage", req.params as Record<string, string>, {});
    const id = requireConversation(store, path.conversation_id as string).id;
    validators.body("sendMessage", req.body);
    res.json(conversations.sendMessage(id, req.body as SendMessageRequest, { run: (req.body as SendMessageRequest).run === true }));
  });

  return router;
}
