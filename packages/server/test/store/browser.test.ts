/**
 * `@acs-toolkit/server/store` (the storage contract and the in-memory store) runs in a browser: its
 * import graph, bundled by esbuild for the browser platform from the source and from the built
 * package (whose chunks tsup shares between entries), reaches no Node built-in, no native module
 * and none of the server's Node code; the bundle runs, in a VM context with only what a browser's
 * worker has, and stores and searches events.
 */
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { bundleForBrowser } from "@acs-toolkit/test-kit/browser-bundle";

const packageDir = fileURLToPath(new URL("../..", import.meta.url));
const entries = {
  source: { entryPoints: [fileURLToPath(new URL("../../src/store/index.ts", import.meta.url))] },
  // The package's own name: its `exports` map, dist/ (built before the tests run).
  "built package": { stdin: { contents: 'export * from "@acs-toolkit/server/store";', resolveDir: packageDir } },
};

describe("@acs-toolkit/server/store in a browser", () => {
  it.each(Object.entries(entries))("bundles (%s) for the browser platform without a Node built-in, and runs where only browser globals exist", async (_name, input) => {
    const { nodeImports, inputs, code } = await bundleForBrowser(input, "store");
    expect(nodeImports).toEqual([]);
    // (Paths relative to this package.) Of the server: the store's modules only, not the Node entries.
    expect(inputs.filter((file) => /^src\//.test(file) && !/^src\/store\/(index|memory|types|prepare|time|paging-check)\.ts$/.test(file))).toEqual([]);
    expect(inputs.filter((file) => /^dist\/(index|cli|read-worker|import-worker|import-writer)\.js$/.test(file))).toEqual([]);

    // Only what a Web Worker has: no require, process, Buffer.
    const sandbox: Record<string, unknown> = { TextEncoder, TextDecoder, console, queueMicrotask, URL };
    runInNewContext(`${code}; globalThis.store = store;`, sandbox);
    const { openMemoryStore } = sandbox.store as typeof import("../../src/store/index.js");
    const store = openMemoryStore();
    const event = { kind: "PauseEvent", id: "p1", timestamp: "2026-02-05T11:00:00", source: "user" } as const;
    await store.createConversation({ id: "00000000-0000-4000-8000-000000000001", status: "RUNNING" }, [{ event, json: JSON.stringify(event) }]);
    const page = await store.searchJson("00000000-0000-4000-8000-000000000001", { order: "asc", limit: 10, kind: "PauseEvent" });
    expect(new TextDecoder().decode(page.json)).toBe(JSON.stringify(event));
  });
});
