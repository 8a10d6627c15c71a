/** /health's probe of the file I/O thread pool, on a fake clock: a probe that does not answer within its bound is "stuck". */
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { FileIoHealth } from "../../src/file-io-health.js";
import { startTestServer } from "../support/harness.js";

beforeEach(() => void vi.useFakeTimers({ now: new Date("2026-01-01T00:00:00Z") }));
afterEach(() => void vi.useRealTimers());

it("answers ok while the probe answers, stuck once it has not within the bound, ok again when it does", async () => {
  let answer: (() => void) | undefined;
  const probe = vi.fn((): Promise<void> => (answer ? Promise.resolve() : new Promise<void>((resolve) => (answer = resolve))));
  const health = new FileIoHealth({ dir: "/data", boundMs: 2_000, probe });

  // The pool is held: the probe does not answer.
  const first = health.check();
  await vi.advanceTimersByTimeAsync(2_000);
  expect(await first).toEqual({ since: "2026-01-01T00:00:00.000Z" });
  // A second check waits on the same probe instead of queueing another on a held pool.
  const second = health.check();
  await vi.advanceTimersByTimeAsync(0);
  expect(await second).toEqual({ since: "2026-01-01T00:00:00.000Z" });
  expect(probe).toHaveBeenCalledTimes(1);

  // The pool frees itself: the probe answers, and the next check is ok.
  answer!();
  await vi.advanceTimersByTimeAsync(0);
  expect(await health.check()).toBeUndefined();
  expect(probe).toHaveBeenCalledTimes(2);
});

it("counts a failed probe as an answer (the pool works; the directory is another matter)", async () => {
  const health = new FileIoHealth({ dir: "/missing", probe: () => Promise.reject(new Error("ENOENT")) });
  expect(await health.check()).toBeUndefined();
});

it("probes the real directory with stat by default", async () => {
  vi.useRealTimers();
  expect(await new FileIoHealth({ dir: process.cwd() }).check()).toBeUndefined();
});

it("makes /health answer 503 with file_io stuck while the probe does not answer", async () => {
  vi.useRealTimers();
  const probe = () => new Promise<void>(() => {});
  const t = await startTestServer([], {}, undefined, { fileIoHealth: new FileIoHealth({ dir: ".", boundMs: 50, probe }) });
  try {
    const stuck = await t.call("GET", "/health");
    expect(stuck.status).toBe(503);
    expect(stuck.body).toMatchObject({ status: "unavailable", writes: "ok", file_io: "stuck", detail: expect.stringMatching(/file I\/O does not answer since .*thread pool/) });
  } finally {
    await t.close();
  }
});
