/**
 * `terminal`: OpenHands' terminal tool over a {@link TerminalSession}. Its observations carry the
 * same texts as OpenHands' (`prefix`, `suffix`, the timeout notes), so a model behaves as it does
 * against the reference:
 *
 * - A command returns when the prompt comes back (`exit_code` = the command's), or after
 *   `softTimeoutSeconds` without new output when no `timeout` is given, or after `timeout` seconds:
 *   then `exit_code` is -1, `timeout` true, and the command keeps running. The model may send `""`
 *   (more output), text with `is_input` (standard input), a key with `is_input` (`C-c`, any
 *   `C-<letter>`, `ENTER`, `UP`, `TAB`, `ESC`… as OpenHands names them), or `reset`.
 * - A new command while one runs is not executed (the note says why).
 * - An interrupt sends Ctrl-C to the running command and returns what it printed.
 * - `reset` replaces the shell (environment, working directory and jobs are lost).
 */
import type { TerminalAction, TerminalObservation } from "@acs-toolkit/schema";
import { terminalDescription, terminalParameters } from "../prompts/tool-descriptions.js";
import { NO_SANDBOX_MESSAGE, SANDBOX_PATH, type Sandbox } from "../sandbox/sandbox.js";
import { watchDirectoryQuota, type DirectoryQuota } from "../sandbox/directory-quota.js";
import type { ProcessSpawner } from "../sandbox/fork-server.js";
import { watchProcessMemory, type ProcessMemoryWatch } from "../sandbox/process-memory.js";
import { TerminalSession, type WaitResult } from "../terminal/session.js";
import { buildAction, llmParameters, toolDefinition } from "./arguments.js";
import { maybeTruncate } from "./truncate.js";
import { text, ToolUnavailableError, type AgentTool, type ToolContext } from "./tool.js";

export interface TerminalToolOptions {
  /** The sandbox commands run in; undefined when none is available and host execution is not allowed. */
  sandbox: Sandbox | undefined;
  /** Starts the shell (one process start per turn of the event loop). */
  spawner: ProcessSpawner;
  workspaceDir: string;
  /** The commands' `/tmp` on disk (see `SandboxRequest.tmpDir`). */
  tmpDir?: string;
  /** Environment of the shell besides PATH, HOME, TERM and LANG (the secrets). */
  env: Record<string, string>;
  /** Seconds without new output after which a command without `timeout` returns (default 10, as OpenHands). */
  softTimeoutSeconds?: number;
  /** Cap on the model's `timeout`, in seconds (default 3,600). */
  maxTimeoutSeconds?: number;
  /** Longest output kept in an observation, in characters (default 30,000: head and tail are kept). */
  maxOutputChars?: number;
}

const TIMEOUT_MESSAGE_TEMPLATE =
  "You may wait longer to see additional output by sending empty command '', send other commands to interact with the current process, send keys to interrupt/kill the command, or use the timeout parameter in terminal for future commands.";
const CONTINUATION_PREFIX = "[Below is the output of the previous command.]\n";
const mebibytes = (bytes: number) => `${Math.round((bytes / 1024 ** 2) * 10) / 10} MiB`;
/** Named keys the model may send with `is_input`, as OpenHands' PTY terminal writes them (`subprocess_terminal.py`). */
const SPECIAL_KEYS: Readonly<Record<string, string>> = {
  ENTER: "\n",
  TAB: "\t",
  BS: "\x7f",
  ESC: "\x1b",
  UP: "\x1b[A",
  DOWN: "\x1b[B",
  RIGHT: "\x1b[C",
  LEFT: "\x1b[D",
  HOME: "\x1b[H",
  END: "\x1b[F",
  PGUP: "\x1b[5~",
  PGDN: "\x1b[6~",
};

/** The bytes of a special key (a named key, or `C-x`, `CTRL-x`, `CTRL+x` for a letter), or undefined for text. */
function specialKey(command: string): string | undefined {
  const upper = command.trim().toUpperCase();
  const named = SPECIAL_KEYS[upper];
  if (named !== undefined) return named;
  const letter = /^(?:C-|CTRL-|CTRL\+)([A-Z])$/.exec(upper)?.[1];
  return letter ? String.fromCharCode(letter.charCodeAt(0) & 0x1f) : undefined;
}

export function terminalTool(options: TerminalToolOptions): AgentTool {
  const soft = options.softTimeoutSeconds ?? 10;
  const definition = toolDefinition("TerminalTool", {
    title: "terminal",
    description: terminalDescription(soft),
    annotations: { title: "terminal", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  });
  const terminal = new Terminal(options, soft);
  return {
    name: "terminal",
    definition,
    parameters: llmParameters("TerminalAction", terminalParameters(soft)),
    readOnly: false,
    toAction: (args) => buildAction("TerminalAction", args),
    execute: (action, context) => terminal.execute(action as TerminalAction, context),
    close: async () => terminal.close(),
  };
}

class Terminal {
  private active: TerminalSession | undefined;
  /** Processes of the active shell killed for memory (by its memory group or the watch), as last reported. */
  private oomKills = 0;
  /** Without a memory group: the watch of the shell's processes' memory together. */
  private memoryWatch: ProcessMemoryWatch | undefined;
  /** The size watch of `/tmp` on disk while the shell lives. */
  private tmpQuota: DirectoryQuota | undefined;
  /** Set when the watch stopped the shell, until an observation says so. */
  private tmpOver: string | undefined;

  constructor(
    private readonly options: TerminalToolOptions,
    private readonly softSeconds: number,
  ) {}

  close(): void {
    this.tmpQuota?.stop();
    this.tmpQuota = undefined;
    this.memoryWatch?.stop();
    this.memoryWatch = undefined;
    this.active?.kill();
    this.active = undefined;
  }

  /** The conversation's shell, started on first use and again after it exited or was reset. */
  private async shell(): Promise<TerminalSession> {
    const { sandbox, workspaceDir, tmpDir } = this.options;
    if (!sandbox) throw new ToolUnavailableError(NO_SANDBOX_MESSAGE);
    if (this.active?.alive) return this.active;
    const env = { ...this.options.env, PATH: SANDBOX_PATH, HOME: workspaceDir, TERM: "dumb", LANG: "C.UTF-8" };
    this.tmpQuota?.stop();
    this.memoryWatch?.stop();
    this.memoryWatch = undefined;
    const keepChars = Math.max(1 << 20, this.options.maxOutputChars ?? 0);
    const session = await TerminalSession.start({ sandbox, spawner: this.options.spawner, workspaceDir, tmpDir, env, keepChars });
    this.active = session;
    this.oomKills = 0;
    const memoryBytes = sandbox.limits?.memoryBytes;
    if (sandbox.memoryBound === "process" && memoryBytes && session.pid) {
      this.memoryWatch = watchProcessMemory({ rootPid: session.pid, limitBytes: memoryBytes });
    }
    const limitBytes = sandbox.limits?.tmpBytes;
    if (tmpDir && limitBytes) {
      this.tmpQuota = watchDirectoryQuota({
        dir: tmpDir,
        limitBytes,
        onOver: (size, allowed) => {
          this.tmpOver =
            `\n[The shell was stopped: /tmp holds ${mebibytes(size.bytes)}${size.complete ? "" : " or more (too many files to count)"}, ` +
            `over its limit of ${mebibytes(allowed)}. Every process of the terminal was killed; remove files from /tmp before writing more.]`;
          session.kill();
        },
      });
    }
    return session;
  }

  async execute(action: TerminalAction, context: ToolContext): Promise<TerminalObservation> {
    const command = action.command;
    const isInput = action.is_input ?? false;
    if (action.reset) {
      if (isInput) return this.error(command, "ERROR: Cannot use reset=True with is_input=True.");
      this.close();
      await this.shell();
      if (!command.trim()) {
        return this.observation("[RESET]", "Terminal session has been reset. All previous environment variables and session state have been lost.", 0, {
          prefix: "",
          suffix: "",
        });
      }
    }
    const session = await this.shell();
    const hardMs = action.timeout != null ? Math.min(action.timeout, this.options.maxTimeoutSeconds ?? 3600) * 1000 : undefined;
    const limits = { hardMs, noChangeMs: hardMs === undefined ? this.softSeconds * 1000 : undefined, signal: context.signal };

    if (session.running) {
      if (!isInput && command.trim() !== "") {
        return this.observation(command, "", -1, {
          prefix: "",
          suffix: `\n[Your command "${command}" is NOT executed. The previous command is still running - You CANNOT send new commands until the previous command is completed. By setting \`is_input\` to \`true\`, you can interact with the current process: ${TIMEOUT_MESSAGE_TEMPLATE}]`,
        });
      }
      if (isInput) session.input(specialKey(command) ?? `${command}\n`);
      return this.finish(command, await session.wait(limits), CONTINUATION_PREFIX, action.timeout ?? undefined, session);
    }
    if (isInput) return this.error(command, "ERROR: No previous running command to interact with.");
    if (command.trim() === "") return this.error(command, "ERROR: No previous running command to retrieve logs from.");
    if (context.signal.aborted) return this.error(command, "ERROR: The command was not run: the agent was interrupted.");
    session.send(command);
    return this.finish(command, await session.wait(limits), "", action.timeout ?? undefined, session);
  }

  /** An observation for the end of a wait; an interrupt first sends Ctrl-C and collects what follows. */
  private async finish(
    command: string,
    result: WaitResult,
    prefix: string,
    timeout: number | undefined,
    session: TerminalSession,
  ): Promise<TerminalObservation> {
    let { output, outcome } = result;
    if (outcome === "interrupted") {
      const after = await session.interrupt(2_000);
      ({ output } = after);
      outcome = after.outcome === "completed" ? "completed" : "no_change_timeout";
    }
    const exitCode = outcome === "completed" ? session.state.exitCode : -1;
    const note = this.limitNotes(session);
    output = this.clip(output);
    switch (outcome) {
      case "completed":
        return this.observation(command, output, exitCode, { prefix, suffix: note + this.completedMeta(exitCode).suffix });
      case "exited":
        return this.observation(command, output, -1, { prefix, suffix: `${note}\n[The shell exited. A new one starts with the next command (environment and working directory are reset).]` });
      case "hard_timeout":
        return this.observation(command, output, -1, { prefix, suffix: `${note}\n[The command timed out after ${timeout} seconds. ${TIMEOUT_MESSAGE_TEMPLATE}]` }, true);
      default:
        return this.observation(command, output, -1, { prefix, suffix: `${note}\n[The command has no new output after ${this.softSeconds} seconds. ${TIMEOUT_MESSAGE_TEMPLATE}]` }, true);
    }
  }

  /** What the last command met: /tmp over its limit (the shell was stopped), processes killed for the memory limit. */
  private limitNotes(session: TerminalSession): string {
    const tmp = this.tmpOver ?? "";
    this.tmpOver = undefined;
    const limitBytes = session.cgroup?.limitBytes ?? this.options.sandbox?.limits?.memoryBytes;
    const kills = session.cgroup ? session.cgroup.oomKills() : (this.memoryWatch?.kills ?? 0);
    const killed = kills - this.oomKills;
    this.oomKills = kills;
    if (killed <= 0 || !limitBytes) return tmp;
    return `${tmp}\n[${killed === 1 ? "A process was" : `${killed} processes were`} killed: the commands of this conversation together reached their memory limit of ${mebibytes(limitBytes)}.]`;
  }

  private completedMeta(exitCode: number) {
    return { prefix: "", suffix: `\n[The command completed with exit code ${exitCode}.]` };
  }

  private error(command: string, message: string): TerminalObservation {
    return { ...this.observation(command, message, null, { prefix: "", suffix: "" }), is_error: true };
  }

  private observation(
    command: string,
    output: string,
    exitCode: number | null,
    meta: { prefix: string; suffix: string },
    timedOut = false,
  ): TerminalObservation {
    const state = this.active?.state;
    return {
      content: [text(output)],
      is_error: false,
      command,
      exit_code: exitCode,
      timeout: timedOut,
      metadata: {
        exit_code: exitCode ?? -1,
        pid: state?.pid ?? -1,
        username: state?.username || null,
        hostname: state?.hostname || null,
        working_dir: state?.workingDir ?? this.options.workspaceDir,
        py_interpreter_path: state?.pythonPath ?? null,
        prefix: meta.prefix,
        suffix: meta.suffix,
      },
      kind: "TerminalObservation",
    };
  }

  /**
   * Head and tail of a long output around OpenHands' notice, as its terminal session cuts a
   * command's output (`maybe_truncate`, no file saved: `full_output_save_dir` stays unset). The
   * session keeps at least a mebibyte of head and tail, so a middle it dropped is inside the cut.
   */
  private clip(output: string): string {
    return maybeTruncate(output, this.options.maxOutputChars ?? 30_000);
  }
}
