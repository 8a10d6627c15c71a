import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";

const here = path.dirname(fileURLToPath(import.meta.url));

describe("README", () => {
  it("shows test/readme-example.ts as its example", () => {
    const readme = readFileSync(path.join(here, "../README.md"), "utf8");
    const block = /## From code\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(readFileSync(path.join(here, "readme-example.ts"), "utf8"));
  });

  it("the example runs and prints the replayed event", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const { conversation_id } = await import("./readme-example.js");
    expect(conversation_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(log.mock.calls).toEqual([[{ items: [{ id: "5df490d1-98e8-4dea-9ae7-7f36c59f8ed5", timestamp: "2026-02-05T11:24:45.29", source: "user", kind: "PauseEvent" }], next_page_id: null }]]);
    log.mockRestore();
  });
});
