/**
 * The README's ```ts blocks are the files of test/examples/, and each runs against the reference
 * server and prints exactly what its comments say (`console.log(x); // output`, or the comment on the
 * line after). They are type-checked by readme.test-d.ts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { format } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { KEY, startReferenceServer, type ReferenceServer } from "./support/server.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const run: Record<string, () => Promise<unknown>> = {
  "quick-start.ts": () => import("./examples/quick-start.js"),
  "errors.ts": () => import("./examples/errors.js"),
  "uploads.ts": () => import("./examples/uploads.js"),
  "live.ts": () => import("./examples/live.js"),
  "bulk-ingest.ts": () => import("./examples/bulk-ingest.js"),
};
const EXAMPLES = Object.keys(run);
const source = (name: string) => readFileSync(path.join(here, "examples", name), "utf8");

/** What each console.log of an example says it prints, in order. */
function promisedOutput(code: string): string[] {
  const lines = code.split("\n");
  const expected: string[] = [];
  lines.forEach((line, index) => {
    if (!line.includes("console.log(")) return;
    const trailing = /\);\s*\/\/ (.*)$/.exec(line)?.[1] ?? /\)\);?\s*\/\/ (.*)$/.exec(line)?.[1];
    const next = /^\s*\/\/ (.*)$/.exec(lines[index + 1] ?? "")?.[1];
    const comment = trailing ?? next;
    if (comment === undefined) throw new Error(`example line ${index + 1} logs without saying what: ${line}`);
    expected.push(comment);
  });
  return expected;
}

let ref: ReferenceServer;

beforeAll(async () => {
  ref = await startReferenceServer();
  process.env.ACS_URL = ref.url;
  process.env.SESSION_API_KEY = KEY;
});

afterAll(async () => {
  delete process.env.ACS_URL;
  delete process.env.SESSION_API_KEY;
  await ref?.close();
});

describe("README", () => {
  it("shows test/examples/*.ts as its ```ts blocks, in order", () => {
    const readme = readFileSync(path.join(here, "../README.md"), "utf8");
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
    expect(blocks).toEqual(EXAMPLES.map(source));
  });

  it.each(EXAMPLES)("%s runs and prints what its comments say", async (name) => {
    const expected = promisedOutput(source(name));
    expect(expected.length).toBeGreaterThan(1);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      await run[name]!();
      expect(log.mock.calls.map((args) => format(...args))).toEqual(expected);
    } finally {
      log.mockRestore();
    }
  });
});
