/**
 * The bash routes' commands on the reference server (`--runtime agent`): each runs once, in a fresh
 * process of the sandbox of the conversation whose workspace holds its `cwd`, through the agent
 * runtime (`AgentRuntime.exec`: the sandbox, user, limits and process starter of the agent's own
 * commands; its shell is not touched). The `cwd` the API resolved is checked on the disk first: every
 * folder from the workspace down to it must be a real folder, not a symbolic link, so that a link a
 * command left in a workspace cannot choose where the next one starts (inside the sandbox a link
 * could only lead to what the sandbox shows anyway). Commands get no secret of the settings: the
 * web UI's probes (git state, file lists) need none.
 */
import { lstat } from "node:fs/promises";
import path from "node:path";
import { NoSandboxError, type AgentRuntime } from "@acs-toolkit/agent";
import type { CommandOutcome, CommandRequest, CommandRunner } from "./api/bash.js";

/** Commands of one conversation running at once, by default; one more is refused until one ends. */
const MAX_COMMANDS_PER_CONVERSATION = 8;

/** Why `cwd` cannot be where a command starts, or undefined when every folder down to it is a real one. */
async function cwdProblem(workspaceDir: string, cwd: string): Promise<string | undefined> {
  const below = path.relative(workspaceDir, cwd);
  if (below.startsWith("..") || path.isAbsolute(below)) return `cwd ${JSON.stringify(cwd)} is not inside the workspace ${workspaceDir}`;
  let folder = workspaceDir;
  for (const part of ["", ...(below ? below.split(path.sep) : [])]) {
    folder = path.join(folder, part);
    try {
      const stat = await lstat(folder);
      if (stat.isSymbolicLink()) return `cwd ${JSON.stringify(cwd)} passes through a symbolic link (${folder}); give the folder it leads to`;
      if (!stat.isDirectory()) return `cwd ${JSON.stringify(cwd)} is not a directory (${folder})`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return `cwd ${JSON.stringify(cwd)} does not exist (${folder})`;
      throw error;
    }
  }
  return undefined;
}

export class SandboxCommands implements CommandRunner {
  private readonly running = new Map<string, number>();

  constructor(
    private readonly agent: Pick<AgentRuntime, "exec">,
    /** The server's data directory: each conversation's `/tmp` is `<dataDir>/tmp/<id>`, as for its agent. */
    private readonly dataDir: string,
    private readonly maxPerConversation = MAX_COMMANDS_PER_CONVERSATION,
  ) {}

  async run(request: CommandRequest): Promise<CommandOutcome> {
    const { conversationId, workspaceDir, cwd } = request;
    const problem = await cwdProblem(workspaceDir, cwd);
    if (problem) return { refused: problem };
    const count = this.running.get(conversationId) ?? 0;
    if (count >= this.maxPerConversation) {
      return { refused: `${count} commands of conversation ${conversationId} are running, as many as run at once; send it again once one has ended` };
    }
    this.running.set(conversationId, count + 1);
    try {
      return await this.agent.exec({
        command: request.command,
        workspaceDir,
        cwd,
        tmpDir: path.join(this.dataDir, "tmp", conversationId),
        timeoutMs: request.timeoutSeconds * 1000,
        onOutput: request.onOutput,
        signal: request.signal,
      });
    } catch (error) {
      if (error instanceof NoSandboxError) return { refused: error.message };
      throw error;
    } finally {
      const left = (this.running.get(conversationId) ?? 1) - 1;
      if (left > 0) this.running.set(conversationId, left);
      else this.running.delete(conversationId);
    }
  }
}
