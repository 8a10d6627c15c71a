/**
 * A tool the agent offers the LLM: its definition as SystemPromptEvent records it, the function
 * schema the LLM sees, how arguments become an Action, and how an Action becomes an Observation.
 */
import type { Action, Observation, TextContent, ToolDefinition } from "@acs-toolkit/schema";
import type { SecretMasker } from "../secrets.js";

export interface ToolContext {
  /** The conversation's workspace (absolute). */
  workspaceDir: string;
  /** Aborted by an interrupt: a tool stops what it does and returns what it has. */
  signal: AbortSignal;
  masker: SecretMasker;
}

/** Arguments that do not make a valid Action of the tool; the message goes to the LLM. */
export class ToolArgumentError extends Error {
  override readonly name = "ToolArgumentError";
}

/** A tool that cannot run here (no sandbox, an MCP server down); the message goes to the LLM. */
export class ToolUnavailableError extends Error {
  override readonly name = "ToolUnavailableError";
}

export interface AgentTool {
  /** The name the LLM calls: `ActionEvent.tool_name`. */
  readonly name: string;
  /** The tool as SystemPromptEvent.tools records it. */
  readonly definition: ToolDefinition;
  /** JSON Schema of the function's parameters, as sent to the LLM (without `summary` and `security_risk`). */
  readonly parameters: Record<string, unknown>;
  /** Read-only tools take no `security_risk` and never need confirmation. */
  readonly readOnly: boolean;
  /** The Action for parsed arguments. @throws ToolArgumentError */
  toAction(args: Record<string, unknown>): Action;
  /** Runs the action. @throws ToolUnavailableError, ToolArgumentError (both become an AgentErrorEvent) */
  execute(action: Action, context: ToolContext): Promise<Observation>;
  /** Releases what the tool holds (a shell, a connection). */
  close?(): Promise<void>;
}

/** Observations' text content as OpenHands writes it. */
export function text(value: string): TextContent {
  return { cache_prompt: false, type: "text", text: value };
}
