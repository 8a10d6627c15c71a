/** The README: its check list is the check table, its usage the CLI's, its example runs. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CHECKS, USAGE } from "../src/index.js";
import { replaceCheckList } from "../src/readme.js";
import { KEY, startReference, type ReferenceServer } from "./support/servers.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const readme = readFileSync(path.join(here, "../README.md"), "utf8");

describe("README", () => {
  it("lists every check of the table (regenerate with `pnpm --filter @acs-toolkit/conformance readme`)", () => {
    expect(readme).toBe(replaceCheckList(readme, CHECKS));
  });

  it("shows the CLI's usage", () => {
    expect(/## Usage\n\n```text\n([\s\S]*?)```/.exec(readme)?.[1]).toBe(USAGE);
  });

  describe("the example", () => {
    let reference: ReferenceServer;
    beforeAll(async () => void (reference = await startReference()));
    afterAll(() => reference.close());

    it("is test/readme-example.ts", () => {
      expect(/## From code\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1]).toBe(readFileSync(path.join(here, "readme-example.ts"), "utf8"));
    });

    it("runs against a server and prints the results", async () => {
      vi.stubEnv("ACS_BASE_URL", reference.url);
      vi.stubEnv("SESSION_API_KEY", KEY);
      const written: string[] = [];
      const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (written.push(String(chunk)), true));
      try {
        const { report } = await import("./readme-example.js");
        expect(report.failed).toBe(0);
        expect(report.results.map((r: { id: string }) => r.id)).toEqual(CHECKS.filter((c) => /^(search|limit)\./.test(c.id)).map((c) => c.id));
        expect(written.join("")).toMatch(/\n\d+ checks: \d+ passed, 0 failed, 0 skipped in [\d.]+ s against http:\/\/127\.0\.0\.1:\d+\/\n$/);
        expect(process.exitCode ?? 0).toBe(0);
      } finally {
        write.mockRestore();
        vi.unstubAllEnvs();
      }
    });
  });
});
