/**
 * Account-scoped settings and git-provider tokens: one stored document, secrets sealed at rest, read
 * in the interface's flat view and the OpenHands agent server's view at once (core/agent-settings.ts).
 */
import type { AccountSettingsView, AddGitProvidersRequest, AgentProfileListResponse, MessageResponse, SecretsListResponse, Settings, SettingsUpdateRequest } from "@acs-toolkit/schema";
import {
  agentServerView,
  asksForUpdate,
  llmProfiles,
  updateSettings,
  AGENT_SETTINGS_SCHEMA,
  CONVERSATION_SETTINGS_SCHEMA,
  SettingsInputError,
} from "../core/agent-settings.js";
import { HttpError, RequestValidationError } from "../core/errors.js";
import { settingsView, storeGitProviders, storeSettings, type StoredSettings } from "../core/settings.js";
import { readJson } from "./body.js";
import type { ApiDeps } from "./deps.js";
import { jsonReply } from "./reply.js";
import type { ApiBody, Operation } from "./types.js";

/** The store's document of the settings. */
export const SETTINGS_DOCUMENT = "settings";

/** A merge's own refusal (a shape the spec's schema lets through), named by its path. */
function merged(merge: () => StoredSettings): StoredSettings {
  try {
    return merge();
  } catch (error) {
    if (error instanceof SettingsInputError) throw new RequestValidationError([{ loc: ["body", ...error.loc], msg: error.message, type: "value_error" }]);
    if (error instanceof TypeError) throw new RequestValidationError([{ loc: ["body"], msg: error.message, type: "value_error" }]);
    throw error;
  }
}

/** Both views of one stored document, side by side (their field names do not meet). */
const accountView = (stored: StoredSettings | undefined): AccountSettingsView => ({ ...settingsView(stored), ...agentServerView(stored) });

/** The agent server's refusal of a PATCH that asks for nothing (settings_router.py). */
const NOTHING_TO_UPDATE =
  "At least one of agent_settings_diff, conversation_settings_diff, misc_settings_diff, active_profile, or active_agent_profile_id must be provided";

/** The profile pointers of a PATCH, checked against the settings it produced: they are derived here, never stored. */
function checkPointers(request: SettingsUpdateRequest, next: StoredSettings): void {
  if (request.active_agent_profile_id != null) throw new HttpError(404, `Agent profile '${request.active_agent_profile_id}' not found`);
  if (!Object.hasOwn(request, "active_profile")) return;
  const active = agentServerView(next).active_profile;
  if (request.active_profile === null) {
    if (active !== null) {
      throw new RequestValidationError([{ loc: ["body", "active_profile"], msg: "the active profile is the stored LLM: remove agent_settings.llm.model to have none", type: "value_error" }]);
    }
  } else if (request.active_profile !== active) {
    throw new HttpError(404, `Profile '${request.active_profile}' not found`);
  }
}

type SettingsOperationId =
  | "getSettings"
  | "storeSettings"
  | "addGitProviders"
  | "updateSettings"
  | "getAgentSettingsSchema"
  | "getConversationSettingsSchema"
  | "listLlmProfiles"
  | "listAgentProfiles"
  | "listSecrets";

export function settingsOperations({ store, validators, settings }: ApiDeps): Record<SettingsOperationId, Operation> {
  const save = (stored: StoredSettings) => store.putDocument(SETTINGS_DOCUMENT, JSON.stringify(stored));
  const load = async (): Promise<StoredSettings | undefined> => {
    const text = await store.getDocument(SETTINGS_DOCUMENT);
    if (text === undefined) return undefined;
    const { settings: stored, upgraded } = settings.read(text);
    if (upgraded) await save(stored); // clear values of an older version leave the stored row at once
    return stored;
  };
  // Every read-modify-write of the document, one after the other: two requests that both read
  // before either writes would lose one's change.
  let writing: Promise<unknown> = Promise.resolve();
  const serially = <T>(change: () => Promise<T>): Promise<T> => {
    const next = writing.then(change, change);
    writing = next.catch(() => {});
    return next;
  };

  /** A checked body merged into the stored document, with nothing in between its read and its write. */
  const change = async (body: ApiBody, operationId: "storeSettings" | "addGitProviders", merge: (previous: StoredSettings | undefined, request: unknown) => StoredSettings, message: string) => {
    const request = await readJson(body);
    validators.body(operationId, request);
    await serially(async () => {
      const previous = await load();
      return save(merged(() => merge(previous, request)));
    });
    return jsonReply({ message } satisfies MessageResponse);
  };

  return {
    // Always 200: a server with nothing stored answers the defaults, as the agent server does.
    getSettings: async () => jsonReply(accountView(await serially(load))),

    async updateSettings({ body }) {
      const request = (await readJson(body)) as SettingsUpdateRequest;
      validators.body("updateSettings", request);
      if (!asksForUpdate(request)) throw new HttpError(400, NOTHING_TO_UPDATE);
      const next = await serially(async () => {
        const previous = await load();
        const changed = merged(() => updateSettings(previous, request, settings.sealer));
        checkPointers(request, changed);
        await save(changed);
        return changed;
      });
      return jsonReply(accountView(next));
    },

    getAgentSettingsSchema: async () => jsonReply(AGENT_SETTINGS_SCHEMA),

    getConversationSettingsSchema: async () => jsonReply(CONVERSATION_SETTINGS_SCHEMA),

    listLlmProfiles: async () => jsonReply(llmProfiles(await serially(load))),

    async listSecrets() {
      const stored = await serially(load);
      const secrets = Object.entries(stored?.custom_secrets ?? {}).map(([name, { description }]) => ({ name, description }));
      return jsonReply({ secrets } satisfies SecretsListResponse);
    },

    listAgentProfiles: async () => jsonReply({ profiles: [], active_agent_profile_id: null } satisfies AgentProfileListResponse),

    storeSettings: ({ body }) => change(body, "storeSettings", (previous, request) => storeSettings(previous, request as Settings, settings.sealer), "Settings stored"),

    addGitProviders: ({ body }) => change(body, "addGitProviders", (previous, request) => storeGitProviders(previous, request as AddGitProvidersRequest, settings.sealer), "Git providers stored"),
  };
}
