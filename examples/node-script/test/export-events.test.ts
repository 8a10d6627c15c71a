/**
 * export-events.ts run as a user runs it (tsx, a separate process) against acs-mock: the stored
 * events, then the live ones, each once and in order; a bad id and an unreachable service fail
 * with a sentence and exit code 1.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startMock, type RunningMock } from "@acs-toolkit/mock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const tsx = path.resolve(root, "../../node_modules/.bin/tsx");
const exportEvents = (...args: string[]) => run(tsx, ["export-events.ts", ...args], { cwd: root, env: { ...process.env, ACS_URL: mock.url } });

let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ port: 0, speed: 100, scenarios: ["happy"], logLevel: "silent" });
});
afterAll(() => mock?.close());

describe("export-events.ts", () => {
  it("writes the stored events, then follows the live ones, as JSONL", async () => {
    const scenario = mock.world.scenarios[0]!;
    const { stdout, stderr } = await exportEvents(scenario.conversationId, "--follow", "4");
    const ids = stdout.trim().split("\n").map((line) => (JSON.parse(line) as { id: string }).id);
    expect(ids).toEqual(scenario.events.map((event) => event.id));
    expect(stderr).toBe(`exported ${scenario.preload} stored events\nfollowed for 4 s: ${scenario.events.length - scenario.preload} live events\nthe conversation has ${scenario.events.length} events\n`);
  });

  it("says what went wrong, with exit code 1", async () => {
    const missing = await exportEvents("3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9").catch((error: { code: number; stderr: string }) => error);
    expect(missing).toMatchObject({ code: 1, stderr: "the service answered 404: searchEvents: 404 Conversation not found: 3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9\n" });
    const nowhere = await run(tsx, ["export-events.ts", "x", "--url", "http://127.0.0.1:9"], { cwd: root }).catch((error: { code: number; stderr: string }) => error);
    expect(nowhere).toMatchObject({ code: 1, stderr: expect.stringMatching(/^no answer: searchEvents: request failed: fetch failed/) });
  });
});
