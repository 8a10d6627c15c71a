/**
 * /health, /openapi.json, /asyncapi.json and the API reference: /docs (Swagger UI, whose two files
 * the build copies into dist/docs/ from swagger-ui-dist, so that installing the server installs no
 * Swagger UI package and runs no postinstall) and /docs/live (the live channel, rendered from the
 * AsyncAPI document). Nothing is loaded from another host.
 */
import { createRequire } from "node:module";
import path from "node:path";
import express, { Router } from "express";
import type { Health } from "@acs-toolkit/schema";
import { ASYNCAPI_PAGE_CSS, HOST_PLACEHOLDER, renderAsyncApiPage } from "../docs/asyncapi-page.js";
import type { EventStore } from "../store/types.js";
import type { WriteHealth } from "../write-health.js";
import type { FileIoHealth } from "../file-io-health.js";

const require = createRequire(import.meta.url);

/** Links between the two references, at the top of both pages. */
const navigation = (current: string) =>
  `<nav class="docs-nav">${[
    ["/docs", "HTTP API"],
    ["/docs/live", "Live events (WebSocket)"],
    ["/openapi.json", "openapi.json"],
    ["/asyncapi.json", "asyncapi.json"],
  ]
    .map(([href, text]) => `<a href="${href}"${href === current ? ' aria-current="page"' : ""}>${text}</a>`)
    .join("")}</nav>`;

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Agent Conversation Service — API reference</title>
  <link rel="icon" href="/docs/favicon.svg">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="stylesheet" href="/docs/reference.css">
</head>
<body>
  ${navigation("/docs")}
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// A file, not an inline script, so the page works under a CSP without 'unsafe-inline'. No
// validator badge: it would send the document to an online validator.
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true, validatorUrl: null });\n`;

const NAV_CSS = `body{margin:0}
.docs-nav{display:flex;gap:20px;padding:10px 20px;background:#1f2933;font:14px system-ui,sans-serif}
.docs-nav a{color:#e4e7eb;text-decoration:none}.docs-nav a[aria-current]{color:#fff;font-weight:600;border-bottom:2px solid #49cc90}
`;

const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#49cc90"/></svg>`;

/** dist/docs/ of this package (also when the code runs from src/, as in its tests, after a build). */
const docsAssets = () => path.join(path.dirname(require.resolve("@acs-toolkit/server/package.json")), "dist/docs");

/** Only a plain host[:port] goes into the page; anything else is shown as the placeholder it replaces. */
const safeHost = (host: string | undefined) => (host && /^[\w.-]+(?::\d+)?$|^\[[\d:a-f.]+\](?::\d+)?$/i.test(host) ? host : "HOST");

interface MetaRoutesDeps {
  store: EventStore;
  writeHealth: WriteHealth;
  fileIoHealth: FileIoHealth;
  openapi: Record<string, unknown>;
  asyncapi: Record<string, unknown>;
  version: string;
}

export function metaRoutes({ store, writeHealth, fileIoHealth, openapi, asyncapi, version }: MetaRoutesDeps): Router {
  const router = Router();
  // Served without `jsonSchemaDialect`: Swagger UI supports only the default (the OpenAPI base
  // dialect, JSON Schema 2020-12 plus OpenAPI's vocabulary) and shows a warning for any other; the
  // schemas mean the same under it. Prism, which reads the bundled document, needs the explicit one.
  const { jsonSchemaDialect: _dialect, ...served } = openapi;
  const document = JSON.stringify({ ...served, servers: [{ url: "/", description: "This server" }] });
  const asyncapiDocument = JSON.stringify(asyncapi);
  // Rendered on first use (a few ms for the whole document), then kept.
  let livePage: string | undefined;

  router.get("/health", async (_req, res) => {
    const [ok, stuck] = await Promise.all([store.ping().catch(() => false), fileIoHealth.check()]);
    // Reads may work while writes fail (a full disk): either makes the server unavailable.
    const failure = writeHealth.check();
    const body: Health = {
      status: ok && !failure && !stuck ? "ok" : "unavailable",
      store: store.kind,
      version,
      writes: failure ? "failing" : "ok",
      file_io: stuck ? "stuck" : "ok",
      ...(stuck && { detail: `file I/O does not answer since ${stuck.since}: the thread pool that runs file system calls is held (uploads, downloads and agent runs wait)` }),
      ...(failure && { detail: `writes fail since ${failure.since}: the disk is full (${failure.cause})` }),
      ...(!ok && { detail: "the store does not answer" }),
    };
    res.status(body.status === "ok" ? 200 : 503).json(body);
  });
  router.get("/openapi.json", (_req, res) => void res.type("application/json").send(document));
  router.get("/asyncapi.json", (_req, res) => void res.type("application/json").send(asyncapiDocument));
  router.get("/docs", (_req, res) => void res.type("html").send(DOCS_PAGE));
  router.get("/docs/init.js", (_req, res) => void res.type("text/javascript").send(DOCS_INIT));
  router.get("/docs/favicon.svg", (_req, res) => void res.type("image/svg+xml").send(FAVICON));
  router.get("/docs/reference.css", (_req, res) => void res.type("text/css").send(NAV_CSS + ASYNCAPI_PAGE_CSS));
  router.get("/docs/live", (req, res) => {
    livePage ??= renderAsyncApiPage(asyncapi, { stylesheet: "/docs/reference.css", header: navigation("/docs/live") });
    res.type("html").send(livePage.replaceAll(HOST_PLACEHOLDER, safeHost(req.headers.host)));
  });
  router.use("/docs/assets", express.static(docsAssets(), { index: false, maxAge: "1h" }));
  return router;
}
