/** Runs `acs-validate` in-process (src/cli/run.ts) on real files, with captured output. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough, Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll } from "vitest";
import { run } from "../src/cli/run.js";
import type { ReadLimits } from "../src/cli/read.js";
import type { WindowBounds } from "../src/cli/html/window.js";
import { example } from "./support.js";

export const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const repoDir = path.resolve(packageDir, "../..");
export const eventDirectoryFixture = path.join(packageDir, "test/fixtures/conversation-2026-02-05");

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  cwd?: string;
  stdin?: string | Buffer;
  env?: Record<string, string | undefined>;
  limits?: ReadLimits;
  /** Pretend standard output and error are a terminal of this width. */
  tty?: number;
  /** With `tty`: standard output goes to a pipe all the same. */
  pipedStdout?: boolean;
  progressPace?: { minBytes: number; everyMs: number };
  /** How much the HTML report shows and keeps in memory. */
  html?: { bounds?: WindowBounds; spoolMemoryBytes?: number };
}

function capture(tty: number | undefined) {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number };
  if (tty) {
    stream.isTTY = true;
    stream.columns = tty;
  }
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  return { stream, text: () => text };
}

export async function runCli(argv: string[], options: CliOptions = {}): Promise<CliResult> {
  const stdout = capture(options.pipedStdout ? undefined : options.tty);
  const stderr = capture(options.tty);
  const stdin = Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]);
  const code = await run({
    argv,
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? {},
    stdin,
    stdout: stdout.stream,
    stderr: stderr.stream,
    ...(options.limits && { limits: options.limits }),
    ...(options.progressPace && { progressPace: options.progressPace }),
    ...(options.html && { html: options.html }),
  });
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const made: string[] = [];
afterAll(() => {
  for (const directory of made) rmSync(directory, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test file. */
export function tempDir(): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), "acs-validate-test-"));
  made.push(directory);
  return directory;
}

/** Writes files (name → content) under `directory`, creating subdirectories. */
export function writeFiles(directory: string, files: Record<string, string | Buffer>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(directory, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

export const jsonl = (events: unknown[]) => `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;

/**
 * A valid trajectory of seven events: system prompt, user message, an action and its observation, an
 * action and the agent error answering it, the agent's reply.
 */
export function trajectory(): Record<string, any>[] {
  const system = example("SystemPromptEvent");
  system.tools = system.tools.slice(0, 1);
  const user = example("MessageEvent");
  user.source = "user";
  user.llm_message = { role: "user", content: [{ type: "text", text: "Run the tests." }] };
  user.llm_response_id = null;
  const action = example("ActionEvent", "TerminalAction");
  const observation = example("ObservationEvent", "TerminalObservation");
  const failing = example("ActionEvent", "ThinkAction");
  const error = example("AgentErrorEvent");
  const reply = example("MessageEvent");
  const events = [system, user, action, observation, failing, error, reply];
  events.forEach((e, i) => {
    e.id = `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`;
    e.timestamp = `2026-02-05T11:24:${String(40 + i).padStart(2, "0")}.500000`;
  });
  for (const [act, call] of [[action, "call_run"], [failing, "call_think"]] as const) {
    act.tool_call_id = call;
    act.tool_call.id = call;
  }
  observation.tool_call_id = "call_run";
  observation.action_id = action.id;
  error.tool_call_id = "call_think";
  error.tool_name = failing.tool_name;
  return events;
}

/** The input names of an action.yml, in order (its `inputs:` block, two-space keys). */
export function actionInputs(yaml: string): string[] {
  const block = /^inputs:\n((?:(?: {2}.*)?\n)+)/m.exec(yaml)?.[1] ?? "";
  return [...block.matchAll(/^ {2}([\w-]+):/gm)].map((m) => m[1]!);
}

/**
 * The step of an action.yml as the runner runs it: its `run: |` script, dedented, and its env
 * (environment variable → the input it carries).
 */
export function actionStep(yaml: string): { script: string; stepEnv: Record<string, string> } {
  const lines = yaml.split("\n");
  const start = lines.findIndex((l) => /^ {6}run: \|$/.test(l));
  const body: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() !== "" && !line.startsWith("        ")) break;
    body.push(line.slice(8));
  }
  const stepEnv = Object.fromEntries([...yaml.matchAll(/^ {8}(ACS_[A-Z_]+): \$\{\{ inputs\.([\w-]+) \}\}$/gm)].map((m) => [m[1]!, m[2]!]));
  return { script: body.join("\n"), stepEnv };
}
