/**
 * The mock's world needs no native SQLite build: its events live in the server's MemoryEventStore
 * (`@acs-toolkit/server/store`, plain TypeScript), which the browser entry uses too. The built mock
 * starts and answers in a Node process where no native addon can load (better-sqlite3 loads its
 * build only when a database is opened).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MemoryEventStore } from "@acs-toolkit/server/store";
import { describe, expect, it } from "vitest";
import { createWorld } from "../src/world.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

describe("the mock's world", () => {
  it("keeps its events in the server's MemoryEventStore, not in SQLite", async () => {
    const world = createWorld({ scenarios: ["happy"], speed: "instant" });
    try {
      await world.ready;
      expect(world.store).toBeInstanceOf(MemoryEventStore);
      expect(world.store.kind).toBe("memory");
      const page = await world.store.search(world.scenarios[0]!.conversationId, { order: "asc", limit: 100 });
      expect(page.items.map((event) => event.id)).toEqual(world.scenarios[0]!.events.map((event) => event.id));
    } finally {
      world.close();
    }
  });

  it("runs (the built package) where no native addon can load", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "acs-mock-no-native-"));
    try {
      const preload = path.join(dir, "no-native-addons.cjs");
      writeFileSync(preload, 'require("node:module")._extensions[".node"] = (_module, file) => { throw new Error("no native addon may load: " + file); };\n');
      const script = `
        const { startMock } = await import("@acs-toolkit/mock");
        const mock = await startMock({ port: 0, speed: "instant", scenarios: ["happy"], logLevel: "silent" });
        const id = mock.world.scenarios[0].conversationId;
        const count = await (await fetch(mock.url + "/api/conversations/" + id + "/events/count")).json();
        console.log(JSON.stringify({ count, store: mock.world.store.kind }));
        await mock.close();`;
      const output = execFileSync(process.execPath, ["--require", preload, "--input-type=module", "-e", script], { cwd: packageDir, encoding: "utf8", timeout: 60_000 });
      expect(JSON.parse(output.trim())).toEqual({ count: 16, store: "memory" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
