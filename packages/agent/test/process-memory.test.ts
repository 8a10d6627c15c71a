import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { processTreeMemory, victims, watchProcessMemory } from "../src/sandbox/process-memory.js";

const MiB = 1024 * 1024;
let proc: string;
beforeEach(() => {
  proc = mkdtempSync(path.join(tmpdir(), "acs-proc-"));
});
afterEach(() => rmSync(proc, { recursive: true, force: true }));

/** A process in the fake `/proc`: its resident memory and, per thread, its children. */
function fakeProcess(pid: number, { anonMiB = 0, shmemMiB = 0, fileMiB = 0, threads = { [pid]: [] as number[] } } = {}): void {
  const dir = path.join(proc, String(pid));
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "status"), `Name:\tx\nVmRSS:\t${(anonMiB + shmemMiB + fileMiB) * 1024} kB\nRssAnon:\t${anonMiB * 1024} kB\nRssFile:\t${fileMiB * 1024} kB\nRssShmem:\t${shmemMiB * 1024} kB\n`);
  for (const [tid, children] of Object.entries(threads)) {
    mkdirSync(path.join(dir, "task", tid), { recursive: true });
    writeFileSync(path.join(dir, "task", tid, "children"), children.map((child) => `${child} `).join(""));
  }
}

describe("victims", () => {
  it.each([
    ["under the limit: nobody", [{ pid: 1, bytes: 10 }, { pid: 2, bytes: 50 }], 100, []],
    ["the largest first, as many as it takes", [{ pid: 1, bytes: 10 }, { pid: 2, bytes: 60 }, { pid: 3, bytes: 50 }, { pid: 4, bytes: 40 }], 90, [2, 3]],
    ["the root last, even when it is the largest", [{ pid: 1, bytes: 90 }, { pid: 2, bytes: 30 }], 100, [2]],
    ["the root too when the others are not enough", [{ pid: 1, bytes: 150 }, { pid: 2, bytes: 30 }], 100, [2, 1]],
  ])("%s", (_, tree, limit, expected) => {
    expect(victims(tree, limit, 1)).toEqual(expected);
  });
});

describe("processTreeMemory", () => {
  it("walks the children of every thread, counts anonymous and shared memory, not the page cache", async () => {
    fakeProcess(10, { anonMiB: 1, threads: { 10: [11], 12: [13] } });
    fakeProcess(11, { anonMiB: 5, fileMiB: 500, threads: { 11: [14] } });
    fakeProcess(13, { shmemMiB: 7 });
    fakeProcess(14, { anonMiB: 3 });
    fakeProcess(99, { anonMiB: 1000 }); // not below the root
    const tree = await processTreeMemory(10, proc);
    expect(tree.sort((a, b) => a.pid - b.pid)).toEqual([
      { pid: 10, bytes: 1 * MiB },
      { pid: 11, bytes: 5 * MiB },
      { pid: 13, bytes: 7 * MiB },
      { pid: 14, bytes: 3 * MiB },
    ]);
  });

  it("skips a child that exited meanwhile, and is empty once the root is gone", async () => {
    fakeProcess(10, { anonMiB: 1, threads: { 10: [11, 12] } });
    fakeProcess(12, { anonMiB: 2 });
    expect(await processTreeMemory(10, proc)).toEqual([
      { pid: 10, bytes: MiB },
      { pid: 12, bytes: 2 * MiB },
    ]);
    expect(await processTreeMemory(77, proc)).toEqual([]);
  });
});

describe("watchProcessMemory", () => {
  it("kills the largest processes while the tree is over its limit, and counts them", async () => {
    fakeProcess(10, { anonMiB: 1, threads: { 10: [11, 12, 13] } });
    fakeProcess(11, { anonMiB: 100 });
    fakeProcess(12, { anonMiB: 120 });
    fakeProcess(13, { anonMiB: 90 });
    const killed: number[] = [];
    const reported = new Promise<{ count: number; total: number }>((resolve) => {
      const watch = watchProcessMemory({
        rootPid: 10,
        limitBytes: 256 * MiB,
        intervalMs: 1,
        proc,
        kill: (pid) => killed.push(pid),
        onKill: (count, total) => {
          watch.stop();
          expect(watch.kills).toBe(count);
          resolve({ count, total });
        },
      });
    });
    expect(await reported).toEqual({ count: 1, total: 311 * MiB });
    expect(killed).toEqual([12]);
  });
});
