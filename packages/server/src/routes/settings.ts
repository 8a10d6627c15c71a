/** Account-scoped settings and git-provider tokens, secrets encrypted at rest. */
import { Router, type RequestHandler } from "express";
import type { AddGitProvidersRequest, MessageResponse, Settings } from "@acs-toolkit/schema";
import { HttpError } from "../http/errors.js";
import type { RequestValidators } from "../http/validation.js";
import type { SecretCipher } from "../secrets.js";
import { readStoredSettings, settingsView, storeGitProviders, storeSettings, type StoredSettings } from "../settings.js";
import type { EventStore } from "../store/types.js";

export interface SettingsRoutesDeps {
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
  const load = (): StoredSettings | undefined => {
    const text = store.getDocument(DOCUMENT);
    if (text === undefined) return undefined;
    const { settings, upgraded } = readStoredSettings(text, cipher);
    if (upgraded) save(settings); // clear values of an older version leave the stored row at once
    return settings;
  };

  router.get("/api/settings", auth, (_req, res) => {
    const stored = load();
    if (!stored) throw new HttpError(404, "Settings not found");
    res.json(settingsView(stored));
  });

  router.post("/api/settings", auth, json, (req, res) => {
    validators.body("storeSettings", req.body);
    save(storeSettings(load(), req.body as Settings, cipher));
    res.json({ message: "Settings stored" } satisfies MessageResponse);
  });

  router.post("/api/add-git-providers", auth, json, (req, res) => {
    validators.body("addGitProviders", req.body);
    save(storeGitProviders(load(), req.body as AddGitProvidersRequest, cipher));
    res.json({ message: "Git providers stored" } satisfies MessageResponse);
  });

  return router;
}
