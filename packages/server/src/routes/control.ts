/**
 * The agent server's controls of a conversation, at its paths and with its answers
 * (openhands-versions §3.6): `POST …/run`, `…/pause`, `…/interrupt` (bodies ignored),
 * `…/events/respond_to_confirmation`, `…/confirmation_policy` and `…/security_analyzer` (the agent
 * server's conversation_router: bodies `{policy}` and `{security_analyzer}`, 200 Success, a bare
 * 404 for an unknown conversation). The runtime does the work; without controls (the recording
 * runtime) run, respond_to_confirmation, confirmation_policy and security_analyzer answer 400 and
 * pause and interrupt change nothing.
 */
import { Router, type RequestHandler } from "express";
import type { ConfirmationResponseRequest, SetConfirmationPolicyRequest, SetSecurityAnalyzerRequest, Success } from "@acs-toolkit/schema";
import type { ConversationService } from "../conversations.js";
import { HttpError } from "../http/errors.js";
import type { RequestValidators } from "../validation/request-validators.js";
import { NO_AGENT_DETAIL, type RuntimeControls } from "../core/runtime.js";
import type { EventStore } from "../store/types.js";

interface ControlRoutesDeps {
  store: EventStore;
  conversations: ConversationService;
  controls: RuntimeControls | undefined;
  validators: RequestValidators;
  auth: RequestHandler;
  json: RequestHandler;
}

const SUCCESS: Success = { success: true };

export function controlRoutes({ store, conversations, controls, validators, auth, json }: ControlRoutesDeps): Router {
  const router = Router();

  /** The conversation's canonical id, or the error the agent server answers for an unknown one. */
  const conversationOf = async (operationId: string, params: Record<string, string>, unknown: HttpError): Promise<string> => {
    const { path } = validators.parameters(operationId, params, {});
    const record = await store.getConversation(String(path.conversation_id).toLowerCase());
    if (!record) throw unknown;
    return record.id;
  };

  router.post("/api/conversations/:conversation_id/run", auth, async (req, res) => {
    const id = await conversationOf("runConversation", req.params as Record<string, string>, new HttpError(404, "Not Found"));
    if (!controls) throw new HttpError(400, NO_AGENT_DETAIL);
    await controls.run(id, conversations.contextFor(id));
    res.json(SUCCESS);
  });

  for (const [operation, name] of [["pauseConversation", "pause"], ["interruptConversation", "interrupt"]] as const) {
    router.post(`/api/conversations/:conversation_id/${name}`, auth, async (req, res) => {
      // The agent server answers a bare 400 for an unknown conversation here.
      const id = await conversationOf(operation, req.params as Record<string, string>, new HttpError(400, "Bad Request"));
      if (controls) await controls[name](id, conversations.contextFor(id));
      res.json(SUCCESS);
    });
  }

  router.post("/api/conversations/:conversation_id/events/respond_to_confirmation", auth, json, async (req, res) => {
    const { path } = validators.parameters("respondToConfirmation", req.params as Record<string, string>, {});
    const record = await store.getConversation(String(path.conversation_id).toLowerCase());
    if (!record) throw new HttpError(404, `Conversation not found: ${String(req.params.conversation_id)}`);
    validators.body("respondToConfirmation", req.body);
    if (!controls) throw new HttpError(400, NO_AGENT_DETAIL);
    await controls.respondToConfirmation(record.id, req.body as ConfirmationResponseRequest, conversations.contextFor(record.id));
    res.json(SUCCESS);
  });

  router.post("/api/conversations/:conversation_id/confirmation_policy", auth, json, async (req, res) => {
    const id = await conversationOf("setConfirmationPolicy", req.params as Record<string, string>, new HttpError(404, "Not Found"));
    validators.body("setConfirmationPolicy", req.body);
    if (!controls) throw new HttpError(400, NO_AGENT_DETAIL);
    await controls.setConfirmationPolicy(id, (req.body as SetConfirmationPolicyRequest).policy, conversations.contextFor(id));
    res.json(SUCCESS);
  });

  router.post("/api/conversations/:conversation_id/security_analyzer", auth, json, async (req, res) => {
    const id = await conversationOf("setSecurityAnalyzer", req.params as Record<string, string>, new HttpError(404, "Not Found"));
    validators.body("setSecurityAnalyzer", req.body);
    if (!controls) throw new HttpError(400, NO_AGENT_DETAIL);
    await controls.setSecurityAnalyzer(id, (req.body as SetSecurityAnalyzerRequest).security_analyzer, conversations.contextFor(id));
    res.json(SUCCESS);
  });

  return router;
}
