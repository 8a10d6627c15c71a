/** Account-scoped settings and git-provider tokens, secrets encrypted at rest. */
import { Router, type RequestHandler } from "express";
import type { AddGitProvidersRequest, MessageResponse, Settings } from "@acs-toolkit/schema";
import { HttpError } from "../http/errors.js";
import type { RequestValidators } from "../validation/request-validators.js";
import type { SecretCipher } from "../secrets.js";
import { readStoredSettings, settingsView, storeGitProviders, storeSettings, type StoredSettings } from "../settings.js";
import type { EventStore } from "../store/types.js";

interface SettingsRoutesDeps {
  store: EventStore;
  cipher: SecretCipher;
  validators: RequestValidators;
  auth: RequestHandler;
  json: RequestHandler;
}

const DOCUMENT = "settings";

export function settingsRoutes({ store, cipher, validators, auth, json }: SettingsRoutesDeps): Router {
  const router = Router();
  const save = (settings: StoredSettings) => store.putDocument(DOCUMENT, JSON.stringify(settings));
  const load = async (): Promise<StoredSettings | undefined> => {
    const text = await store.getDocument(DOCUMENT);
    if (text === undefined) return undefined;
    const { settings, upgraded } = readStoredSettings(text, cipher);
    if (upgraded) await save(settings); // clear values of an older version leave the stored row at once
    return settings;
  };
  // Every read-modify-write of the document, one after the other: two requests that both read
  // before either writes would lose one's change.
  let writing: Promise<unknown> = Promise.resolve();
  const serially = <T>(change: () => Promise<T>): Promise<T> => {
    const next = writing.then(change, change);
    writing = next.catch(() => {});
    return next;
  };

  router.get("/api/settings", auth, async (_req, res) => {
    const stored = await serially(load);
    if (!stored) throw new HttpError(404, "Settings not found");
    res.json(settingsView(stored));
  });

  router.post("/api/settings", auth, json, async (req, res) => {
    validators.body("storeSettings", req.body);
    await serially(async () => save(storeSettings(await load(), req.body as Settings, cipher)));
    res.json({ message: "Settings stored" } satisfies MessageResponse);
  });

  router.post("/api/add-git-providers", auth, json, async (req, res) => {
    validators.body("addGitProviders", req.body);
    await serially(async () => save(storeGitProviders(await load(), req.body as AddGitProvidersRequest, cipher)));
    res.json({ message: "Git providers stored" } satisfies MessageResponse);
  });

  return router;
}
