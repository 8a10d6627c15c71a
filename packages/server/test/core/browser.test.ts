/**
 * `@acs-toolkit/server/core` (the conversation service, the bus and the live channel's protocol)
 * runs in a browser: its import graph, bundled by esbuild for the browser platform from the source
 * and from the built package, reaches no Node built-in, no native module, no `ws` and no Express,
 * and none of the server's Node code; the bundle runs in a VM context with only what a browser's
 * worker has: it creates a conversation, records events in order and follows them live.
 */
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { bundleForBrowser } from "@acs-toolkit/test-kit/browser-bundle";

const packageDir = fileURLToPath(new URL("../..", import.meta.url));
const entries = {
  source: { stdin: { contents: 'export * from "./src/core/index.ts"; export { openMemoryStore } from "./src/store/index.ts";', resolveDir: packageDir, loader: "ts" as const } },
  // The package's own name: its `exports` map, dist/ (built before the tests run).
  "built package": { stdin: { contents: 'export * from "@acs-toolkit/server/core"; export { openMemoryStore } from "@acs-toolkit/server/store";', resolveDir: packageDir } },
};

describe("@acs-toolkit/server/core in a browser", () => {
  it.each(Object.entries(entries))("bundles (%s) for the browser platform without a Node built-in, and runs where only browser globals exist", async (_name, input) => {
    const { nodeImports, inputs, code } = await bundleForBrowser(input, "core");
    expect(nodeImports).toEqual([]);
    // (Paths relative to this package.) Of the server: the core's and the store's modules, and the JSON depth bound.
    expect(inputs.filter((file) => /^src\//.test(file) && !/^src\/(core\/[a-z-]+|store\/(index|memory|types|prepare|time|paging-check)|json\/depth)\.ts$/.test(file))).toEqual([]);
    expect(inputs.filter((file) => /^dist\/(index|cli|read-worker|import-worker|import-writer)\.js$/.test(file))).toEqual([]);

    // Only what a Web Worker has: no require, process, Buffer, setImmediate.
    const sandbox: Record<string, unknown> = { TextEncoder, TextDecoder, console, queueMicrotask, URL, URLSearchParams, crypto, setTimeout, clearTimeout };
    runInNewContext(`${code}; globalThis.core = core;`, sandbox);
    const core = sandbox.core as typeof import("../../src/core/index.js") & typeof import("../../src/store/index.js");
    const store = core.openMemoryStore();
    const bus = new core.EventBus();
    const conversations = new core.ConversationCore(store, bus, core.recordingRuntime);
    const record = await conversations.create({ initial_user_msg: "Hello" });
    expect(record).toMatchObject({ status: "STOPPED", eventCount: 1 });

    // A live session on an in-memory transport: full_state, the stored history (resend_all), then live events.
    const frames: string[] = [];
    const session = new core.LiveSession(
      { send: (text) => frames.push(text), sendEvent: (event) => frames.push(event.json), close: (code, reason) => frames.push(`close ${code} ${reason}`), bufferedAmount: () => 0 },
      record.id,
      new URLSearchParams("resend_all=true"),
      { store, bus, conversations, checkKey: (key) => key === "k", publicRead: true },
    );
    session.start(undefined);
    await waitFor(() => session.phase === "live");
    const pause = { kind: "PauseEvent", id: "00000000-0000-4000-8000-000000000001", timestamp: "2026-02-05T11:00:00", source: "user" } as const;
    await conversations.record(record.id, [pause]);
    session.receive("{not json");
    await waitFor(() => frames.length >= 4);
    const parsed = frames.map((frame) => JSON.parse(frame) as { kind: string; key?: string; code?: string });
    expect(parsed.map((frame) => frame.key ?? frame.code ?? frame.kind)).toEqual(["full_state", "MessageEvent", "PauseEvent", "JSONDecodeError"]);
    expect(await conversations.info(record)).toMatchObject({ conversation_id: record.id, execution_status: "idle", event_count: 1 });
    session.close(core.LIVE_CLOSE.goingAway, "bye");
    expect(frames.at(-1)).toBe(`close ${core.LIVE_CLOSE.goingAway} bye`);
  });
});

describe("the browser bundle check", () => {
  it("sees the Node built-ins, ws and Express of the server's main entry (it is not for a browser)", async () => {
    const { nodeImports } = await bundleForBrowser({ entryPoints: [fileURLToPath(new URL("../../src/index.ts", import.meta.url))] }, "server");
    expect(nodeImports.map((line) => line.split(" ")[0])).toEqual(expect.arrayContaining(["node:crypto", "ws", "express"]));
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}
