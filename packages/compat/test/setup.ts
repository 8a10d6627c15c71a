/**
 * @openhands/typescript-client picks its WebSocket when it is first imported: the page's
 * `window.WebSocket`, else `require("ws")`. It ships as ES modules, where `require` does not exist,
 * so in Node it finds none and its live socket never opens (a bug of the client, not of the servers
 * under test). CommonJS consumers and bundlers give it a `require`; so do we, for its import only,
 * resolving `ws` from the client's own dependencies.
 */
import { createRequire } from "node:module";

const scope = globalThis as { require?: NodeJS.Require };
scope.require = createRequire(createRequire(import.meta.url).resolve("@openhands/typescript-client"));
try {
  await import("@openhands/typescript-client");
} finally {
  delete scope.require;
}
