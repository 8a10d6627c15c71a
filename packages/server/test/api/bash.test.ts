/**
 * The bash routes (POST /api/bash/execute_bash_command and the /sockets/bash-events socket) on the
 * reference server, over real HTTP and a real WebSocket: commands run in the sandbox of the
 * conversation whose workspace holds their cwd (run by these tests as root, as in a container:
 * never as the server's user), nowhere else; what cannot run is answered with exit_code -1 and why.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { BashOutput } from "@acs-toolkit/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectLive, type Frame, type LivePeer } from "@acs-toolkit/test-kit/live";
import { expect422, expectConforms, KEY, startTestServer, type TestServer } from "../support/harness.js";
import { expectGone, processesWith, startAgentServer, type AgentServer } from "../agent/support.js";

const root = process.getuid?.() === 0;
const EXECUTE = "/api/bash/execute_bash_command";

/** A conversation whose agent has opened (its workspace exists). */
async function openConversation(s: AgentServer): Promise<{ id: string; workspace: string }> {
  const { id, peer } = await s.create();
  // RUNNING is recorded once the agent has set the conversation up (its workspace made first).
  await peer.waitFor(1, (frame) => frame.value.kind === "ConversationStateUpdateEvent" && frame.value.key === "conversation_status" && frame.value.value === "RUNNING");
  return { id, workspace: path.join(s.t.dataDir, "uploads", id) };
}

async function execute(t: TestServer, json: Record<string, unknown>): Promise<BashOutput> {
  const reply = await t.call("POST", EXECUTE, { json });
  expectConforms("executeBashCommand", reply, 200);
  return reply.body as BashOutput;
}

/** A bash-events socket, authenticated by its first frame. */
async function bashSocket(t: TestServer, key = KEY): Promise<LivePeer> {
  const peer = connectLive(t.url, "/sockets/bash-events");
  await peer.opened;
  peer.send({ type: "auth", session_api_key: key });
  return peer;
}

const kind = (name: string) => (frame: Frame) => frame.value.kind === name;
/** The final BashOutput of the command `id`. */
const finalOf = (id: string) => (frame: Frame) => frame.value.kind === "BashOutput" && frame.value.command_id === id && frame.value.exit_code !== null;

describe("under the agent runtime", () => {
  let s: AgentServer;
  let a: { id: string; workspace: string };
  let b: { id: string; workspace: string };
  beforeAll(async () => {
    s = await startAgentServer();
    a = await openConversation(s);
    b = await openConversation(s);
  });
  afterAll(() => s?.close());

  it("runs a command in the sandbox of the conversation whose workspace holds cwd", async () => {
    const output = await execute(s.t, { command: "id -u; pwd; echo written > made-by-bash.txt", cwd: a.workspace, timeout: 30 });
    expect(output.exit_code, output.stderr ?? "").toBe(0);
    const [uid, pwd] = output.stdout!.trim().split("\n");
    if (root) expect(Number(uid)).not.toBe(0); // the sandbox's user, never the server's
    expect(Number(uid)).toBe(root ? 65534 : process.getuid?.());
    expect(pwd).toBe(a.workspace);
    expect(existsSync(path.join(a.workspace, "made-by-bash.txt"))).toBe(true);
    expect(existsSync(path.join(b.workspace, "made-by-bash.txt"))).toBe(false);
    expect(existsSync(path.join(s.t.dataDir, "uploads", "made-by-bash.txt"))).toBe(false);
  });

  it("confines it: the other conversation's workspace and the data directory are out of sight", async () => {
    const output = await execute(s.t, { command: `ls ${b.workspace}; echo other=$?; ls ${s.t.dataDir}/acs.sqlite; echo data=$?; touch /usr/x; echo usr=$?`, cwd: a.workspace, timeout: 30 });
    expect(output.stdout).toContain("other=2");
    expect(output.stdout).toContain("data=2");
    expect(output.stdout).not.toContain("usr=0");
  });

  it("starts in a folder below the workspace, named absolutely or relative to the home folder", async () => {
    expect((await execute(s.t, { command: "mkdir -p sub/deeper", cwd: a.workspace })).exit_code).toBe(0);
    const absolute = await execute(s.t, { command: "pwd", cwd: path.join(a.workspace, "sub", "deeper") });
    expect(absolute.stdout).toBe(`${path.join(a.workspace, "sub", "deeper")}\n`);
    const relative = await execute(s.t, { command: "pwd", cwd: `${a.id}/sub/./deeper/..` });
    expect(relative.stdout).toBe(`${path.join(a.workspace, "sub")}\n`);
  });

  it("refuses a cwd outside every workspace, escaping with .., through a symbolic link, or of no conversation", async () => {
    const refusals: Array<[unknown, RegExp]> = [
      ["/tmp", /is not a folder inside a conversation's workspace/],
      [path.join(s.t.dataDir, "uploads"), /is not a folder inside/],
      [`${a.workspace}/../..`, /is not a folder inside/],
      [`${a.id}/../../tmp`, /is not a folder inside/],
      [path.join(s.t.dataDir, "uploads", "00000000-0000-4000-8000-000000000000"), /there is no conversation/],
      [null, /no cwd was given/],
      [path.join(a.workspace, "missing"), /does not exist/],
    ];
    for (const [cwd, why] of refusals) {
      const output = await execute(s.t, { command: "touch /tmp/ran-anyway; echo ran", cwd });
      expect(output.exit_code, String(cwd)).toBe(-1);
      expect(output.stdout, String(cwd)).toBeNull();
      expect(output.stderr, String(cwd)).toMatch(/^Error executing command: /);
      expect(output.stderr, String(cwd)).toMatch(why);
    }
    // A link a command left in the workspace, to a folder the sandbox would show (its /) and to another workspace.
    expect((await execute(s.t, { command: `ln -s / escape && ln -s ${b.workspace} other && mkdir -p real && ln -s .. real/up`, cwd: a.workspace })).exit_code).toBe(0);
    for (const cwd of [path.join(a.workspace, "escape"), path.join(a.workspace, "escape", "etc"), path.join(a.workspace, "other"), path.join(a.workspace, "real", "up")]) {
      const output = await execute(s.t, { command: "echo ran", cwd });
      expect(output.exit_code, cwd).toBe(-1);
      expect(output.stderr, cwd).toMatch(/passes through a symbolic link/);
    }
    expect(existsSync("/tmp/ran-anyway")).toBe(false);
  });

  it("kills a command that runs past its timeout, with every process it started, and reports it", async () => {
    const marker = "31.4159";
    const output = await execute(s.t, { command: `sleep ${marker} & sleep ${marker}; echo never`, cwd: a.workspace, timeout: 1 });
    expect(output.exit_code).toBe(-1);
    expect(output.stdout).toBeNull();
    expect(output.stderr).toMatch(/timed out after 1 seconds/);
    await expectGone(`sleep ${marker}`);
  });

  it("runs long commands without holding other requests, and kills a socket's commands when it closes", async () => {
    const marker = "42.1828";
    const peer = await bashSocket(s.t);
    peer.send({ command: `sleep ${marker}`, cwd: a.workspace, timeout: 600 });
    const [echo] = await peer.waitFor(1, kind("BashCommand"));
    await expect.poll(() => processesWith(`sleep ${marker}`), { timeout: 10_000 }).not.toEqual([]);
    // While it sleeps, another command runs and answers.
    const quick = await execute(s.t, { command: "echo quick", cwd: b.workspace });
    expect(quick).toMatchObject({ exit_code: 0, stdout: "quick\n" });
    expect(peer.frames.filter(finalOf(echo!.value.id))).toEqual([]);
    peer.ws.close();
    await peer.closed;
    await expectGone(`sleep ${marker}`);
  });

  it("answers the socket's commands: an echo per frame in order, then their output with the exit code", async () => {
    const peer = await bashSocket(s.t);
    peer.send({ command: "echo one; echo err >&2", cwd: a.workspace, timeout: 10 });
    peer.send({ command: "exit 3", cwd: b.workspace });
    peer.send({ type: "auth", session_api_key: KEY }); // redundant: ignored
    peer.send({ command: "echo nowhere", cwd: "/etc" });
    const echoes = (await peer.waitFor(3, kind("BashCommand"))).map((frame) => frame.value);
    expect(echoes.map((echo) => [echo.command, echo.cwd, echo.timeout])).toEqual([
      ["echo one; echo err >&2", a.workspace, 10],
      ["exit 3", b.workspace, 300],
      ["echo nowhere", "/etc", 300],
    ]);
    const [one] = await peer.waitFor(1, finalOf(echoes[0].id));
    expect(one!.value).toMatchObject({ order: 0, exit_code: 0, stdout: "one\n", stderr: "err\n" });
    const [three] = await peer.waitFor(1, finalOf(echoes[1].id));
    expect(three!.value).toMatchObject({ exit_code: 3, stdout: null, stderr: null });
    const [nowhere] = await peer.waitFor(1, finalOf(echoes[2].id));
    expect(nowhere!.value.exit_code).toBe(-1);
    expect(nowhere!.value.stderr).toMatch(/is not a folder inside/);
    expect(peer.frames.filter(kind("BashError"))).toEqual([]);
    peer.ws.close();
  });

  it("answers a frame that is no command with a BashError, and stays open", async () => {
    const peer = await bashSocket(s.t);
    peer.send("not json");
    peer.send({ command: 5 });
    peer.send({ cwd: a.workspace });
    peer.send({ command: "true", timeout: 0 });
    peer.ws.send(Buffer.from("binary"), { binary: true });
    const errors = (await peer.waitFor(5, kind("BashError"))).map((frame) => frame.value);
    expect(errors.map((error) => error.code)).toEqual(["JSONDecodeError", "ValidationError", "ValidationError", "ValidationError", "ValidationError"]);
    expect(errors[1].detail).toMatch(/^command: /);
    expect(errors[2].detail).toMatch(/^command: /);
    expect(errors[3].detail).toMatch(/^timeout: /);
    expect(peer.frames.filter(kind("BashCommand"))).toEqual([]);
    peer.send({ command: "echo still", cwd: a.workspace });
    const [echo] = await peer.waitFor(1, kind("BashCommand"));
    const [done] = await peer.waitFor(1, finalOf(echo!.value.id));
    expect(done!.value.stdout).toBe("still\n");
    peer.ws.close();
  });

  it("closes a socket without a good key with 4001", async () => {
    const wrong = await bashSocket(s.t, "wrong-key");
    expect((await wrong.closed).code).toBe(4001);
    const noAuth = connectLive(s.t.url, "/sockets/bash-events");
    await noAuth.opened;
    noAuth.send({ command: "echo hi", cwd: a.workspace });
    expect((await noAuth.closed).code).toBe(4001);
    expect(noAuth.frames).toEqual([]);
    const header = connectLive(s.t.url, "/sockets/bash-events", { headers: { "X-Session-API-Key": KEY } });
    await header.opened;
    header.send({ command: "echo header", cwd: a.workspace });
    const [echo] = await header.waitFor(1, kind("BashCommand"));
    expect((await header.waitFor(1, finalOf(echo!.value.id)))[0]!.value.stdout).toBe("header\n");
    header.ws.close();
  });

  it("refuses bad input with a 422 naming the culprit, and a request without the key with 401", async () => {
    const bad: Array<[unknown, Array<string | number>]> = [
      [{ cwd: a.workspace }, ["body", "command"]],
      [{ command: 5 }, ["body", "command"]],
      [{ command: "a\u0000b" }, ["body", "command"]],
      [{ command: "true", timeout: 0 }, ["body", "timeout"]],
      [{ command: "true", timeout: 3601 }, ["body", "timeout"]],
      [{ command: "true", timeout: 1.5 }, ["body", "timeout"]],
      [{ command: "true", timeout: "10" }, ["body", "timeout"]],
      [{ command: "true", cwd: 5 }, ["body", "cwd"]],
      [[], ["body"]],
    ];
    for (const [json, loc] of bad) expect422("executeBashCommand", await s.t.call("POST", EXECUTE, { json }), loc);
    expect422("executeBashCommand", await s.t.call("POST", EXECUTE), ["body"]);
    const unauthorized = await s.t.call("POST", EXECUTE, { json: { command: "true", cwd: a.workspace }, key: null });
    expectConforms("executeBashCommand", unauthorized, 401);
  });
});

describe("without a sandbox", () => {
  it("runs nothing, and says why (no host execution)", async () => {
    const s = await startAgentServer([], { sandbox: "none" });
    try {
      const { workspace } = await openConversation(s);
      const output = await execute(s.t, { command: "touch ran; echo ran", cwd: workspace });
      expect(output.exit_code).toBe(-1);
      expect(output.stderr).toMatch(/^Error executing command: .*no sandbox is available/);
      expect(existsSync(path.join(workspace, "ran"))).toBe(false);
    } finally {
      await s.close();
    }
  });
});

describe("under the record runtime", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.close());

  it("runs nothing, over HTTP and the socket, and says so", async () => {
    const created = await t.call("POST", "/api/conversations", { json: {} });
    const workspace = path.join(t.dataDir, "uploads", created.body.conversation_id as string);
    const output = await execute(t, { command: "touch ran; echo ran", cwd: workspace });
    expect(output).toMatchObject({ exit_code: -1, stdout: null, order: 0 });
    expect(output.stderr).toMatch(/^Error executing command: no command runs here/);
    const peer = await bashSocket(t);
    peer.send({ command: "echo ran", cwd: workspace });
    const [echo] = await peer.waitFor(1, kind("BashCommand"));
    const [done] = await peer.waitFor(1, finalOf(echo!.value.id));
    expect(done!.value).toMatchObject({ exit_code: -1, stdout: null });
    expect(done!.value.stderr).toMatch(/no command runs here/);
    peer.ws.close();
    expect(existsSync(path.join(workspace, "ran"))).toBe(false);
  });
});
