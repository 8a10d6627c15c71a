/**
 * A Vite app that starts MSW's worker with `@acs-toolkit/mock/msw-browser` (the built package, as an
 * app installs it) builds for the browser with no Node built-in and no native module reaching the
 * bundle; so does one on the server's core, `@acs-toolkit/server/core`, which the browser handlers
 * are built on; the Node entry `@acs-toolkit/mock/msw` does not (Vite fails on
 * a Node built-in pulled into the chunk), which shows the check sees them.
 */
import { builtinModules } from "node:module";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Rollup } from "vite";
import { describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const NODE_ONLY = new Set([...builtinModules, "better-sqlite3", "pg", "express", "pino", "ws"]);

/** The app's main module: MSW's worker on the mock's handlers from `specifier`. */
const mockApp = (specifier: string) => `import { setupWorker } from "msw/browser";
import * as mock from ${JSON.stringify(specifier)};
const handlers = await (mock as any).createBrowserMockHandlers?.({ scenarios: ["happy"] }) ?? await (mock as any).createMockHandlers({ scenarios: ["happy"] });
await setupWorker(...handlers.handlers).start();
`;

/** Builds a one-page app importing `specifier` (resolved to `file`); Node-only imports are recorded. */
async function buildApp(specifier: string, file: string, name: string, main = mockApp(specifier)): Promise<{ nodeImports: string[]; code: string }> {
  // Inside the package, so that msw resolves from its node_modules as in an app.
  const root = path.join(packageDir, "node_modules/.cache", `vite-app-${name}-${process.pid}`);
  mkdirSync(root, { recursive: true });
  try {
    writeFileSync(path.join(root, "index.html"), '<!doctype html><html><body><script type="module" src="./main.ts"></script></body></html>');
    writeFileSync(path.join(root, "main.ts"), main);
    const nodeImports: string[] = [];
    const output = await build({
      root,
      configFile: false,
      logLevel: "silent",
      resolve: { alias: { [specifier]: file } },
      build: { write: false, minify: false, target: "es2022", rollupOptions: { onwarn: () => {} } },
      plugins: [
        {
          name: "no-node",
          enforce: "pre",
          resolveId(id, importer) {
            if (id.startsWith("node:") || NODE_ONLY.has(id)) nodeImports.push(`${id} (from ${path.relative(packageDir, importer ?? "")})`);
            return null;
          },
        },
      ],
    });
    const chunks = (Array.isArray(output) ? output : [output]).flatMap((o) => (o as Rollup.RollupOutput).output).filter((o): o is Rollup.OutputChunk => o.type === "chunk");
    return { nodeImports, code: chunks.map((chunk) => chunk.code).join("\n") };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe("a Vite app on the browser handlers", () => {
  it("builds @acs-toolkit/mock/msw-browser (dist) for the browser without a Node built-in or a native module", async () => {
    const { nodeImports, code } = await buildApp("@acs-toolkit/mock/msw-browser", path.join(packageDir, "dist/msw-browser.js"), "browser");
    expect(nodeImports).toEqual([]);
    expect(code).toContain("/sockets/events/");
    expect(code).not.toContain("__vite-browser-external");
  });

  it("builds @acs-toolkit/server/core (dist) for the browser without a Node built-in, ws or Express", async () => {
    const serverDir = path.dirname(fileURLToPath(import.meta.resolve("@acs-toolkit/server/package.json")));
    const main = `import { ConversationCore, EventBus, LiveSession, recordingRuntime } from "@acs-toolkit/server/core";
import { openMemoryStore } from "@acs-toolkit/server/store";
const store = openMemoryStore();
const bus = new EventBus();
const conversations = new ConversationCore(store, bus, recordingRuntime);
const record = await conversations.create({ initial_user_msg: "Hello" });
const frames: string[] = [];
const transport = { send: (t: string) => frames.push(t), sendEvent: (e: { json: string }) => frames.push(e.json), close: () => {}, bufferedAmount: () => 0 };
new LiveSession(transport, record.id, new URLSearchParams("resend_all=true"), { store, bus, conversations, checkKey: () => false, publicRead: true }).start(undefined);
document.title = JSON.stringify(await conversations.info(record));
`;
    const { nodeImports, code } = await buildApp("@acs-toolkit/server/core", path.join(serverDir, "dist/core.js"), "core", main);
    expect(nodeImports).toEqual([]);
    expect(code).toContain("full_state");
    expect(code).not.toContain("__vite-browser-external");
  });

  it("sees the Node built-ins of the Node entry @acs-toolkit/mock/msw (it is not for a browser)", async () => {
    const built = await buildApp("@acs-toolkit/mock/msw", path.join(packageDir, "dist/msw.js"), "node").catch((error: Error) => ({ nodeImports: [error.message], code: "" }));
    expect(built.nodeImports.length).toBeGreaterThan(0);
  });
});
