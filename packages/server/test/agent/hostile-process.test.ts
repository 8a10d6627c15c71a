/**
 * The hostile model against the built server as a process, run as root (as in a container) and as
 * an unprivileged user: the confinement must not depend on who runs the server, and a server
 * killed with SIGKILL must take every process of its conversations with it.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chownSync, existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ScriptedLlmServer } from "@acs-toolkit/agent/test-kit";
import type { Event } from "@acs-toolkit/schema";
import { describe, expect, it } from "vitest";
import { KEY } from "../support/harness.js";
import { exited, SERVER_CLI, spawnServer } from "../support/process.js";
import { expectGone, processesWith } from "./support.js";

const NOBODY = 65534;
const asNobody = ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--"];
/** Whether the built server can be run as `nobody` here (the checkout must be readable by it). */
const nobodyCanRun = process.getuid?.() === 0 && spawnSync(asNobody[0]!, [...asNobody.slice(1), process.execPath, "-e", `require("fs").accessSync(${JSON.stringify(SERVER_CLI)})`]).status === 0;

const cases = [
  { who: "root", wrapper: undefined, runs: process.getuid?.() === 0 },
  { who: "an unprivileged user", wrapper: asNobody, runs: nobodyCanRun },
];

describe.each(cases)("a server run as $who", ({ wrapper, runs }) => {
  it.runIf(runs)("confines commands (no capability, no remount, no unmask) and a SIGKILL of it kills them all", { timeout: 60_000 }, async () => {
    const llm = await ScriptedLlmServer.start();
    const dataDir = await mkdtemp(path.join(tmpdir(), "acs-hostile-"));
    if (wrapper) chownSync(dataDir, NOBODY, NOBODY);
    const server = await spawnServer(dataDir, { flags: ["--runtime", "agent"], wrapper });
    try {
      const call = (method: string, route: string, body?: unknown) =>
        fetch(`${server.url}${route}`, { method, headers: { "X-Session-API-Key": KEY, "Content-Type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      expect((await call("POST", "/api/settings", { llm_model: "openai/gpt-4o", llm_api_key: "sk-test", llm_base_url: llm.url })).status).toBe(200);
      const marker = String(800_000 + Math.floor(Math.random() * 99_999));
      const escape = `acs-escape-${randomUUID()}`;
      llm.play(
        {
          toolCalls: [
            {
              name: "terminal",
              arguments: {
                command:
                  `grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; mount -o remount,bind,rw /usr; touch /usr/${escape}; ` +
                  `umount /etc/shadow; head -c 100 /etc/shadow; (setsid sleep ${marker} &); nohup sleep ${marker} >/dev/null 2>&1 & echo started`,
              },
            },
          ],
        },
        { toolCalls: [{ name: "finish", arguments: { message: "done" } }] },
      );
      const created = await call("POST", "/api/conversations", { initial_user_msg: "Escape" });
      const id = ((await created.json()) as { conversation_id: string }).conversation_id;
      const terminalObservation = async () => {
        const page = (await (await call("GET", `/api/conversations/${id}/events/search?limit=100`)).json()) as { items: Event[] };
        const found = page.items.find((event) => event.kind === "ObservationEvent" && event.observation.kind === "TerminalObservation");
        return found && JSON.stringify(found);
      };
      await expect.poll(terminalObservation, { timeout: 30_000, interval: 50 }).toBeTruthy();
      const observation = (await terminalObservation())!;
      for (const line of ["CapEff", "CapPrm", "CapBnd"]) expect(observation).toMatch(new RegExp(`${line}:\\\\t0000000000000000`));
      expect(observation).toContain("started");
      expect(observation).not.toMatch(/root:[^"]*:/);
      expect(existsSync(`/usr/${escape}`)).toBe(false);
      expect((await processesWith(`sleep ${marker}`)).length).toBe(2);

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
