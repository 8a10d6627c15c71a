/** The README's example of `@acs-toolkit/server/api` is this folder's readme-api-example.ts, and it prints what its comment says. */
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";

describe("README: the API without a transport", () => {
  it("shows test/api/readme-api-example.ts", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const block = /### The API without a transport\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(readFileSync(new URL("./readme-api-example.ts", import.meta.url), "utf8"));
  });

  it("runs: a path parameter that is not a UUID is the 422 naming it", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    await import("./readme-api-example.js");
    expect(log.mock.calls).toEqual([[422, '{"detail":[{"loc":["path","conversation_id"],"msg":"does not satisfy the \\"format\\" rule","type":"value_error"}]}']]);
    log.mockRestore();
  });
});
