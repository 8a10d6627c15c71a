/** Account-scoped settings and git-provider tokens: one stored document, secrets sealed at rest. */
import type { AddGitProvidersRequest, MessageResponse, Settings } from "@acs-toolkit/schema";
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
    if (error instanceof TypeError) throw new RequestValidationError([{ loc: ["body"], msg: error.message, type: "value_error" }]);
    throw error;
  }
}

export function settingsOperations({ store, validators, settings }: ApiDeps): Record<"getSettings" | "storeSettings" | "addGitProviders", Operation> {
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
    async getSettings() {
      const stored = await serially(load);
      if (!stored) throw new HttpError(404, "Settings not found");
      return jsonReply(settingsView(stored));
    },

    storeSettings: ({ body }) => change(body, "storeSettings", (previous, request) => storeSettings(previous, request as Settings, settings.sealer), "Settings stored"),

    addGitProviders: ({ body }) => change(body, "addGitProviders", (previous, request) => storeGitProviders(previous, request as AddGitProvidersRequest, settings.sealer), "Git providers stored"),
  };
}
