/**
 * Safe by default, through the server: where no sandbox works (here: the agent told there is
 * none, as on a host without bubblewrap) the terminal refuses every command with an error that
 * says why, unless the operator passed --allow-host-execution; with bubblewrap, a command cannot
 * write outside the conversation's workspace.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { expectValidRun, startAgentServer, waitForStatus, type AgentServer } from "./support.js";

let s: AgentServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const writeNote = { toolCalls: [{ name: "terminal", arguments: { command: "echo written > note.txt" } }] };
const finish = { toolCalls: [{ name: "finish", arguments: { message: "done" } }] };

it("without a sandbox and without --allow-host-execution, the terminal refuses with a clear error and runs nothing", async () => {
  s = await startAgentServer([], { sandbox: "none" });
  await s.settings();
  s.llm.play(writeNote, finish);
  const { id, peer } = await s.create({ initial_user_msg: "Write a note" });
  await waitForStatus(peer, "finished");
  const events = await expectValidRun(s.t, id, peer);
  const error = events.find((event) => event.kind === "AgentErrorEvent");
  expect(error).toMatchObject({ tool_name: "terminal" });
  expect((error as { error: string }).error).toContain("no sandbox is available on this server");
  expect(existsSync(path.join(s.t.dataDir, "uploads", id, "note.txt"))).toBe(false);
});

it("with --allow-host-execution and no sandbox, commands run on the host, in the workspace", async () => {
  s = await startAgentServer(["--allow-host-execution"], { sandbox: "none" });
  await s.settings();
  s.llm.play(writeNote, finish);
  const { id, peer } = await s.create({ initial_user_msg: "Write a note" });
  await waitForStatus(peer, "finished");
  await expectValidRun(s.t, id, peer);
  expect(await readFile(path.join(s.t.dataDir, "uploads", id, "note.txt"), "utf8")).toBe("written\n");
});

it("in bubblewrap, a command cannot see the data directory nor write outside the workspace", async () => {
  s = await startAgentServer();
  await s.settings();
  const outside = path.join(s.t.dataDir, "escaped.txt");
  s.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: `echo x > ${outside}; ls ${s.t.dataDir}/acs.sqlite; echo exit=$?` } }] }, finish);
  const { id, peer } = await s.create({ initial_user_msg: "Escape" });
  await waitForStatus(peer, "finished");
  const events = await expectValidRun(s.t, id, peer);
  expect(existsSync(outside)).toBe(false);
  const observation = JSON.stringify(events.find((event) => event.kind === "ObservationEvent"));
  expect(observation).toContain("exit=2");
});
