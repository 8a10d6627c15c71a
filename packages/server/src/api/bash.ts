/**
 * The agent server's bash routes (`bash_router.py`, `bash_service.py`, and `sockets.py`'s
 * `/sockets/bash-events`, 1.43.1), which OpenHands' web UI calls to read a conversation's files and
 * git state: POST /api/bash/execute_bash_command and the bash-events socket's protocol
 * ({@link BashEventsSession}, carried by the server's `ws` channel and the browser mock's MSW link).
 *
 * A request names no conversation, only a `cwd`: the command runs for the conversation whose
 * workspace (`<workspaceRoot>/<conversation_id>`) holds it, resolved here without a disk (`..`
 * segments lexically, never above the workspace root), and run by the host's
 * {@link CommandRunner}, which checks the disk (no symbolic link on the way) and runs it in that
 * conversation's sandbox. Whatever cannot run is answered in the agent server's shape for a command
 * it could not start: a BashOutput with `exit_code` -1 and a `stderr` that says why; a host without
 * a runner (`--runtime record`, the mocks) runs nothing and says so.
 */
import type { BashCommand, BashError, BashOutput, ExecuteBashRequest, ValidationError } from "@acs-toolkit/schema";
import { RequestValidationError } from "../core/errors.js";
import { recordedTimestamp } from "../store/time.js";
import { readJson } from "./body.js";
import type { ApiDeps } from "./deps.js";
import { jsonReply } from "./reply.js";
import type { Operation } from "./types.js";

/** A command to run in a conversation's sandbox, its `cwd` resolved (lexically) inside the workspace. */
export interface CommandRequest {
  conversationId: string;
  /** `<workspaceRoot>/<conversation_id>`. */
  workspaceDir: string;
  /** Absolute, without `.` or `..` segments: the workspace or a folder below it. */
  cwd: string;
  command: string;
  timeoutSeconds: number;
  /** Output as it comes. */
  onOutput(stream: "stdout" | "stderr", text: string): void;
  /** Kills the command (its socket closed). */
  signal?: AbortSignal;
}

/** How a command ended, or why it did not run (one sentence). */
export type CommandOutcome = { exitCode: number; timedOut: boolean; notes?: readonly string[] } | { refused: string };

/** Runs the bash routes' commands (the reference server: in the conversation's sandbox). */
export interface CommandRunner {
  run(request: CommandRequest): Promise<CommandOutcome>;
}

/** The answer of a host without a runner. */
export const NO_COMMANDS =
  "no command runs here: this server has no sandbox to run it in (the reference server runs commands only with its agent runtime, --runtime agent; the mock runs no commands)";

/** Characters of one stream in one BashOutput, as the agent server splits them (MAX_CONTENT_CHAR_LENGTH). */
export const MAX_OUTPUT_PIECE = 1024 * 1024;

/** The workspace root of a host without a disk (as api/workspace.ts). */
const DEFAULT_WORKSPACE_ROOT = "/workspace";

const CANONICAL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The cause every refusal's `stderr` starts with (the agent server's, for a command it could not start). */
const failed = (why: string) => `Error executing command: ${why}`;

/** The absolute path's segments, `.` and `..` resolved (`..` at the top stays there, as POSIX's `/..`). */
function segments(absolute: string): string[] {
  const out: string[] = [];
  for (const part of absolute.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return out;
}

/** Where `cwd` lies: a conversation's workspace (or below it), or why it is none (lexical: the disk is the runner's). */
function locate(root: string, cwd: string | null | undefined): { conversationId: string; workspaceDir: string; cwd: string } | { refused: string } {
  const where = `a folder inside a conversation's workspace (${root}/<conversation_id>)`;
  if (cwd === null || cwd === undefined || cwd === "") return { refused: `no cwd was given: it must be ${where}` };
  const rootParts = segments(root);
  const parts = segments(cwd.startsWith("/") ? cwd : `${root}/${cwd}`);
  const inside = parts.length > rootParts.length && rootParts.every((part, index) => parts[index] === part);
  if (!inside) return { refused: `cwd ${JSON.stringify(cwd)} is not ${where}` };
  const conversationId = parts[rootParts.length]!;
  // Workspaces are named by canonical ids: any other name is no conversation's (and no store is asked about it).
  if (!CANONICAL_ID.test(conversationId)) return { refused: `cwd ${JSON.stringify(cwd)} is not ${where}` };
  return { conversationId, workspaceDir: `/${[...rootParts, conversationId].join("/")}`, cwd: `/${parts.join("/")}` };
}

/**
 * A command's output as BashOutput pieces, the way the agent server cuts them: a stream's text is
 * sent once it passes {@link MAX_OUTPUT_PIECE} characters (a piece of that stream alone), the rest
 * with the exit code in the last piece.
 */
class OutputPieces {
  private order = 0;
  private readonly held = { stdout: "", stderr: "" };

  constructor(
    private readonly commandId: string,
    private readonly emit: (output: BashOutput) => void,
  ) {}

  add(stream: "stdout" | "stderr", text: string): void {
    this.held[stream] += text;
    while (this.held[stream].length > MAX_OUTPUT_PIECE) {
      const piece = this.held[stream].slice(0, MAX_OUTPUT_PIECE);
      this.held[stream] = this.held[stream].slice(MAX_OUTPUT_PIECE);
      this.emit(this.output(null, stream === "stdout" ? piece : null, stream === "stderr" ? piece : null));
    }
  }

  /** The last piece; `note` ends its stderr (a refusal, a timeout, a limit met). */
  end(exitCode: number, note = ""): void {
    const stderr = this.held.stderr && note ? `${this.held.stderr.replace(/\n?$/, "\n")}${note}` : this.held.stderr || note;
    this.emit(this.output(exitCode, this.held.stdout || null, stderr || null));
  }

  private output(exitCode: number | null, stdout: string | null, stderr: string | null): BashOutput {
    return { id: crypto.randomUUID(), timestamp: recordedTimestamp(), command_id: this.commandId, order: this.order++, exit_code: exitCode, stdout, stderr, kind: "BashOutput" };
  }
}

/** A checked request as the command accepted for it (its id is its output's `command_id`). */
function accepted(request: ExecuteBashRequest): BashCommand {
  return { id: crypto.randomUUID(), timestamp: recordedTimestamp(), command: request.command, cwd: request.cwd ?? null, timeout: request.timeout ?? 300, kind: "BashCommand" };
}

/** Runs an accepted command (or says why not), handing its BashOutput pieces to `emit`, the last with its exit code. Never throws. */
async function run(deps: ApiDeps, command: BashCommand, emit: (output: BashOutput) => void, signal?: AbortSignal): Promise<void> {
  const pieces = new OutputPieces(command.id, emit);
  try {
    const place = locate(deps.workspaceRoot ?? DEFAULT_WORKSPACE_ROOT, command.cwd);
    if ("refused" in place) return pieces.end(-1, failed(place.refused));
    const record = await deps.store.getConversation(place.conversationId);
    if (record?.id !== place.conversationId) return pieces.end(-1, failed(`cwd ${JSON.stringify(command.cwd)} is in no conversation's workspace: there is no conversation ${place.conversationId}`));
    if (!deps.commands) return pieces.end(-1, failed(NO_COMMANDS));
    const outcome = await deps.commands.run({ ...place, command: command.command, timeoutSeconds: command.timeout, onOutput: (stream, text) => pieces.add(stream, text), signal });
    if ("refused" in outcome) return pieces.end(-1, failed(outcome.refused));
    const notes = [...(outcome.notes ?? [])];
    if (outcome.timedOut) notes.push(`Command timed out after ${command.timeout} seconds: it and every process it started were killed.`);
    pieces.end(outcome.timedOut ? -1 : outcome.exitCode, notes.join("\n"));
  } catch (error) {
    pieces.end(-1, failed(error instanceof Error ? error.message : String(error)));
  }
}

export function bashOperations(deps: ApiDeps): Record<"executeBashCommand", Operation> {
  return {
    // The last piece, as the agent server answers (`page.items[-1]`): the socket sends them all.
    async executeBashCommand({ body }) {
      const request = await readJson(body);
      deps.validators.body("executeBashCommand", request);
      let last: BashOutput | undefined;
      await run(deps, accepted(request as ExecuteBashRequest), (output) => (last = output));
      return jsonReply(last!);
    },
  };
}

/** What carries a {@link BashEventsSession}'s frames: one connection of a WebSocket server or of a mock. */
export interface BashEventsTransport {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** The bash-events socket's close codes (spec/asyncapi.yaml, channel bashEvents). */
export const BASH_EVENTS_CLOSE = { unauthorized: 4001, goingAway: 1001 } as const;

/** A redundant auth frame (the agent server's `_is_auth_control_message`): ignored once authenticated. */
const isAuthFrame = (value: unknown): value is { type: "auth"; session_api_key?: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value) && (value as { type?: unknown }).type === "auth" && Object.keys(value).every((key) => key === "type" || key === "session_api_key");

/** `loc: msg` of each problem of a frame, its `body` prefix left out (a frame is the whole request). */
const describe = (detail: readonly ValidationError[]) =>
  detail.map(({ loc, msg }) => `${(loc[0] === "body" ? loc.slice(1) : loc).join(".") || "frame"}: ${msg}`).join("; ");

/**
 * One connection of the bash-events socket. The transport calls {@link start} once with the key the
 * connection presented (a header or the query), {@link receive} for each inbound frame (undefined:
 * a binary frame), and {@link closed} when it has gone: its running commands are then killed.
 */
export class BashEventsSession {
  private state: "auth" | "open" | "closed" = "auth";
  private authTimer?: ReturnType<typeof setTimeout>;
  private readonly running = new AbortController();

  constructor(
    private readonly transport: BashEventsTransport,
    private readonly deps: ApiDeps,
    /** How long a connection without a key may take to send its auth frame. */
    private readonly authTimeoutMs = 5_000,
  ) {}

  /** Commands are taken once a key is accepted: the presented one, or an auth frame's within the timeout. */
  start(presented: string | undefined): void {
    if (presented !== undefined) {
      if (!this.deps.keyAccepted(presented)) return this.close(BASH_EVENTS_CLOSE.unauthorized, "Authentication failed");
      this.state = "open";
      return;
    }
    this.authTimer = setTimeout(() => this.close(BASH_EVENTS_CLOSE.unauthorized, "Authentication failed: no auth frame in time"), this.authTimeoutMs);
  }

  receive(text: string | undefined): void {
    if (this.state === "closed") return;
    let value: unknown;
    try {
      if (text === undefined) throw new RequestValidationError([{ loc: ["frame"], msg: "must be a text frame holding JSON, got a binary frame", type: "value_error" }]);
      value = JSON.parse(text);
    } catch (error) {
      if (this.state === "auth") return this.close(BASH_EVENTS_CLOSE.unauthorized, "Authentication failed");
      if (error instanceof RequestValidationError) return this.error("ValidationError", describe(error.detail));
      return this.error("JSONDecodeError", (error as Error).message);
    }
    if (this.state === "auth") {
      clearTimeout(this.authTimer);
      const key = isAuthFrame(value) && typeof value.session_api_key === "string" ? value.session_api_key : undefined;
      if (key === undefined || !this.deps.keyAccepted(key)) return this.close(BASH_EVENTS_CLOSE.unauthorized, "Authentication failed");
      this.state = "open";
      return;
    }
    if (isAuthFrame(value)) return;
    try {
      this.deps.validators.body("executeBashCommand", value);
    } catch (error) {
      if (error instanceof RequestValidationError) return this.error("ValidationError", describe(error.detail));
      return this.error(error instanceof Error ? error.name : "Error", String(error));
    }
    // Echoed before anything waits: clients pair echoes with their requests in the order sent.
    const command = accepted(value as ExecuteBashRequest);
    this.send(command);
    void run(this.deps, command, (output) => this.send(output), this.running.signal);
  }

  /** The peer has gone (or the transport closed): running commands are killed. Idempotent. */
  closed(): void {
    this.state = "closed";
    clearTimeout(this.authTimer);
    this.running.abort();
  }

  /** Closes the connection (its commands killed). */
  close(code: number, reason: string): void {
    if (this.state === "closed") return;
    this.closed();
    this.transport.close(code, reason);
  }

  private send(event: BashCommand | BashOutput | BashError): void {
    if (this.state !== "closed") this.transport.send(JSON.stringify(event));
  }

  private error(code: string, detail: string): void {
    this.send({ id: crypto.randomUUID(), timestamp: recordedTimestamp(), code, detail, kind: "BashError" });
  }
}
