/**
 * A hostile model against the sandbox, through the reference server (run by these tests as the
 * user CI runs them as: root, as in a container). The scripted LLM asks for what an attacker
 * would: capabilities, remounts, unmasking, links swapped under the file editor, FIFOs and sockets
 * for the server's file I/O, and every resource limit. Each test fails on a server that lets it
 * through.
 */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Event } from "@acs-toolkit/schema";
import type { ScriptedToolCall } from "@acs-toolkit/agent/test-kit";
import { afterEach, describe, expect, it } from "vitest";
import { KEY } from "../support/harness.js";
import { expectGone, startAgentServer, stored, untilProcesses, waitForStatus, type AgentServer } from "./support.js";

let s: AgentServer | undefined;
afterEach(async () => {
  // Forgotten first: a close that fails must not leave the next test a stopped server.
  const server = s;
  s = undefined;
  await server?.close();
});

const root = process.getuid?.() === 0;
const finish = { toolCalls: [{ name: "finish", arguments: { message: "done" } }] };
const terminal = (command: string, timeout?: number): ScriptedToolCall => ({ name: "terminal", arguments: { command, ...(timeout && { timeout }) } });
const editor = (args: Record<string, unknown>): ScriptedToolCall => ({ name: "file_editor", arguments: args });

/** The text of every observation (and agent error) of a conversation, in order, as the model reads it (a terminal's prefix and suffix too). */
function observed(events: readonly Event[]): string[] {
  return events.flatMap((event) => {
    if (event.kind === "ObservationEvent") {
      const { observation } = event;
      const meta = observation.kind === "TerminalObservation" ? observation.metadata : undefined;
      return [`${meta?.prefix ?? ""}${(observation.content ?? []).map((part) => ("text" in part ? part.text : "")).join("")}${meta?.suffix ?? ""}`];
    }
    if (event.kind === "AgentErrorEvent") return [event.error];
    return [];
  });
}

/**
 * Starts a server (with `flags`) once per test, stores the settings and creates a conversation whose
 * first LLM reply waits: `run` plays the replies (which may name the workspace), then finish, and
 * resolves with the observations' texts once the run has finished.
 */
async function begin(flags: string[] = []) {
  s ??= await startAgentServer(flags);
  const server = s;
  await server.settings();
  let release!: () => void;
  server.llm.play({ toolCalls: [terminal("true")], hold: new Promise<void>((resolve) => (release = resolve)) });
  const { id, peer } = await server.create({ initial_user_msg: "Do as you are told" });
  const workspace = path.join(server.t.dataDir, "uploads", id);
  return {
    id,
    workspace,
    async run(...replies: Array<{ toolCalls: ScriptedToolCall[] }>): Promise<string[]> {
      server.llm.play(...replies, finish);
      release();
      await waitForStatus(peer, "finished");
      // Without the held first reply's and finish's observations.
      return observed(await stored(server.t, id)).slice(1, -1);
    },
  };
}

/** A conversation that runs `replies` (then finish) on a server started with `flags`. */
async function attack(flags: string[], ...replies: Array<{ toolCalls: ScriptedToolCall[] }>): Promise<{ id: string; texts: string[]; workspace: string }> {
  const conversation = await begin(flags);
  return { ...conversation, texts: await conversation.run(...replies) };
}

describe("confinement", () => {
  it("commands hold no capability, run as an unprivileged host user, and cannot create user namespaces", async () => {
    const { texts, workspace } = await attack([], {
      toolCalls: [terminal("grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs)' /proc/self/status; touch mine; unshare -r true; echo unshare=$?")],
    });
    const status = texts[0]!;
    for (const line of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]) expect(status).toMatch(new RegExp(`${line}:\\s+0000000000000000`));
    expect(status).toMatch(/NoNewPrivs:\s+1/);
    expect(status).toMatch(/unshare=[1-9]/);
    // Outside, the file a command made is not root's.
    if (root) expect(statSync(path.join(workspace, "mine")).uid).toBe(65534);
  });

  it("cannot remount the system writable, nor unmask /etc/shadow", async () => {
    const marker = `acs-escape-${randomUUID()}`;
    const { texts } = await attack([], {
      toolCalls: [
        terminal(`mount -o remount,bind,rw /usr; touch /usr/${marker}; mount -o remount,bind,rw /etc; touch /etc/${marker}; echo done`),
        terminal("umount /etc/shadow; umount -l /etc/shadow; cat /etc/shadow | head -c 200; echo; echo end"),
      ],
    });
    expect(existsSync(`/usr/${marker}`)).toBe(false);
    expect(existsSync(`/etc/${marker}`)).toBe(false);
    expect(texts[0]).toContain("done");
    expect(texts[1]).toContain("end");
    if (existsSync("/etc/shadow")) expect(texts[1]).not.toMatch(/^root:/m);
  });
});

describe("the file editor against links swapped under it", () => {
  // A loop in the sandbox swaps `link` between a workspace file and a root-only host file.
  const swapper = (target: string) => terminal(`(while :; do ln -sfn '${target}' link; ln -sfn real.txt link; done) >/dev/null 2>&1 & echo swapping`);
  const TRIES = 2_000;
  const PER_REPLY = 200;
  // The calls' arguments cycle through equivalent forms (callFor(i)): the same call four times in a
  // row is what the stuck detector stops a run on, and this race repeats one call on purpose.
  const replies = (callFor: (index: number) => ScriptedToolCall) => Array.from({ length: TRIES / PER_REPLY }, () => ({ toolCalls: Array.from({ length: PER_REPLY }, (_, i) => callFor(i)) }));
  const VIEW_FORMS = [{}, { view_range: [1, -1] }, { view_range: [1, 1] }];

  it(`never reads the host file (${TRIES} views)`, { timeout: 180_000 }, async () => {
    const conversation = await begin();
    const secret = `HOST-SECRET-${randomUUID()}`;
    writeFileSync(path.join(s!.t.dataDir, "victim.txt"), `${secret}\n`, { mode: 0o600 });
    const texts = await conversation.run(
      { toolCalls: [terminal("echo workspace text > real.txt")] },
      { toolCalls: [swapper(path.join(s!.t.dataDir, "victim.txt"))] },
      ...replies((i) => editor({ command: "view", path: path.join(conversation.workspace, "link"), ...VIEW_FORMS[i % 3] })),
    );
    const views = texts.slice(2);
    expect(views).toHaveLength(TRIES);
    expect(views.filter((text) => text.includes(secret))).toEqual([]);
    // The race was run: some views saw the workspace file through the link, some were refused.
    expect(views.some((text) => text.includes("workspace text"))).toBe(true);
    expect(views.some((text) => text.includes("outside the workspace"))).toBe(true);
  });

  it(`never writes the host file (${TRIES} str_replace)`, { timeout: 180_000 }, async () => {
    const conversation = await begin();
    const victim = path.join(s!.t.dataDir, "victim.txt");
    writeFileSync(victim, "SAFE-CONTENT\n", { mode: 0o600 });
    const texts = await conversation.run(
      { toolCalls: [terminal("echo SAFE-CONTENT > real.txt")] },
      { toolCalls: [swapper(victim)] },
      ...replies((i) => editor({ command: "str_replace", path: path.join(conversation.workspace, "link"), old_str: "SAFE-CONTENT", new_str: `SAFE-CONTENT${".".repeat(1 + (i % 3))}` })),
    );
    expect(texts.slice(2)).toHaveLength(TRIES);
    expect(readFileSync(victim, "utf8")).toBe("SAFE-CONTENT\n");
    expect(statSync(victim).mode & 0o777).toBe(0o600);
    // Edits through the link that stayed inside went to the workspace file.
    expect(readFileSync(path.join(conversation.workspace, "real.txt"), "utf8")).toMatch(/^SAFE-CONTENT\.+\n$/);
  });
});

describe("FIFOs, sockets and links to devices", () => {
  it("the file editor and the download route answer with an error and the server's file I/O goes on", { timeout: 60_000 }, async () => {
    const conversation = await begin();
    const at = (name: string) => path.join(conversation.workspace, name);
    const texts = await conversation.run(
      { toolCalls: [terminal("mkfifo f; node -e \"require('net').createServer().listen('sock', () => process.exit(0))\"; ln -s /dev/zero dev; ls -l")] },
      // More calls than libuv has threads (4): a blocking open would hold them all.
      { toolCalls: Array.from({ length: 6 }, (_, i) => editor({ command: "view", path: at("f"), ...[{}, { view_range: [1, -1] }, { view_range: [1, 1] }][i % 3] })) },
      { toolCalls: [editor({ command: "view", path: at("sock") }), editor({ command: "view", path: at("dev") })] },
      { toolCalls: [editor({ command: "str_replace", path: at("f"), old_str: "a", new_str: "b" }), editor({ command: "insert", path: at("f"), insert_line: 0, new_str: "x" })] },
    );
    expect(texts[0]).toMatch(/^p.* f$/m);
    expect(texts[0]).toMatch(/^s.* sock$/m);
    for (const text of texts.slice(1, 7)) expect(text).toContain("is not a regular file");
    expect(texts[7]).toContain("is not a regular file");
    expect(texts[8]).toContain("outside the workspace");
    for (const text of texts.slice(9, 11)) expect(text).toContain("is not a regular file");

    for (let i = 0; i < 6; i++) {
      for (const name of ["f", "sock", "dev"]) {
        const reply = await s!.t.call("GET", `/api/conversations/${conversation.id}/files/${name}`);
        expect(reply.status, name).toBe(404);
      }
    }
    // Uploads, downloads and /health still work.
    const form = new FormData();
    form.append("files", new Blob(["uploaded"]), "after.txt");
    const upload = await fetch(`${s!.t.url}/api/conversations/${conversation.id}/upload-files`, { method: "POST", body: form, headers: { "X-Session-API-Key": KEY } });
    expect(upload.status).toBe(200);
    const download = await s!.t.call("GET", `/api/conversations/${conversation.id}/files/after.txt`);
    expect(download.text).toBe("uploaded");
    const health = await s!.t.call("GET", "/health");
    expect(health.body).toMatchObject({ status: "ok", file_io: "ok" });
  });
});

describe("limits", () => {
  it("processes: a fork loop stops at --sandbox-processes with the shell's error", async () => {
    const { texts } = await attack(["--sandbox-processes", "40"], {
      toolCalls: [terminal("sh -c 'i=0; while [ $i -lt 100 ]; do sleep 60 >/dev/null 2>&1 & i=$((i+1)); done' 2>&1 | tail -n 1; echo forks done")],
    });
    expect(texts[0]).toContain("Cannot fork");
    expect(texts[0]).toContain("forks done");
  });

  it("memory: an allocation past --sandbox-memory-bytes fails in the command, not the server", async () => {
    const { texts } = await attack(["--sandbox-memory-bytes", String(256 * 1024 * 1024)], {
      toolCalls: [terminal(`node -e "const a = []; for (;;) a.push(Buffer.alloc(64 << 20))" 2>&1 | grep -o 'allocation failed' | head -n 1; echo exit=\${PIPESTATUS[0]}`)],
    });
    expect(texts[0]).toContain("allocation failed");
    expect(texts[0]).toMatch(/exit=[1-9]/);
  });

  it.skipIf(!root)("memory: processes each under the limit are bounded together, and the model is told", async () => {
    // Four processes of ~140 MB each: every one is under the per-process bound; together they pass 256 MiB.
    const { texts } = await attack(["--sandbox-memory-bytes", String(256 * 1024 * 1024)], {
      toolCalls: [terminal(`for i in 1 2 3 4; do node -e "const b = Buffer.alloc(100 << 20, 1); setTimeout(() => {}, 3000)" & done; wait; echo waited`, 60)],
    });
    expect(texts[0]).toContain("waited");
    expect(texts[0]).toMatch(/killed: the commands of this conversation together reached their memory limit of 256 MiB/);
  });

  it("/tmp: many files each under --sandbox-file-bytes stop at --sandbox-tmp-bytes", { timeout: 60_000 }, async () => {
    const { id, texts } = await attack(["--sandbox-tmp-bytes", String(8 * 1024 * 1024), "--sandbox-file-bytes", String(2 * 1024 * 1024)], {
      toolCalls: [terminal("for i in $(seq 1 300); do head -c 1000000 /dev/zero > /tmp/f$i; sleep 0.02; done; echo wrote all", 60)],
    });
    expect(texts[0]).not.toContain("wrote all");
    expect(texts[0]).toMatch(/The shell was stopped: \/tmp holds [\d.]+ MiB, over its limit of 8 MiB/);
    const { execFileSync } = await import("node:child_process");
    const used = Number(execFileSync("du", ["-sb", path.join(s!.t.dataDir, "tmp", id)], { encoding: "utf8" }).split("\t")[0]);
    // The limit plus what one second of writing adds at most (50 files a second here).
    expect(used).toBeLessThan(8 * 1024 * 1024 + 60_000_000);
  });

  it("file size: a write past --sandbox-file-bytes is cut (File size limit exceeded)", async () => {
    const { texts, workspace } = await attack(["--sandbox-file-bytes", String(1024 * 1024)], {
      toolCalls: [terminal("head -c 3000000 /dev/zero > big; echo exit=$?")],
    });
    expect(texts[0]).toContain("File size limit exceeded");
    expect(texts[0]).toContain("exit=153");
    expect(statSync(path.join(workspace, "big")).size).toBe(1024 * 1024);
  });

  it("CPU: a busy loop is stopped at --sandbox-cpu-seconds (CPU time limit exceeded)", { timeout: 30_000 }, async () => {
    const { texts } = await attack(["--sandbox-cpu-seconds", "1"], {
      toolCalls: [terminal("sh -c 'while :; do :; done'; echo exit=$?", 20)],
    });
    expect(texts[0]).toContain("CPU time limit exceeded");
    expect(texts[0]).toContain("exit=152");
  });

  it("CPU share: commands, in a session of their own too, yield the CPU to the server", async () => {
    const marker = String(600_000 + Math.floor(Math.random() * 99_999));
    const { texts } = await attack([], { toolCalls: [terminal(`(setsid sleep ${marker} &) ; sleep ${marker} >/dev/null 2>&1 & echo started`)] });
    expect(texts[0]).toContain("started");
    const pids = await untilProcesses(`sleep ${marker}`, 2);
    for (const pid of pids) {
      // nice 10 (field 19 of /proc/PID/stat): what holds where no CPU group can be made.
      expect(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[16]).toBe("10");
      if (!root) continue;
      // Where the kernel groups processes by session, nice alone would not hold against setsid: a CPU group does.
      const group = /^\d+:[^:]*\bcpu\b[^:]*:(.*)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, "utf8"))?.[1] ?? "";
      expect(group).toMatch(/\/acs-sandbox-\d+-\d+\/s\d+$/);
      const mount = readFileSync("/proc/self/mountinfo", "utf8").split("\n").find((line) => / - cgroup cgroup \S*\bcpu\b/.test(line))!.split(" ")[4]!;
      expect(readFileSync(path.join(mount, path.dirname(group), "cpu.shares"), "utf8").trim()).toBe("110");
    }
  });

  it("/dev: read-only, and /dev/shm (memory) stops at --sandbox-shm-bytes", async () => {
    const { texts } = await attack(["--sandbox-shm-bytes", String(8 * 1024 * 1024)], {
      toolCalls: [terminal("echo x > /dev/fill; echo dev=$?; head -c 20000000 /dev/zero > /dev/shm/fill; echo shm=$?; du -k /dev/shm/fill")],
    });
    expect(texts[0]).toContain("Read-only file system");
    expect(texts[0]).toContain("dev=1");
    expect(texts[0]).toContain("No space left on device");
    expect(texts[0]).toMatch(/^8192\s+\/dev\/shm\/fill$/m);
  });

  it("/tmp is on disk in the data directory, not the host's memory", async () => {
    const { id, texts } = await attack([], { toolCalls: [terminal("head -c 5000000 /dev/zero > /tmp/fill; echo exit=$?")] });
    expect(texts[0]).toContain("exit=0");
    expect(statSync(path.join(s!.t.dataDir, "tmp", id, "fill")).size).toBe(5_000_000);
  });
});

describe("lifecycle", () => {
  it("every process of a conversation closed as idle is gone", async () => {
    const marker = String(700_000 + Math.floor(Math.random() * 99_999));
    const { id, texts } = await attack(["--agent-idle-seconds", "1"], { toolCalls: [terminal(`(setsid sleep ${marker} &) ; nohup sleep ${marker} >/dev/null 2>&1 & echo started`)] });
    expect(texts[0]).toContain("started");
    await expect.poll(async () => (await s!.t.call("GET", `/api/conversations/${id}`)).body.status, { timeout: 10_000, interval: 100 }).toBe("STOPPED");
    await expectGone(`sleep ${marker}`);
  });

  it("every process a conversation started is gone once the server stops", async () => {
    const marker = String(900_000 + Math.floor(Math.random() * 99_999));
    const { texts } = await attack([], { toolCalls: [terminal(`(setsid sleep ${marker} &) ; nohup sleep ${marker} >/dev/null 2>&1 & echo started`)] });
    expect(texts[0]).toContain("started");
    await untilProcesses(`sleep ${marker}`, 2);
    await s!.close();
    s = undefined;
    await expectGone(`sleep ${marker}`);
  });
});
