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

  it("shows test/readme-browser-example.ts as its browser example (run in Chromium by msw-browser.test.ts)", () => {
    const readme = readFileSync(path.join(here, "../README.md"), "utf8");
    const block = /## In a browser \(MSW's worker\)\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(readFileSync(path.join(here, "readme-browser-example.ts"), "utf8"));
  });

  it("the example runs and prints what its comments say", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const { conversationId } = await import("./readme-example.js");
    expect(conversationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(log.mock.calls).toEqual([[["SystemPromptEvent", "MessageEvent"]], [500, { detail: "Internal Server Error" }]]);
    log.mockRestore();
  });
});
