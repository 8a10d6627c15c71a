import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";

const here = path.dirname(fileURLToPath(import.meta.url));

describe("README", () => {
  it("shows test/readme-example.ts as its example", () => {
    const readme = readFileSync(path.join(here, "../README.md"), "utf8");
    const block = /## Use\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(readFileSync(path.join(here, "readme-example.ts"), "utf8"));
  });

  it("the example runs and prints what its comments say", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const { result, trajectory } = await import("./readme-example.js");
    expect(log.mock.calls).toEqual([
      [false],
      [['/action/tab_id: must be exactly 4 characters, got "abcde"']],
      ['line 2: /id: must be a UUID or ULID, got "not-an-id"'],
    ]);
    expect(result.ok).toBe(false);
    expect(trajectory.count).toBe(2);
    log.mockRestore();
  });
});
