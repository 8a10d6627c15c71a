/**
 * The API reference: /docs (Swagger UI, whose two files the Node host serves from dist/docs/) and
 * /docs/live (the live channel, rendered from the AsyncAPI document), with their small files.
 * Nothing is loaded from another host.
 */
import { ASYNCAPI_PAGE_CSS, HOST_PLACEHOLDER, renderAsyncApiPage } from "../docs/asyncapi-page.js";
import { textReply } from "./reply.js";
import type { ApiReply } from "./types.js";

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

/** GET /docs. */
export const referencePage = `<!doctype html>
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

/** Only a plain host[:port] goes into the page; anything else is shown as the placeholder it replaces. */
const safeHost = (host: string | undefined) => (host && /^[\w.-]+(?::\d+)?$|^\[[\d:a-f.]+\](?::\d+)?$/i.test(host) ? host : "HOST");

/** The reference's files besides /docs and Swagger UI's assets, by path: each answers from the request's Host. */
export function docsFiles(asyncapi: Record<string, unknown>): ReadonlyMap<string, (host: string | undefined) => ApiReply> {
  // Rendered on first use (a few ms for the whole document), then kept.
  let livePage: string | undefined;
  return new Map<string, (host: string | undefined) => ApiReply>([
    ["/docs/init.js", () => textReply(DOCS_INIT, "text/javascript")],
    ["/docs/favicon.svg", () => textReply(FAVICON, "image/svg+xml")],
    ["/docs/reference.css", () => textReply(NAV_CSS + ASYNCAPI_PAGE_CSS, "text/css")],
    [
      "/docs/live",
      (host) => {
        livePage ??= renderAsyncApiPage(asyncapi, { stylesheet: "/docs/reference.css", header: navigation("/docs/live") });
        return textReply(livePage.replaceAll(HOST_PLACEHOLDER, safeHost(host)), "text/html");
      },
    ],
  ]);
}
