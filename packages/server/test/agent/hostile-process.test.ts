/**
 * The hostile model against the built server as a process, run as root (as in a container) and as
 * an unprivileged user: the confinement must not depend on who runs the server, and a server
 * killed with SIGKILL must take every process of its conversations with it.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chownSync, existsSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ScriptedLlmServer } from "@acs-toolkit/agent/test-kit";
import type { Event } from "@acs-toolkit/schema";
import { describe, expect, it } from "vitest";
import { KEY } from "../support/harness.js";
import { exited, SERVER_CLI, spawnServer } from "../support/process.js";
import { expectGone, releaseViolations, untilProcesses } from "./support.js";

const NOBODY = 65534;
const asNobody = ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--"];
/** Whether the built server can be run as `nobody` here (the checkout must be readable by it). */
const nobodyCanRun = process.getuid?.() === 0 && spawnSync(asNobody[0]!, [...asNobody.slice(1), process.execPath, "-e", `require("fs").accessSync(${JSON.stringify(SERVER_CLI)})`]).status === 0;

const cases = [
  { who: "root", wrapper: undefined, runs: process.getuid?.() === 0 },
  { who: "an unprivileged user", wrapper: asNobody, runs: nobodyCanRun },
];

const terminal = (command: string) => ({ name: "terminal", arguments: { command } });
/**
 * A view of `file`, its arguments cycling through three equivalent forms: the same call four times
 * in a row is what the stuck detector stops a run on, and these runs repeat a view on purpose.
 */
const view = (file: string, index = 0) => ({ name: "file_editor", arguments: { command: "view", path: file, ...[{}, { view_range: [1, -1] }, { view_range: [1, 1] }][index % 3] } });
const RACE_VIEWS = 400;

describe.each(cases)("a server run as $who", ({ wrapper, runs }) => {
  it.runIf(runs)("confines commands, keeps the file editor in the workspace, applies the limits, and a SIGKILL of it kills every command", { timeout: 120_000 }, async () => {
    const llm = await ScriptedLlmServer.start();
    const dataDir = await mkdtemp(path.join(tmpdir(), "acs-hostile-"));
    if (wrapper) chownSync(dataDir, NOBODY, NOBODY);
    const server = await spawnServer(dataDir, { flags: ["--runtime", "agent", "--sandbox-processes", "40", "--sandbox-file-bytes", "1048576", "--sandbox-memory-bytes", String(256 * 1024 * 1024)], wrapper });
    try {
      const call = (method: string, route: string, body?: unknown) =>
        fetch(`${server.url}${route}`, { method, headers: { "X-Session-API-Key": KEY, "Content-Type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      expect((await call("POST", "/api/settings", { llm_model: "openai/gpt-4o", llm_api_key: "sk-test", llm_base_url: llm.url, enable_default_condenser: false })).status).toBe(200);
      // The first reply waits until the test knows the workspace's path.
      let release!: () => void;
      llm.play({ toolCalls: [terminal("true")], hold: new Promise<void>((resolve) => (release = resolve)) });
      const created = await call("POST", "/api/conversations", { initial_user_msg: "Escape" });
      const id = ((await created.json()) as { conversation_id: string }).conversation_id;
      const workspace = path.join(dataDir, "uploads", id);
      const victim = path.join(dataDir, "victim.txt");
      const secret = `HOST-SECRET-${randomUUID()}`;
      writeFileSync(victim, secret, { mode: 0o600 });
      if (wrapper) chownSync(victim, NOBODY, NOBODY); // the server's own file, as its key is
      const marker = String(800_000 + Math.floor(Math.random() * 99_999));
      const escape = `acs-escape-${randomUUID()}`;
      llm.play(
        {
          toolCalls: [
            terminal(
              `grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; mount -o remount,bind,rw /usr; touch /usr/${escape}; umount /etc/shadow; head -c 100 /etc/shadow; ` +
                `sh -c 'i=0; while [ $i -lt 60 ]; do sleep 1 >/dev/null 2>&1 & i=$((i+1)); done; wait' 2>&1 | tail -n 1; ` +
                `head -c 3000000 /dev/zero > big; echo file exit=$?; echo workspace text > real.txt; mkfifo f; ` +
                `(while :; do ln -sfn '${victim}' link; ln -sfn real.txt link; done) >/dev/null 2>&1 & ` +
                `(setsid sleep ${marker} &); nohup sleep ${marker} >/dev/null 2>&1 & echo started`,
            ),
          ],
        },
        // Four processes of ~100 MB each: every one under the per-process bound, together past 256 MiB.
        // One V8 worker thread each (4 threads, not 7): --sandbox-processes 40 counts threads, and the
        // race loop and sleeps above hold some; at 7 a node could fail to start a thread and abort.
        { toolCalls: [terminal(`pids=; for i in 1 2 3 4; do node --v8-pool-size=1 -e "const b = Buffer.alloc(100 << 20, 1); setTimeout(() => {}, 5000)" & pids="$pids $!"; done; wait $pids; echo waited`)] },
        { toolCalls: Array.from({ length: 6 }, (_, i) => view(path.join(workspace, "f"), i)) },
        ...Array.from({ length: RACE_VIEWS / 200 }, () => ({ toolCalls: Array.from({ length: 200 }, (_, i) => view(path.join(workspace, "link"), i)) })),
        { toolCalls: [{ name: "finish", arguments: { message: "done" } }] },
      );
      release();
      await expect
        .poll(async () => ((await (await call("GET", `/api/conversations/${id}`)).json()) as { execution_status?: string }).execution_status, { timeout: 60_000, interval: 100 })
        .toBe("finished");
      const texts: string[] = [];
      for (let pageId: string | undefined; ; ) {
        const page = (await (await call("GET", `/api/conversations/${id}/events/search?kind=ObservationEvent&limit=100${pageId ? `&page_id=${pageId}` : ""}`)).json()) as {
          items: Event[];
          next_page_id?: string;
        };
        for (const event of page.items) {
          if (event.kind !== "ObservationEvent") continue;
          const { observation } = event;
          const suffix = observation.kind === "TerminalObservation" ? (observation.metadata?.suffix ?? "") : "";
          texts.push((observation.content ?? []).map((part) => ("text" in part ? part.text : "")).join("") + suffix);
        }
        if (!(pageId = page.next_page_id)) break;
      }
      const [, attack = "", memory = "", ...views] = texts;
      for (const line of ["CapEff", "CapPrm", "CapBnd"]) expect(attack).toMatch(new RegExp(`${line}:\\s+0000000000000000`));
      expect(attack).not.toMatch(/^root:/m);
      expect(existsSync(`/usr/${escape}`)).toBe(false);
      expect(attack).toContain("Cannot fork");
      expect(attack).toContain("File size limit exceeded");
      expect(attack).toContain("file exit=153");
      expect(attack).toContain("started");
      expect(statSync(path.join(workspace, "big")).size).toBe(1024 * 1024);
      // The memory sum holds whoever runs the server: a memory cgroup as root, the terminal's watch unprivileged.
      expect(memory).toContain("waited");
      expect(memory).toMatch(/killed: the commands of this conversation together reached their memory limit of 256 MiB/);
      for (const text of views.slice(0, 6)) expect(text).toContain("is not a regular file");
      const raced = views.slice(6, 6 + RACE_VIEWS);
      expect(raced).toHaveLength(RACE_VIEWS);
      expect(raced.filter((text) => text.includes(secret))).toEqual([]);
      expect((await call("GET", `/api/conversations/${id}/files/f`)).status).toBe(404);
      expect(await (await call("GET", "/health")).json()).toMatchObject({ status: "ok", file_io: "ok" });
      await untilProcesses(`sleep ${marker}`, 2);
      const trajectory: Event[] = [];
      for (let pageId: string | undefined; ; ) {
        const page = (await (await call("GET", `/api/conversations/${id}/events/search?limit=100${pageId ? `&page_id=${pageId}` : ""}`)).json()) as { items: Event[]; next_page_id?: string };
        trajectory.push(...page.items);
        if (!(pageId = page.next_page_id)) break;
      }
      const violations = releaseViolations(trajectory);
      expect(violations, violations.join("\n")).toEqual([]);

      server.process.kill("SIGKILL");
      await exited(server.process);
      await expectGone(`sleep ${marker}`);
    } finally {
      server.process.kill("SIGKILL");
      await llm.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
