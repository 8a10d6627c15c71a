/**
 * The agent server's controls of a conversation, at its paths and with its answers
 * (openhands-versions §3.6): `POST …/run`, `…/pause`, `…/interrupt` (bodies ignored),
 * `…/events/respond_to_confirmation`, `…/confirmation_policy` and `…/security_analyzer` (the agent
 * server's conversation_router: bodies `{policy}` and `{security_analyzer}`, 200 Success, a bare
 * 404 for an unknown conversation). The runtime does the work; without controls (the recording
 * runtime) run, respond_to_confirmation, confirmation_policy and security_analyzer answer 400 and
 * pause and interrupt change nothing.
 */
import type { ConfirmationResponseRequest, SetConfirmationPolicyRequest, SetSecurityAnalyzerRequest, Success } from "@acs-toolkit/schema";
import { HttpError } from "../core/errors.js";
import { NO_AGENT_DETAIL } from "../core/runtime.js";
import { readJson } from "./body.js";
import type { ApiDeps } from "./deps.js";
import { jsonReply } from "./reply.js";
import type { Operation, OperationId } from "./types.js";

const SUCCESS: Success = { success: true };

type ControlOperations = "runConversation" | "pauseConversation" | "interruptConversation" | "respondToConfirmation" | "setConfirmationPolicy" | "setSecurityAnalyzer";

export function controlOperations({ store, conversations, controls, validators }: ApiDeps): Record<ControlOperations, Operation> {
  /** The conversation's canonical id, or the error the agent server answers for an unknown one. */
  const conversationOf = async (operationId: OperationId, params: Record<string, string>, unknown: HttpError): Promise<string> => {
    const { path } = validators.parameters(operationId, params, {});
    const record = await store.getConversation(String(path.conversation_id).toLowerCase());
    if (!record) throw unknown;
    return record.id;
  };
  const agent = () => {
    if (!controls) throw new HttpError(400, NO_AGENT_DETAIL);
    return controls;
  };

  return {
    async runConversation({ params }) {
      const id = await conversationOf("runConversation", params, new HttpError(404, "Not Found"));
      await agent().run(id, conversations.contextFor(id));
      return jsonReply(SUCCESS);
    },

    // The agent server answers a bare 400 for an unknown conversation to a pause or an interrupt.
    async pauseConversation({ params }) {
      const id = await conversationOf("pauseConversation", params, new HttpError(400, "Bad Request"));
      if (controls) await controls.pause(id, conversations.contextFor(id));
      return jsonReply(SUCCESS);
    },

    async interruptConversation({ params }) {
      const id = await conversationOf("interruptConversation", params, new HttpError(400, "Bad Request"));
      if (controls) await controls.interrupt(id, conversations.contextFor(id));
      return jsonReply(SUCCESS);
    },

    async respondToConfirmation({ params, body }) {
      const response = await readJson(body);
      const { path } = validators.parameters("respondToConfirmation", params, {});
      const record = await store.getConversation(String(path.conversation_id).toLowerCase());
      if (!record) throw new HttpError(404, `Conversation not found: ${params.conversation_id}`);
      validators.body("respondToConfirmation", response);
      await agent().respondToConfirmation(record.id, response as ConfirmationResponseRequest, conversations.contextFor(record.id));
      return jsonReply(SUCCESS);
    },

    async setConfirmationPolicy({ params, body }) {
      const request = await readJson(body);
      const id = await conversationOf("setConfirmationPolicy", params, new HttpError(404, "Not Found"));
      validators.body("setConfirmationPolicy", request);
      await agent().setConfirmationPolicy(id, (request as SetConfirmationPolicyRequest).policy, conversations.contextFor(id));
      return jsonReply(SUCCESS);
    },

    async setSecurityAnalyzer({ params, body }) {
      const request = await readJson(body);
      const id = await conversationOf("setSecurityAnalyzer", params, new HttpError(404, "Not Found"));
      validators.body("setSecurityAnalyzer", request);
      await agent().setSecurityAnalyzer(id, (request as SetSecurityAnalyzerRequest).security_analyzer, conversations.contextFor(id));
      return jsonReply(SUCCESS);
    },
  };
}
