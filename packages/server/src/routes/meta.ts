/** /health, /openapi.json and /docs (Swagger UI served from the swagger-ui-dist package, no CDN). */
import { createRequire } from "node:module";
import path from "node:path";
import express, { Router } from "express";
import type { Health } from "@acs-toolkit/schema";
import type { EventStore } from "../store/types.js";
import type { WriteHealth } from "../write-health.js";

const require = createRequire(import.meta.url);

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Agent Conversation Service — API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// A file, not an inline script, so the page works under a CSP without 'unsafe-inline'.
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });\n`;

export interface MetaRoutesDeps {
  store: EventStore;
  writeHealth: WriteHealth;
  openapi: Record<string, unknown>;
  version: string;
}

export function metaRoutes({ store, writeHealth, openapi, version }: MetaRoutesDeps): Router {
  const router = Router();
  const assets = path.dirname(require.resolve("swagger-ui-dist/package.json"));
  const document = JSON.stringify({ ...openapi, servers: [{ url: "/", description: "This server" }] });

  router.get("/health", (_req, res) => {
    const ok = (() => {
      try {
        return store.ping();
      } catch {
        return false;
      }
    })();
    // Reads may work while writes fail (a full disk): either makes the server unavailable.
    const failure = writeHealth.check();
    const body: Health = {
      status: ok && !failure ? "ok" : "unavailable",
      store: store.kind,
      version,
      writes: failure ? "failing" : "ok",
      ...(failure && { detail: `writes fail since ${failure.since}: the disk is full (${failure.cause})` }),
      ...(!ok && { detail: "the store does not answer" }),
    };
    res.status(body.status === "ok" ? 200 : 503).json(body);
  });
  router.get("/openapi.json", (_req, res) => void res.type("application/json").send(document));
  router.get("/docs", (_req, res) => void res.type("html").send(DOCS_PAGE));
  router.get("/docs/init.js", (_req, res) => void res.type("text/javascript").send(DOCS_INIT));
  router.use("/docs/assets", express.static(assets, { index: false, maxAge: "1h" }));
  return router;
}
