/**
 * The reference server's derivation of the agent server's state of a conversation: the core's
 * {@link ConversationStates} (core/state.ts), each recorded value checked with AJV against its
 * property's whole schema in the bundled OpenAPI document.
 */
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { ConversationStates } from "./core/state.js";
import type { RequestValidators } from "./validation/request-validators.js";
import { sharedRequestValidators } from "./validation/precompiled-validators.js";
import type { EventStore } from "./store/types.js";

/** {@link ConversationStates} whose recorded values are checked against the spec by AJV. */
export class RecordedStates extends ConversationStates {
  constructor(store: Pick<EventStore, "search" | "readAfter">, validators: RequestValidators = sharedRequestValidators(openapiDocument)) {
    super(store, (schemaPath, value) => validators.conforms(schemaPath, value));
  }
}
