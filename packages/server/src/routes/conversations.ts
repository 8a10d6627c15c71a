/** Creating and reading conversations. */
import { Router, type Request, type RequestHandler, type Response } from "express";
import type { ConversationCreateRequest, ConversationCreateResponse, EventBatchResponse, SendMessageRequest } from "@acs-toolkit/schema";
import type { ConversationService } from "../conversations.js";
import { HttpError } from "../http/errors.js";
import { JSON_MEDIA_TYPES, JSONL_MEDIA_TYPES, jsonBodyChunks } from "../http/json-body.js";
import { parseJsonBody } from "../json/body.js";
import type { RequestValidators } from "../validation/request-validators.js";
import { requireConversation, type ConversationRecord, type EventStore } from "../store/types.js";

interface ConversationRoutesDeps {
  store: EventStore;
  conversations: ConversationService;
  validators: RequestValidators;
  auth: RequestHandler;
  json: RequestHandler;
  /** Reads a JSON body as bytes (jsonBodyBytes). */
  jsonBytes: RequestHandler;
  /** The largest JSON body. */
  jsonLimitBytes: number;
}

/**
 * Creation bodies from this size on are parsed and stored off the request thread (a replay of a few
 * hundred events is parsed, validated and stored in place in a few milliseconds).
 */
const OFF_THREAD_BODY_BYTES = 256 * 1024;

export function conversationRoutes({ store, conversations, validators, auth, json, jsonBytes, jsonLimitBytes }: ConversationRoutesDeps): Router {
  const router = Router();

  // Small bodies are read and parsed in place; a large or compressed one (or one of unknown length)
  // streams to the import thread.
  const offThread = (req: Request) => {
    const length = Number(req.headers["content-length"] ?? NaN);
    const compressed = (req.headers["content-encoding"] ?? "identity") !== "identity";
    return (compressed || !(length < OFF_THREAD_BODY_BYTES)) && Boolean(req.is(JSON_MEDIA_TYPES));
  };
  const readBytes = (req: Request, res: Response) =>
    new Promise<Buffer | undefined>((resolve, reject) => jsonBytes(req, res, (error?: unknown) => (error ? reject(error) : resolve(req.body as Buffer | undefined))));

  router.post("/api/conversations", auth, async (req, res) => {
    let record: ConversationRecord;
    if (offThread(req)) record = await conversations.createFromJson(jsonBodyChunks(req, jsonLimitBytes));
    else {
      const bytes = await readBytes(req, res);
      const body = bytes?.length ? parseJsonBody(bytes) : undefined;
      validators.body("createConversation", body);
      record = await conversations.create(body as ConversationCreateRequest);
    }
    // Without a runtime the conversation is STOPPED; the interface's enum has no ERROR.
    const status = record.status === "ERROR" ? "STOPPED" : record.status;
    const response: ConversationCreateResponse = { status: "ok", conversation_id: record.id, message: null, conversation_status: status };
    res.json(response);
  });

  router.get("/api/conversations/:conversation_id", auth, async (req, res) => {
    const { path } = validators.parameters("getConversation", req.params as Record<string, string>, {});
    const record = await requireConversation(store, path.conversation_id as string);
    res.json(await conversations.info(record));
  });

  router.post("/api/conversations/:conversation_id/events", auth, json, async (req, res) => {
    const { path } = validators.parameters("sendMessage", req.params as Record<string, string>, {});
    const id = (await requireConversation(store, path.conversation_id as string)).id;
    validators.body("sendMessage", req.body);
    res.json(await conversations.deliverMessage(id, req.body as SendMessageRequest, { run: (req.body as SendMessageRequest).run === true }));
  });

  // An event batch: the JSONL body streams to the import thread as it arrives (ConversationService.appendBatch).
  router.post("/api/conversations/:conversation_id/events/batch", auth, async (req, res) => {
    const { path } = validators.parameters("appendEventBatch", req.params as Record<string, string>, {});
    const id = (await requireConversation(store, path.conversation_id as string)).id;
    if (!req.is(JSONL_MEDIA_TYPES)) {
      req.resume();
      throw new HttpError(415, "Unsupported Media Type: the body of a batch is application/x-ndjson (one event per line); nothing was stored");
    }
    const appended = await conversations.appendBatch(id, jsonBodyChunks(req, jsonLimitBytes, JSONL_MEDIA_TYPES));
    const response: EventBatchResponse = { appended: appended.count, event_count: appended.eventCount };
    res.json(response);
  });

  return router;
}
