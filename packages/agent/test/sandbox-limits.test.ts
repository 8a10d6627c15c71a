import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSandboxCgroups } from "../src/index.js";
import { directorySize, watchDirectoryQuota, type DirectorySize } from "../src/sandbox/directory-quota.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "acs-limits-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A `/proc/self` with the given cgroup lines and a mount table whose cgroup file systems are at `mountPoint`. */
function procSelf(cgroup: string, mounts: string): string {
  const self = path.join(dir, "proc-self");
  mkdirSync(self);
  writeFileSync(path.join(self, "cgroup"), cgroup);
  writeFileSync(path.join(self, "mountinfo"), mounts);
  return self;
}

describe("openSandboxCgroups", () => {
  it("makes groups below the server's v1 memory group, with the limit and swap bounded", () => {
    const hierarchy = path.join(dir, "memory");
    mkdirSync(path.join(hierarchy, "jobs", "42"), { recursive: true });
    const self = procSelf(
      "5:devices:/\n4:memory:/jobs/42\n0::/\n",
      `30 22 0:27 / ${dir} rw - tmpfs tmpfs rw\n34 30 0:31 / ${hierarchy} rw,relatime - cgroup cgroup rw,memory\n40 30 0:37 / ${dir}/unified rw - cgroup2 cgroup2 rw\n`,
    );
    const opened = openSandboxCgroups({ procSelf: self });
    expect(opened.problem).toBeUndefined();
    const groups = opened.cgroups!;
    expect(groups.version).toBe(1);
    expect(path.dirname(groups.dir)).toBe(path.join(hierarchy, "jobs", "42"));
    expect(path.basename(groups.dir)).toMatch(new RegExp(`^acs-sandbox-${process.pid}-\\d+$`));
    writeFileSync(path.join(groups.dir, "probe"), ""); // stands for the kernel's files
    const group = groups.create(256 * 1024 * 1024);
    const groupDir = path.dirname(group.procsFiles[0]!);
    expect(path.dirname(groupDir)).toBe(groups.dir);
    expect(readFileSync(path.join(groupDir, "memory.limit_in_bytes"), "utf8")).toBe(String(256 * 1024 * 1024));
    expect(group.limitBytes).toBe(256 * 1024 * 1024);
    expect(group.oomKills()).toBe(0);
    writeFileSync(path.join(groupDir, "memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
    expect(group.oomKills()).toBe(3);
  });

  it("in cgroup v2 enables the memory controller for the groups and sets memory.max", () => {
    const unified = path.join(dir, "unified");
    const mine = path.join(unified, "system.slice", "acs.service");
    mkdirSync(mine, { recursive: true });
    writeFileSync(path.join(mine, "cgroup.controllers"), "cpu io memory pids\n");
    writeFileSync(path.join(mine, "cgroup.subtree_control"), "");
    const self = procSelf("0::/system.slice/acs.service\n", `40 30 0:37 / ${unified} rw - cgroup2 cgroup2 rw\n`);
    const groups = openSandboxCgroups({ procSelf: self }).cgroups!;
    expect(groups.version).toBe(2);
    // cpu too, where the server's group has it: one weight for every sandbox of this server.
    expect(readFileSync(path.join(mine, "cgroup.subtree_control"), "utf8")).toBe("+memory +cpu");
    expect(groups.cpu).toEqual({ dir: groups.dir, weight: 11 });
    expect(readFileSync(path.join(groups.dir, "cpu.weight"), "utf8")).toBe("11");
    expect(readFileSync(path.join(groups.dir, "cgroup.subtree_control"), "utf8")).toBe("+memory +cpu");
    const group = groups.create(1 << 30);
    expect(group.procsFiles).toHaveLength(1); // one hierarchy: one group holds both
    const groupDir = path.dirname(group.procsFiles[0]!);
    expect(readFileSync(path.join(groupDir, "memory.max"), "utf8")).toBe(String(1 << 30));
    writeFileSync(path.join(groupDir, "memory.events"), "low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n");
    expect(group.oomKills()).toBe(2);
  });

  it("in cgroup v1 makes a CPU group of weight 110 below the server's cpu group, one group per sandbox below it", () => {
    const memory = path.join(dir, "memory");
    const cpu = path.join(dir, "cpu,cpuacct");
    mkdirSync(path.join(memory, "jobs", "42"), { recursive: true });
    mkdirSync(path.join(cpu, "user.slice"), { recursive: true });
    const self = procSelf(
      "5:cpu,cpuacct:/user.slice\n4:memory:/jobs/42\n",
      `34 30 0:31 / ${memory} rw - cgroup cgroup rw,memory\n35 30 0:32 / ${cpu} rw - cgroup cgroup rw,cpu,cpuacct\n`,
    );
    const groups = openSandboxCgroups({ procSelf: self }).cgroups!;
    const cpuDir = path.join(cpu, "user.slice", path.basename(groups.dir));
    expect(groups.cpu).toEqual({ dir: cpuDir, weight: 110 });
    expect(readFileSync(path.join(cpuDir, "cpu.shares"), "utf8")).toBe("110");
    const group = groups.create(1 << 30);
    expect(group.procsFiles).toEqual([path.join(groups.dir, path.basename(path.dirname(group.procsFiles[0]!)), "cgroup.procs"), path.join(cpuDir, path.basename(path.dirname(group.procsFiles[0]!)), "cgroup.procs")]);
    expect(existsSync(path.dirname(group.procsFiles[1]!))).toBe(true);
    // Opened again in this process: directories of its own, so that the removal of the first never meets them.
    groups.close();
    const again = openSandboxCgroups({ procSelf: self }).cgroups!;
    expect(again.dir).not.toBe(groups.dir);
    expect(again.cpu).toMatchObject({ weight: 110 });
  });

  it("makes the server's directories again, with their settings, for a group asked for after they were removed", () => {
    const memory = path.join(dir, "memory");
    const cpu = path.join(dir, "cpu");
    mkdirSync(memory);
    mkdirSync(cpu);
    const groups = openSandboxCgroups({ procSelf: procSelf("2:cpu:/\n4:memory:/\n", `34 30 0:31 / ${memory} rw - cgroup cgroup rw,memory\n35 30 0:32 / ${cpu} rw - cgroup cgroup rw,cpu\n`) }).cgroups!;
    const cpuDir = (groups.cpu as { dir: string }).dir;
    rmSync(groups.dir, { recursive: true });
    rmSync(cpuDir, { recursive: true });
    const group = groups.create(1 << 20);
    expect(readFileSync(path.join(cpuDir, "cpu.shares"), "utf8")).toBe("110");
    expect(readFileSync(path.join(path.dirname(group.procsFiles[0]!), "memory.limit_in_bytes"), "utf8")).toBe(String(1 << 20));
  });

  it.each([
    ["no cpu hierarchy", "4:memory:/\n", "", /the cpu cgroup \(v1\) is not there/],
    ["an unmounted cpu hierarchy", "4:memory:/\n3:cpu:/\n", "", /the cpu cgroup \(v1\) is not mounted/],
  ])("in cgroup v1 with %s, bounds memory and says why CPU is not grouped", (_, cgroup, cpuMount, problem) => {
    const memory = path.join(dir, "memory");
    mkdirSync(memory);
    const groups = openSandboxCgroups({ procSelf: procSelf(cgroup, `34 30 0:31 / ${memory} rw - cgroup cgroup rw,memory\n${cpuMount}`) }).cgroups!;
    expect(groups.cpu.problem).toMatch(problem);
    expect(groups.create(1 << 30).procsFiles).toHaveLength(1);
  });

  it("in cgroup v2 without the cpu controller, bounds memory and says why CPU is not grouped", () => {
    const parent = path.join(dir, "delegated");
    mkdirSync(parent);
    writeFileSync(path.join(parent, "cgroup.controllers"), "memory pids\n");
    const groups = openSandboxCgroups({ cgroupDir: parent }).cgroups!;
    expect(readFileSync(path.join(parent, "cgroup.subtree_control"), "utf8")).toBe("+memory");
    expect(groups.cpu.problem).toMatch(/the cpu controller is not available in .*delegated \(cgroup v2\)/);
  });

  it.each([
    ["no memory hierarchy is mounted", "4:memory:/a\n", "", /the memory cgroup \(v1\) is not mounted/],
    ["neither version is there", "1:cpu:/\n", "", /no memory cgroup/],
    ["v2 without the memory controller", "0::/\n", "40 30 0:37 / UNIFIED rw - cgroup2 cgroup2 rw\n", /the memory controller is not available in .*\(cgroup v2\)/],
  ])("says why when %s", (_, cgroup, mounts, problem) => {
    mkdirSync(path.join(dir, "unified"));
    writeFileSync(path.join(dir, "unified", "cgroup.controllers"), "cpu pids\n");
    const opened = openSandboxCgroups({ procSelf: procSelf(cgroup, mounts.replace("UNIFIED", path.join(dir, "unified"))) });
    expect(opened.cgroups).toBeUndefined();
    expect(opened.problem).toMatch(problem);
  });

  it("says why when the directory cannot be written", () => {
    const opened = openSandboxCgroups({ cgroupDir: path.join(dir, "missing") });
    expect(opened.problem).toMatch(/^cannot make memory groups below .*missing \(cgroup v2\): enabling the memory controller/);
  });

  it("removes what a server that is gone left, and keeps its own", () => {
    const parent = path.join(dir, "delegated");
    mkdirSync(path.join(parent, "acs-sandbox-999999999", "s1"), { recursive: true });
    writeFileSync(path.join(parent, "cgroup.subtree_control"), "memory");
    const groups = openSandboxCgroups({ cgroupDir: parent }).cgroups!;
    expect(existsSync(path.join(parent, "acs-sandbox-999999999"))).toBe(false);
    expect(existsSync(groups.dir)).toBe(true);
  });
});

describe("directorySize", () => {
  it("counts the blocks of files and folders, never what a link points to", async () => {
    writeFileSync(path.join(dir, "a"), Buffer.alloc(100_000, 1));
    mkdirSync(path.join(dir, "sub"));
    writeFileSync(path.join(dir, "sub", "b"), Buffer.alloc(50_000, 1));
    const outside = mkdtempSync(path.join(tmpdir(), "acs-outside-"));
    try {
      writeFileSync(path.join(outside, "big"), Buffer.alloc(5_000_000, 1));
      symlinkSync(outside, path.join(dir, "link-to-folder"));
      symlinkSync(path.join(outside, "big"), path.join(dir, "link-to-file"));
      const size = await directorySize(dir);
      expect(size.entries).toBe(5);
      expect(size.complete).toBe(true);
      expect(size.bytes).toBeGreaterThanOrEqual(150_000);
      expect(size.bytes).toBeLessThan(1_000_000);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("is empty for a missing directory, and incomplete past maxEntries or 256 levels", async () => {
    expect(await directorySize(path.join(dir, "missing"))).toEqual({ bytes: 0, entries: 0, complete: true });
    for (let index = 0; index < 20; index++) writeFileSync(path.join(dir, `f${index}`), "x");
    expect(await directorySize(dir, 10)).toMatchObject({ entries: 10, complete: false });
    let deep = path.join(dir, "d");
    for (let level = 0; level < 260; level++, deep = path.join(deep, "d")) mkdirSync(deep, { recursive: true });
    expect((await directorySize(path.join(dir, "d"))).complete).toBe(false);
  });
});

describe("watchDirectoryQuota", () => {
  it("allows what was there at the start and reports growth past it", async () => {
    writeFileSync(path.join(dir, "before"), Buffer.alloc(2_000_000, 1));
    const over = new Promise<{ size: DirectorySize; allowed: number }>((resolve) => {
      watchDirectoryQuota({
        dir,
        limitBytes: 1_000_000,
        intervalMs: 5,
        onOver: (size, allowed) => resolve({ size, allowed }),
        // The watch saw 2 MB and went on: now it grows.
        onMeasured: () => writeFileSync(path.join(dir, "after"), Buffer.alloc(500_000, 1)),
      });
    });
    const { size, allowed } = await over;
    expect(allowed).toBeGreaterThanOrEqual(2_000_000);
    expect(size.bytes).toBeGreaterThan(allowed);
  });

  it("reports a directory past its limit", async () => {
    writeFileSync(path.join(dir, "small"), "x");
    const over = new Promise<number>((resolve) => {
      watchDirectoryQuota({
        dir,
        limitBytes: 1_000_000,
        intervalMs: 5,
        onOver: (size) => resolve(size.bytes),
        onMeasured: () => writeFileSync(path.join(dir, "big"), Buffer.alloc(1_500_000, 1)),
      });
    });
    expect(await over).toBeGreaterThan(1_000_000);
  });
});
