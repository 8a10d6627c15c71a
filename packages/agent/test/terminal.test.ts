import { chmodSync, existsSync, writeFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TerminalAction, TerminalObservation } from "@acs-toolkit/schema";
import {
  AgentRuntime,
  NO_SANDBOX_MESSAGE,
  SecretMasker,
  bubblewrapSandbox,
  confinementProblem,
  detectBubblewrap,
  hostExecution,
  openAiLlmFactory,
  probeBubblewrap,
  type Sandbox,
} from "../src/index.js";
import { Spawner } from "../src/sandbox/spawner.js";
import { SANDBOX_PATH } from "../src/sandbox/sandbox.js";
import { TerminalSession } from "../src/terminal/session.js";
import { terminalTool } from "../src/tools/terminal.js";
import type { AgentTool } from "../src/tools/tool.js";
import { ScriptedLlmServer, userText } from "../src/test-kit/index.js";
import { FOREGROUND_WAIT, expectValidTrajectory, type Harness, useHarness } from "./support.js";

let parent: string;
let workspaceDir: string;
let tool: AgentTool;

function terminal(action: Partial<TerminalAction> & { command: string }, masker = new SecretMasker([])): Promise<TerminalObservation> {
  return tool.execute({ kind: "TerminalAction", ...action }, { workspaceDir, signal: new AbortController().signal, masker }) as Promise<TerminalObservation>;
}
const output = (observation: TerminalObservation) => observation.content?.map((part) => ("text" in part ? part.text : "")).join("") ?? "";

beforeEach(() => {
  parent = realpathSync(mkdtempSync(path.join(tmpdir(), "acs-terminal-")));
  chmodSync(parent, 0o711); // searchable by the sandbox's user when the tests run as root
  workspaceDir = path.join(parent, "workspace");
  mkdirSync(workspaceDir);
});
afterEach(async () => {
  await tool?.close?.();
  rmSync(parent, { recursive: true, force: true });
});

describe("the sandbox", () => {
  it("is found here (bubblewrap works on this machine)", async () => {
    expect((await detectBubblewrap())?.name).toBe("bubblewrap");
  });

  it("shows a read-only path under the host's /tmp (a checkout there), read-only", async () => {
    const shown = path.join(parent, "tools");
    mkdirSync(shown);
    writeFileSync(path.join(shown, "tool.txt"), "from the host");
    tool = terminalTool({ sandbox: bubblewrapSandbox({ readOnlyPaths: [shown] }), spawner: new Spawner(), workspaceDir, tmpDir: path.join(parent, "tmp"), env: {} });
    expect(await terminal({ command: `cat ${shown}/tool.txt` })).toMatchObject({ exit_code: 0, content: [{ text: "from the host" }] });
    expect((await terminal({ command: `echo x > ${shown}/other.txt` })).exit_code).not.toBe(0);
  });

  it("is refused, with the reason, where it cannot confine commands", async () => {
    expect(await probeBubblewrap({ bwrapPath: "/nonexistent/bwrap" })).toEqual({ problem: expect.stringMatching(/^the sandbox did not start/) });
    expect(await probeBubblewrap({ limits: { processes: 0 } })).toEqual({ problem: "sandbox limit processes must be a positive integer, got 0" });
    // bwrap run by root without a user namespace keeps every capability: the probe sees it.
    const leaky: Sandbox = {
      name: "leaky",
      wrap: ({ argv, workspaceDir, env }) => ({
        command: "bwrap",
        args: ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-pid", "--", ...argv],
        env,
        cwd: workspaceDir,
      }),
    };
    if (process.getuid?.() === 0) expect(await confinementProblem(leaky)).toMatch(/^commands inside would keep capabilities \(CapPrm 0*1[0-9a-f]+/);
  });

  it("lets a command write only inside the workspace", async () => {
    tool = terminalTool({ sandbox: bubblewrapSandbox(), spawner: new Spawner(), workspaceDir, env: {} });
    const marker = `escape-${randomUUID()}`;
    const inside = await terminal({ command: "echo ok > inside.txt && cat inside.txt" });
    expect(inside).toMatchObject({ exit_code: 0, content: [{ text: "ok" }] });
    expect(readFileSync(path.join(workspaceDir, "inside.txt"), "utf8")).toBe("ok\n");

    for (const target of [`/usr/${marker}`, `/etc/${marker}`, `/${marker}`]) {
      const attempt = await terminal({ command: `echo pwned > ${target}` });
      expect(attempt.exit_code, target).not.toBe(0);
      expect(existsSync(target), target).toBe(false);
    }
    // The workspace's parent exists inside only as the sandbox's own mount point: nothing reaches the host.
    for (const target of [path.join(parent, `${marker}.txt`), `${workspaceDir}/../${marker}`]) {
      await terminal({ command: `echo pwned > ${target}` });
      expect(existsSync(target), target).toBe(false);
    }
    // /tmp is the sandbox's own: a write there never reaches the host's /tmp.
    const tmp = await terminal({ command: `echo x > /tmp/${marker} && ls /tmp` });
    expect(tmp.exit_code).toBe(0);
    expect(existsSync(`/tmp/${marker}`)).toBe(false);
  });

  it("without a memory group, bounds the shell's processes together and says so", { timeout: 30_000 }, async () => {
    // Four processes of ~100 MB resident each: every one is under the per-process bound; together they pass 256 MiB.
    tool = terminalTool({ sandbox: bubblewrapSandbox({ limits: { memoryBytes: 256 * 1024 * 1024 } }), spawner: new Spawner(), workspaceDir, env: {} });
    const observation = await terminal({ command: `for i in 1 2 3 4; do node -e "const b = Buffer.alloc(100 << 20, 1); setTimeout(() => {}, 5000)" & done; wait; echo waited`, timeout: 20 });
    expect(output(observation)).toContain("waited");
    expect(observation.metadata?.suffix).toMatch(/processes were killed: the commands of this conversation together reached their memory limit of 256 MiB/);
  });

  it("hides the host beyond the system directories, and has no network", async () => {
    tool = terminalTool({ sandbox: bubblewrapSandbox(), spawner: new Spawner(), workspaceDir, env: {} });
    const llm = await ScriptedLlmServer.start();
    try {
      const hidden = await terminal({ command: `ls ${parent} /root /run /home 2>&1; ls /etc/shadow && cat /etc/shadow | wc -c` });
      expect(output(hidden)).toContain(`ls: cannot access '/root': No such file or directory`);
      expect(output(hidden)).toContain(`ls: cannot access '/run': No such file or directory`);
      expect(output(hidden)).toMatch(/\n0$/); // /etc/shadow is empty inside
      const port = new URL(llm.url).port;
      const network = await terminal({ command: `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>&1; echo status=$?` });
      expect(output(network)).toContain("status=1");
      expect(llm.requests).toHaveLength(0);
    } finally {
      await llm.close();
    }
  });
});

describe("the terminal", () => {
  beforeEach(() => {
    tool = terminalTool({ sandbox: bubblewrapSandbox(), spawner: new Spawner(), workspaceDir, env: { GREETING: "hello" }, softTimeoutSeconds: 1 });
  });

  it("keeps one shell: working directory, variables and functions persist; exit codes and metadata are reported", async () => {
    await terminal({ command: "mkdir -p sub && cd sub && export COLOR=blue && greet() { echo \"$GREETING $1\"; }" });
    const next = await terminal({ command: "pwd; echo $COLOR; greet you; false" });
    expect(output(next)).toBe(`${workspaceDir}/sub\nblue\nhello you`);
    expect(next).toMatchObject({
      command: "pwd; echo $COLOR; greet you; false",
      exit_code: 1,
      timeout: false,
      metadata: { exit_code: 1, working_dir: `${workspaceDir}/sub`, prefix: "", suffix: "\n[The command completed with exit code 1.]" },
    });
    expect(next.metadata?.username).toBeTruthy();
    expect(next.metadata?.py_interpreter_path).toMatch(/python/);
  });

  it("holds only the head and tail of a flood of output, and says how much it left out", async () => {
    const session = await TerminalSession.start({ sandbox: bubblewrapSandbox(), spawner: new Spawner(), workspaceDir, env: { PATH: SANDBOX_PATH }, keepChars: 1_000 });
    try {
      session.send("printf 'HEAD'; head -c 200000 /dev/zero | tr '\\0' x; printf 'TAIL'");
      const result = await session.wait({ noChangeMs: 30_000 });
      expect(result.outcome).toBe("completed");
      expect(result.output.length).toBeLessThanOrEqual(1_500); // keepChars, and at most half again before the middle is dropped
      expect(result.output).toMatch(/^HEADx+TAIL$/);
      expect(result.output.length + result.omitted).toBe(200_008);
    } finally {
      session.kill();
    }
  });

  it("cuts a hanging command at its timeout; Ctrl-C stops it; the shell goes on", async () => {
    const hung = await terminal({ command: "echo waiting; sleep 1000", timeout: 1 });
    expect(hung).toMatchObject({ exit_code: -1, timeout: true, content: [{ text: "waiting" }] });
    expect(hung.metadata?.suffix).toMatch(/^\n\[The command timed out after 1 seconds\. You may wait longer/);

    const refused = await terminal({ command: "echo other" });
    expect(refused.metadata?.suffix).toContain('[Your command "echo other" is NOT executed. The previous command is still running');

    const stopped = await terminal({ command: "C-c", is_input: true });
    expect(stopped).toMatchObject({ exit_code: 130, metadata: { prefix: "[Below is the output of the previous command.]\n" } });
    expect(await terminal({ command: "echo after" })).toMatchObject({ exit_code: 0, content: [{ text: "after" }] });
  });

  it("on an interrupt, reports output that arrives after it as output read before it (taken whole, not per read)", async () => {
    await terminal({ command: "true" }); // the shell is up
    const flag = path.join(workspaceDir, "started.flag");
    const interrupt = new AbortController();
    const running = tool.execute(
      { kind: "TerminalAction", command: `echo started; python3 -c "${FOREGROUND_WAIT}"`, timeout: 900 },
      { workspaceDir, signal: interrupt.signal, masker: new SecretMasker([]) },
    ) as Promise<TerminalObservation>;
    // Only microtasks run in this loop, so the event loop reads nothing of the shell's output
    // before the interrupt: the case where the output arrives after it.
    for (const deadline = Date.now() + 30_000; !existsSync(flag) && Date.now() < deadline; ) await Promise.resolve();
    interrupt.abort();
    expect(await running).toMatchObject({ exit_code: 130, content: [{ text: "started" }] });
  });

  it("returns after the soft timeout without output, and gives more output or input on request", async () => {
    const quiet = await terminal({ command: "read -r line; echo got:$line" });
    expect(quiet).toMatchObject({ exit_code: -1, timeout: true });
    expect(quiet.metadata?.suffix).toMatch(/^\n\[The command has no new output after 1 seconds\./);
    const answered = await terminal({ command: "yes please", is_input: true });
    expect(answered).toMatchObject({ exit_code: 0, content: [{ text: "got:yes please" }] });
  });

  it("sends the keys OpenHands names with is_input: an arrow as its escape sequence, ENTER as a line end", async () => {
    expect(await terminal({ command: `read -r line; printf 'got:%q\\n' "$line"` })).toMatchObject({ exit_code: -1 });
    expect(await terminal({ command: "up", is_input: true })).toMatchObject({ exit_code: -1 });
    expect(output(await terminal({ command: "ENTER", is_input: true }))).toContain("got:$'\\E[A'");
  });

  it("answers input with no running command, a bad syntax, and a reset as OpenHands does", async () => {
    expect(await terminal({ command: "x", is_input: true })).toMatchObject({ is_error: true, content: [{ text: "ERROR: No previous running command to interact with." }] });
    expect(await terminal({ command: "" })).toMatchObject({ is_error: true, content: [{ text: "ERROR: No previous running command to retrieve logs from." }] });
    const bad = await terminal({ command: "echo 'unterminated" });
    expect(bad.exit_code).toBe(2);
    expect(output(bad)).toContain("unexpected EOF");
    await terminal({ command: "export KEPT=1" });
    const reset = await terminal({ command: "", reset: true });
    expect(reset).toMatchObject({ command: "[RESET]", exit_code: 0, content: [{ text: "Terminal session has been reset. All previous environment variables and session state have been lost." }] });
    expect(output(await terminal({ command: "echo [$KEPT]" }))).toBe("[]");
  });

  it("starts a new shell after `exit`", async () => {
    const exited = await terminal({ command: "exit 3" });
    expect(exited.exit_code).toBe(-1);
    expect(exited.metadata?.suffix).toContain("The shell exited");
    expect(await terminal({ command: "echo alive" })).toMatchObject({ exit_code: 0, content: [{ text: "alive" }] });
  });

  it("runs long commands and multi-line scripts verbatim", async () => {
    const long = `echo ${"x".repeat(9000)} | wc -c`;
    expect(output(await terminal({ command: long }))).toBe("9001");
    const script = "cat <<'EOF' > script.sh\nprintf '%s\\n' \"a 'quoted' \\\\ line\"\nEOF\nbash script.sh";
    expect(output(await terminal({ command: script }))).toBe("a 'quoted' \\ line");
  });
});

describe("without a sandbox", () => {
  const start = useHarness();
  let h: Harness;

  it("refuses the terminal with a clear AgentErrorEvent unless host execution is allowed", async () => {
    h = await start({ runtime: { sandbox: "none" } });
    h.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "touch refused.txt" } }] }, { text: "I cannot run commands here." });
    await h.conversation.sendMessage(userText("Touch"), { run: true });
    await h.conversation.idle();
    const [error] = h.host.ofKind("AgentErrorEvent");
    expect(error!.error).toBe(`Error executing tool 'terminal': ${NO_SANDBOX_MESSAGE}`);
    expect(existsSync(path.join(h.host.workspaceDir, "refused.txt"))).toBe(false);
    expect(h.conversation.problems).toContain(NO_SANDBOX_MESSAGE);
    const [prompt] = h.host.ofKind("SystemPromptEvent");
    expect(prompt!.dynamic_context?.text).toContain(NO_SANDBOX_MESSAGE);
    expectValidTrajectory(h.host);
  });

  it("runs commands on the host with allowHostExecution", async () => {
    h = await start({ runtime: { sandbox: "none", allowHostExecution: true } });
    h.llm.play({ toolCalls: [{ name: "terminal", arguments: { command: "touch host.txt" } }] }, { text: "done" });
    await h.conversation.sendMessage(userText("Touch"), { run: true });
    await h.conversation.idle();
    expect(existsSync(path.join(h.host.workspaceDir, "host.txt"))).toBe(true);
    expect(await h.runtime.sandbox()).toMatchObject({ name: "host" });
  });

  it("refuses hostExecution() without the explicit flag", () => {
    expect(() => new AgentRuntime({ sandbox: hostExecution(), llm: openAiLlmFactory() })).toThrow("needs allowHostExecution: true");
  });
});

describe("secrets", () => {
  const start = useHarness();
  let h: Harness;

  it("reach commands as environment variables, and never the LLM or a recorded event", async () => {
    const secret = "ghp_supersecretvalue42";
    h = await start({ settings: { secrets_store: { custom_secrets: { DEPLOY_TOKEN: { secret, description: "deploys" } }, provider_tokens: { github: { token: "gho_providertoken77" } } } } });
    h.llm.play(
      { toolCalls: [{ name: "terminal", arguments: { command: 'echo "token=$DEPLOY_TOKEN gh=$GITHUB_TOKEN"; echo -n "$DEPLOY_TOKEN" | wc -c' } }] },
      { toolCalls: [{ name: "terminal", arguments: { command: 'echo "$DEPLOY_TOKEN" > leak.txt; cat leak.txt' } }] },
      { text: "done" },
    );
    await h.conversation.sendMessage(userText("Use the token"), { run: true });
    await h.conversation.idle();
    const [first, second] = h.host.ofKind("ObservationEvent");
    expect(output(first!.observation as TerminalObservation)).toBe("token=<secret-hidden> gh=<secret-hidden>\n22");
    expect(output(second!.observation as TerminalObservation)).toBe("<secret-hidden>");
    const sentToLlm = JSON.stringify(h.llm.requests.map((request) => request.body.messages));
    expect(sentToLlm).not.toContain("supersecretvalue");
    expect(sentToLlm).not.toContain("providertoken");
    expect(JSON.stringify(h.host.events)).not.toContain("supersecretvalue");
    expect(readFileSync(path.join(h.host.workspaceDir, "leak.txt"), "utf8")).toBe(`${secret}\n`);
  });
});
