/**
 * A persistent shell per conversation, as OpenHands' terminal tool keeps one (it drives bash in
 * tmux and reads a PS1 marker). Here bash runs interactively on a pseudo-terminal made by
 * util-linux `script`, inside the conversation's sandbox, so the working directory, environment,
 * functions and background jobs persist between commands, and Ctrl-C, Ctrl-D and Ctrl-Z reach the
 * running command the way a terminal delivers them (the line discipline signals the foreground job).
 *
 * Protocol:
 * - Each command is sent as one line (see {@link commandLines}): parsed by `bash -n`, then `eval`ed
 *   in the current shell.
 * - The prompt (PS1) prints a marker with a per-session nonce, the exit code, user, host, working
 *   directory, Python interpreter and last background pid: the end of a command and its metadata.
 * - Input echo is off (`stty -echo`), so the output is exactly what the command wrote.
 */
import { randomBytes } from "node:crypto";
import type { SandboxCgroup } from "../sandbox/cgroups.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import type { ProcessSpawner, SpawnedProcess } from "../sandbox/fork-server.js";

/** What the prompt marker reports after each command. */
export interface PromptState {
  exitCode: number;
  username: string;
  hostname: string;
  workingDir: string;
  pythonPath: string | null;
  /** Last background job's pid, or -1. */
  pid: number;
}

/** How a wait for the running command ended. */
export type WaitOutcome = "completed" | "no_change_timeout" | "hard_timeout" | "interrupted" | "exited";

export interface WaitResult {
  outcome: WaitOutcome;
  /** Output written since the last result (ANSI sequences and carriage returns removed). */
  output: string;
  /** Characters of that output left out of its middle (past {@link SessionOptions.keepChars}). */
  omitted: number;
  /** The prompt state after the command (the previous one while it still runs). */
  state: PromptState;
}

interface SessionOptions {
  sandbox: Sandbox;
  spawner: ProcessSpawner;
  workspaceDir: string;
  tmpDir?: string;
  env: Record<string, string>;
  /**
   * Characters of one command's output held (at most half again as many between two drops): its
   * first and last halves are kept and the middle dropped as it comes (a command that floods its
   * output costs neither memory nor time). Default 1,048,576.
   */
  keepChars?: number;
}

const ANSI = new RegExp(String.raw`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]`, "g");
const SEP = "\x1f";
/** Longest physical line written to the terminal (the canonical-mode limit is 4,095 bytes). */
const LINE_BYTES = 1_000;

/**
 * The line(s) that run `command` verbatim in the current shell: the text goes into `__acs_c` in
 * ANSI-C quoting (split into continuation lines so that no line reaches the terminal's 4,096-byte
 * canonical limit), is parsed by `bash -n` (a child of the sandboxed shell: parsing runs nothing),
 * then `eval`ed. A syntax error is answered with bash's message and status 2 and never reaches the
 * interactive shell, which would wait for the rest of a quote, or print its prompt before the line
 * ends. The status is kept in `__acs_st`; a job stopped by a signal (Ctrl-C) abandons the rest of
 * the line, `__acs_p` stays set, and the prompt reports `$?` (130).
 */
function commandLines(command: string): string {
  const pieces: string[] = [];
  let current = "";
  for (const char of command) {
    let token: string;
    const code = char.codePointAt(0)!;
    if (char === "\\") token = "\\\\";
    else if (char === "'") token = "\\'";
    else if (char === "\n") token = "\\n";
    else if (code < 0x20 || code === 0x7f) token = `\\x${code.toString(16).padStart(2, "0")}`;
    else token = char;
    if (Buffer.byteLength(current) + Buffer.byteLength(token) > LINE_BYTES) {
      pieces.push(current);
      current = "";
    }
    current += token;
  }
  pieces.push(current);
  const text = pieces.map((piece) => `$'${piece}'`).join("\\\n");
  return (
    `__acs_c=${text}; if __acs_e=$(bash -n 2>&1 <<<"$__acs_c"); then __acs_p=1; eval "$__acs_c"; __acs_st=$?; __acs_p=; ` +
    `else printf '%s\\n' "$__acs_e"; __acs_st=2; fi\n`
  );
}

export class TerminalSession {
  private readonly nonce = randomBytes(6).toString("hex");
  private readonly child: SpawnedProcess;
  private readonly decoder = new TextDecoder();
  /** Output not yet returned (raw, markers included): its head, then its tail once the middle was dropped. */
  private buffer = "";
  /** Characters dropped from the middle of {@link buffer} since the last result. */
  private omitted = 0;
  /** Where the search for the prompt marker resumes (everything before was searched). */
  private scanFrom = 0;
  private readonly keepChars: number;
  private lastChange = Date.now();
  private listeners = new Set<() => void>();
  private exited = false;
  /** True from a command's start until its prompt marker. */
  running = false;
  /** True once bash has read the running command's line. */
  private started = false;
  state: PromptState;

  private constructor(
    child: SpawnedProcess,
    workspaceDir: string,
    /** The shell's groups (see `SandboxedCommand.cgroup`), released when the shell exits. */
    readonly cgroup?: SandboxCgroup,
    keepChars = 1 << 20,
  ) {
    this.child = child;
    this.keepChars = keepChars;
    this.state = { exitCode: 0, username: "", hostname: "", workingDir: workspaceDir, pythonPath: null, pid: -1 };
    child.stdout.on("data", (chunk: Buffer) => this.take(chunk));
    child.stderr.on("data", (chunk: Buffer) => this.take(chunk));
    child.on("exit", () => {
      this.exited = true;
      cgroup?.release();
      this.notify();
    });
    child.on("error", () => {
      this.exited = true;
      cgroup?.release();
      this.notify();
    });
    child.stdin.on("error", () => {
      // The shell went away; `exited` reports it.
    });
  }

  /** The host pid of the sandbox's first process (every process of the shell is below it). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Starts bash in the sandbox and waits for its first prompt. */
  static async start(options: SessionOptions): Promise<TerminalSession> {
    const wrapped = options.sandbox.wrap({
      argv: ["script", "-qfec", "bash --noediting --norc --noprofile -i", "/dev/null"],
      workspaceDir: options.workspaceDir,
      tmpDir: options.tmpDir,
      env: options.env,
    });
    let child: SpawnedProcess;
    try {
      child = await options.spawner.spawn(wrapped);
    } catch (error) {
      wrapped.cgroup?.release();
      throw error;
    }
    const session = new TerminalSession(child, options.workspaceDir, wrapped.cgroup, options.keepChars);
    child.stdin.write(session.initLine());
    session.running = true;
    const first = await session.wait({ noChangeMs: 30_000 });
    if (first.outcome !== "completed") {
      session.kill();
      throw new Error(`the shell did not start (${first.outcome}): ${first.output.slice(-500)}`);
    }
    return session;
  }

  /** One line that sets the terminal and the prompt up (its own echo comes before the first marker). */
  private initLine(): string {
    const marker = `${SEP}ACS${this.nonce}${SEP}`;
    // Exit code: `$?` when the command line was abandoned (a job stopped by a signal), else `__acs_st`.
    const ps1 = `\\n${marker}\${__acs_p:+$?}${SEP}\${__acs_st}${SEP}\\u${SEP}\\h${SEP}\${PWD}${SEP}\${__acs_py}${SEP}\${!:--1}${marker}END\\n`;
    return [
      "stty -echo -onlcr 2>/dev/null",
      "unset HISTFILE",
      "PS2=''",
      "PROMPT_COMMAND='__acs_py=$(command -v python3 || command -v python)'",
      `PS1=$'${ps1.replace(/'/g, "\\'")}'`,
    ].join("; ") + "\n";
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** Runs a command (the previous one must have completed). */
  send(command: string): void {
    this.buffer = "";
    this.omitted = 0;
    this.scanFrom = 0;
    this.running = true;
    this.started = false;
    this.lastChange = Date.now();
    // The start marker says bash has read the whole line: from then on a Ctrl-C reaches the
    // command instead of flushing the unread line.
    this.child.stdin.write(`printf '${this.startMarker().split(SEP).join("\\037")}'; ${commandLines(command)}`);
  }

  /** Resolves once the running command has started (its line was read), or after `ms`. */
  private whenStarted(ms: number): Promise<void> {
    if (this.started || this.exited) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const check = () => {
        if (this.started || this.exited) done();
      };
      const timer = setTimeout(done, ms);
      this.listeners.add(check);
    });
  }

  private startMarker(): string {
    return `${SEP}ACS${this.nonce}START${SEP}`;
  }

  /**
   * Interrupts the running command: Ctrl-C once bash has read its line, then waits for the prompt
   * (up to `noChangeMs` without output). The output is everything since the last result, taken in
   * one piece, so that it does not depend on how much had been read when the interrupt came.
   */
  async interrupt(noChangeMs: number): Promise<WaitResult> {
    await this.whenStarted(2_000);
    this.input("\x03");
    const result = await this.wait({ noChangeMs });
    // Bash ends the line of a job killed by Ctrl-C with a newline of its own.
    return { ...result, output: result.output.replace(/\n+$/, "") };
  }

  /** Writes raw input to the running command (text, or a control character such as `\x03`). */
  input(text: string): void {
    this.child.stdin.write(text);
  }

  /**
   * Waits for the running command's prompt, for `noChangeMs` without new output, for `hardMs` in
   * all, or for `signal`. Returns the output written since the last call; on `signal` ("interrupted")
   * none: the output stays for {@link interrupt}.
   */
  wait(limits: { noChangeMs?: number; hardMs?: number; signal?: AbortSignal }): Promise<WaitResult> {
    const started = Date.now();
    this.lastChange = Date.now();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (outcome: WaitOutcome) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        limits.signal?.removeEventListener("abort", onAbort);
        resolve(this.collect(outcome));
      };
      const check = () => {
        if (this.findPrompt()) return finish("completed");
        if (this.exited) return finish("exited");
        const now = Date.now();
        if (limits.hardMs !== undefined && now - started >= limits.hardMs) return finish("hard_timeout");
        if (limits.noChangeMs !== undefined && now - this.lastChange >= limits.noChangeMs) return finish("no_change_timeout");
        const deadlines = [
          limits.hardMs !== undefined ? started + limits.hardMs : Infinity,
          limits.noChangeMs !== undefined ? this.lastChange + limits.noChangeMs : Infinity,
        ];
        clearTimeout(timer);
        const next = Math.min(...deadlines);
        if (next !== Infinity) timer = setTimeout(check, Math.max(1, next - now));
      };
      const onAbort = () => finish("interrupted");
      if (limits.signal?.aborted) return finish("interrupted");
      limits.signal?.addEventListener("abort", onAbort, { once: true });
      this.listeners.add(check);
      check();
    });
  }

  /** Stops the shell and every process of it. */
  kill(): void {
    if (this.exited) return;
    this.child.kill("SIGKILL");
  }

  private take(chunk: Buffer): void {
    const before = this.buffer.length;
    this.buffer += this.decoder.decode(chunk, { stream: true });
    if (!this.started) {
      const marker = this.startMarker();
      const start = this.buffer.indexOf(marker, Math.max(0, before - marker.length));
      if (start >= 0) {
        this.started = true;
        this.buffer = this.buffer.slice(0, start) + this.buffer.slice(start + marker.length);
      }
    }
    this.dropMiddle();
    this.lastChange = Date.now();
    this.notify();
  }

  /**
   * Keeps the buffer under about 1.5 × keepChars: the first half of keepChars and the last half stay.
   * The prompt marker comes last, so it is always in the tail.
   */
  private dropMiddle(): void {
    const half = Math.floor(this.keepChars / 2);
    if (this.buffer.length <= this.keepChars + half) return;
    const dropped = this.buffer.length - 2 * half;
    this.buffer = this.buffer.slice(0, half) + this.buffer.slice(-half);
    this.omitted += dropped;
    this.scanFrom = Math.max(half, this.scanFrom - dropped);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private markerAt(): { start: number; end: number; fields: string[] } | undefined {
    const marker = `${SEP}ACS${this.nonce}${SEP}`;
    const start = this.buffer.indexOf(marker, this.scanFrom);
    if (start < 0) {
      this.scanFrom = Math.max(this.scanFrom, this.buffer.length - marker.length);
      return undefined;
    }
    this.scanFrom = start;
    const endMarker = `${marker}END`;
    const close = this.buffer.indexOf(endMarker, start + marker.length);
    if (close < 0) return undefined;
    const fields = this.buffer.slice(start + marker.length, close).split(SEP);
    let end = close + endMarker.length;
    if (this.buffer[end] === "\r") end++;
    if (this.buffer[end] === "\n") end++;
    return { start, end, fields };
  }

  /** Reads a complete prompt marker, if one arrived, into `state`. */
  private findPrompt(): boolean {
    return this.markerAt() !== undefined;
  }

  private collect(outcome: WaitOutcome): WaitResult {
    if (outcome === "interrupted") return { outcome, output: "", omitted: 0, state: this.state };
    const omitted = this.omitted;
    this.omitted = 0;
    this.scanFrom = 0;
    let raw = this.buffer;
    if (outcome === "completed") {
      const marker = this.markerAt()!;
      const [abandoned = "", status = "", username = "", hostname = "", workingDir = "", python = "", pid = "-1"] = marker.fields;
      this.state = {
        exitCode: Number.parseInt(abandoned || status, 10) || 0,
        username,
        hostname,
        workingDir,
        pythonPath: python || null,
        pid: Number.parseInt(pid, 10) || -1,
      };
      raw = this.buffer.slice(0, marker.start);
      this.buffer = this.buffer.slice(marker.end);
      this.running = false;
    } else {
      // Keep a prompt marker that has started to arrive for the next wait.
      const partial = this.buffer.lastIndexOf(`${SEP}ACS${this.nonce}`);
      const cut = partial >= 0 ? Math.max(0, partial - 1) : this.buffer.length;
      raw = this.buffer.slice(0, cut);
      this.buffer = this.buffer.slice(cut);
      if (outcome === "exited") this.running = false;
    }
    // The prompt starts with a newline of its own; the command's last line end goes too.
    const output = raw.replace(ANSI, "").replace(/\r/g, "").replace(/\n$/, "").replace(/\n$/, "");
    return { outcome, output, omitted, state: this.state };
  }
}
