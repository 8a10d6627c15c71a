/**
 * The built-in scenarios. Each tells one story a frontend has to render; together they use every
 * event kind and every Action, Observation and ToolDefinition variant of the spec (checked by the
 * tests, as is each scenario's validity).
 */
import { ACTION_KINDS, TOOL_KINDS, type ActionEvent, type Event } from "@acs-toolkit/schema";
import { deriveSeed, pick, randomUuid, seededRandom } from "../random.js";
import {
  exampleAction,
  exampleClientActionKind,
  observationKindFor,
  text,
  TrajectoryBuilder,
  type Action,
  type ActOptions,
  type ActionKind,
  type ToolKind,
} from "./builder.js";
import type { Scenario, ScenarioOptions } from "./types.js";

/** Tools of a coding agent, as the reference offers them by default. */
const CODING_TOOLS: ToolKind[] = ["TerminalTool", "FileEditorTool", "TaskTrackerTool", "ThinkTool", "FinishTool"];

function conversationIdFor(name: string, seed: number): string {
  return randomUuid(seededRandom(deriveSeed(seed, `conversation:${name}`)));
}

function builderFor(name: string, options: ScenarioOptions): TrajectoryBuilder {
  return new TrajectoryBuilder(seededRandom(deriveSeed(options.seed, `scenario:${name}`)), options.start);
}

/** A terminal command and its output: an ActionEvent and the ObservationEvent answering it. */
function runCommand(b: TrajectoryBuilder, command: string, output: string, exitCode: number, options: ActOptions & { isError?: boolean } = {}): ActionEvent {
  const action = b.act({ ...exampleAction("TerminalAction"), command }, options);
  b.wait(400, 2500);
  b.observe(action, "TerminalObservation", (o) => {
    o.content = [text(output)];
    o.command = command;
    o.exit_code = exitCode;
    o.is_error = options.isError ?? false;
    o.metadata = { ...o.metadata, exit_code: exitCode, suffix: `\n[The command completed with exit code ${exitCode}.]` };
  });
  return action;
}

/** A short session that goes well: plan, inspect, edit, test, finish. */
export function happyScenario(options: ScenarioOptions): Scenario {
  const b = builderFor("happy", options);
  b.system(CODING_TOOLS);
  b.wait(800, 1500).user("Add a --version flag to the CLI and make sure the tests still pass.");
  b.wait(100).state("execution_status", "running");
  b.wait(1200, 2500);
  const plan = b.act(
    { ...exampleAction("TaskTrackerAction"), command: "plan", task_list: [
      { title: "Find where the CLI parses its arguments", notes: "", status: "in_progress" },
      { title: "Add --version", notes: "print the package version and exit 0", status: "todo" },
      { title: "Run the test suite", notes: "", status: "todo" },
    ] },
    { thought: "I'll plan the change first.", summary: "Plan the --version change" },
  );
  b.wait(200, 500).observe(plan, "TaskTrackerObservation", (o) => {
    o.command = "plan";
    o.task_list = (plan.action as Extract<Action, { kind: "TaskTrackerAction" }>).task_list;
    o.content = [text("Task list updated: 3 tasks.")];
  });
  b.wait(1500, 3000);
  runCommand(b, "grep -n \"add_argument\" src/cli.py", "12:    parser.add_argument(\"path\")\n13:    parser.add_argument(\"--verbose\", action=\"store_true\")", 0, {
    thought: "Let me find the argument parser.",
    summary: "Find the CLI's argument parser",
  });
  b.wait(1500, 3000);
  const edit = b.act(
    { ...exampleAction("FileEditorAction"), command: "str_replace", path: "/workspace/project/src/cli.py", old_str: "    parser.add_argument(\"--verbose\", action=\"store_true\")", new_str: "    parser.add_argument(\"--verbose\", action=\"store_true\")\n    parser.add_argument(\"--version\", action=\"version\", version=__version__)" },
    { thought: "argparse has a built-in version action.", summary: "Add the --version argument", risk: "MEDIUM" },
  );
  b.wait(300, 800).observe(edit, "FileEditorObservation", (o) => {
    o.command = "str_replace";
    o.path = "/workspace/project/src/cli.py";
    o.old_content = "    parser.add_argument(\"--verbose\", action=\"store_true\")\n";
    o.new_content = "    parser.add_argument(\"--verbose\", action=\"store_true\")\n    parser.add_argument(\"--version\", action=\"version\", version=__version__)\n";
    o.content = [text("The file /workspace/project/src/cli.py has been edited.")];
  });
  b.wait(1500, 3000);
  runCommand(b, "python -m pytest -q", "........                                                   [100%]\n8 passed in 0.42s", 0, { summary: "Run the tests" });
  b.wait(800, 1500);
  b.tokens(12, 6);
  const finish = b.act({ ...exampleAction("FinishAction"), message: "Added `--version` (prints the package version and exits 0). All 8 tests pass." }, { summary: "Finish" });
  b.wait(100, 300).observe(finish, "FinishObservation", (o) => {
    o.content = [text("Added `--version` (prints the package version and exits 0). All 8 tests pass.")];
  });
  b.wait(200).agent("Done: `--version` prints the package version and exits 0. All 8 tests pass.");
  b.wait(50).state("execution_status", "finished");
  return { name: "happy", description: "A short session that goes well: plan, inspect, edit, test, finish.", conversationId: conversationIdFor("happy", options.seed), events: b.events, preload: 2, origin: "built-in" };
}

/** Tool errors: a call to a tool that does not exist, a failing command, then the run loop dies. */
export function errorsScenario(options: ScenarioOptions): Scenario {
  const b = builderFor("errors", options);
  b.system(CODING_TOOLS);
  b.wait(800, 1500).user("Run the database migration and tell me if anything breaks.");
  b.wait(100).state("execution_status", "running");
  b.wait(1500, 3000);
  const unknown = b.actUnknownTool("str_replace_editor", { command: "view", path: "/workspace/project/migrations" }, "Let me look at the migrations folder.");
  b.wait(50, 200).agentError(unknown, "Tool 'str_replace_editor' not found. Available: ['terminal', 'file_editor', 'task_tracker', 'think', 'finish']");
  b.wait(1500, 3000);
  runCommand(b, "ls migrations", "0001_initial.py\n0002_add_users.py\n0003_add_index.py", 0, { thought: "I'll use the terminal instead.", summary: "List the migrations" });
  b.wait(1500, 3000);
  runCommand(
    b,
    "python manage.py migrate",
    "Applying 0003_add_index...\nTraceback (most recent call last):\n  File \"manage.py\", line 22, in <module>\nsqlite3.OperationalError: index users_email already exists",
    1,
    { summary: "Apply the migrations", risk: "MEDIUM", isError: true },
  );
  b.wait(1200, 2500).agent("Migration 0003 fails: the index `users_email` already exists. I'll check whether it was created by hand.");
  b.wait(1500, 3000);
  const retry = b.act({ ...exampleAction("TerminalAction"), command: "python manage.py migrate --fake 0003", timeout: 30 }, { summary: "Mark 0003 as applied", risk: "HIGH" });
  b.wait(30_000).observe(retry, "TerminalObservation", (o) => {
    o.content = [text("Command timed out after 30 seconds.")];
    o.command = "python manage.py migrate --fake 0003";
    o.exit_code = -1;
    o.timeout = true;
    o.is_error = true;
    o.metadata = { ...o.metadata, exit_code: -1, suffix: "\n[The command timed out after 30 seconds.]" };
  });
  b.wait(500, 1000).add({ source: "environment", code: "LLMRateLimitError", detail: "Rate limit reached for gpt-4o: retry after 20 seconds. The run loop stopped.", kind: "ConversationErrorEvent" } as Event);
  b.wait(20).state("execution_status", "error");
  return {
    name: "errors",
    description: "Tool errors (an unknown tool, a failing and a timed-out command), then a ConversationErrorEvent stops the run.",
    conversationId: conversationIdFor("errors", options.seed),
    events: b.events,
    preload: 2,
    finalStatus: "ERROR",
    origin: "built-in",
  };
}

/** A long browsing session whose history is condensed half-way. */
export function condensationScenario(options: ScenarioOptions): Scenario {
  const b = builderFor("condensation", options);
  b.system(["BrowserToolSet", "BrowserNavigateTool", "BrowserGetContentTool", "BrowserScrollTool", "ThinkTool", "FinishTool"]);
  b.wait(800, 1500).user("Read the release notes of the last three versions and summarise the breaking changes.");
  b.wait(100).state("execution_status", "running");
  const early: string[] = [];
  for (const version of ["3.2", "3.1", "3.0"]) {
    b.wait(1500, 3000);
    const navigate = b.act({ ...exampleAction("BrowserNavigateAction"), url: `https://example.com/releases/${version}` }, { summary: `Open the ${version} release notes` });
    b.wait(800, 2000).observe(navigate, "BrowserObservation", (o) => {
      o.content = [text(`Navigated to https://example.com/releases/${version}`)];
    });
    b.wait(1000, 2000);
    const content = b.act({ ...exampleAction("BrowserGetContentAction"), extract_links: false, start_from_char: 0 }, { summary: "Read the page" });
    const observed = b.wait(800, 2000).observe(content, "BrowserObservation", (o) => {
      o.content = [text(`# Release ${version}\n\n## Breaking changes\n- ${version === "3.0" ? "Node 18 is no longer supported" : `The \`${version}\` config key was renamed`}`)];
    });
    early.push(navigate.id, observed.id);
  }
  b.wait(500).add({ source: "environment", kind: "CondensationRequest" } as Event);
  b.wait(2000, 4000);
  const summary = "The agent read the 3.2, 3.1 and 3.0 release notes: 3.0 drops Node 18; 3.1 and 3.2 rename config keys.";
  const condensation = b.add({ source: "environment", forgotten_event_ids: early.slice(0, 4), summary, summary_offset: 1, llm_response_id: `chatcmpl-${randomUuid(seededRandom(options.seed)).slice(0, 8)}`, kind: "Condensation" } as Event);
  b.wait(1).add({ id: `${condensation.id}-summary`, source: "environment", summary, kind: "CondensationSummaryEvent" } as Event);
  b.wait(1000, 2000);
  const scroll = b.act({ ...exampleAction("BrowserScrollAction"), direction: "down" }, { summary: "Scroll to the migration guide" });
  b.wait(500, 1000).observe(scroll, "BrowserObservation", (o) => {
    o.content = [text("Scrolled down. Visible: 'Migrating from 2.x'.")];
  });
  b.wait(1500, 3000);
  const think = b.act({ ...exampleAction("ThinkAction"), thought: "Three breaking changes in total; the Node 18 drop matters most." });
  b.wait(100, 300).observe(think, "ThinkObservation");
  b.wait(1000, 2000);
  const finish = b.act({ ...exampleAction("FinishAction"), message: "Breaking changes: 3.0 drops Node 18; 3.1 renames `cache_dir`; 3.2 renames `log_level`." });
  b.wait(100, 300).observe(finish, "FinishObservation", (o) => {
    o.content = [text("Breaking changes: 3.0 drops Node 18; 3.1 renames `cache_dir`; 3.2 renames `log_level`.")];
  });
  b.wait(200).agent("Breaking changes: 3.0 drops Node 18; 3.1 renames `cache_dir`; 3.2 renames `log_level`.");
  return { name: "condensation", description: "A browsing session whose history is condensed half-way (CondensationRequest, Condensation, its summary).", conversationId: conversationIdFor("condensation", options.seed), events: b.events, preload: 2, origin: "built-in" };
}

/** Confirmation mode: a risky command is rejected by the user, a safer one approved, then a pause. */
export function confirmationScenario(options: ScenarioOptions): Scenario {
  const b = builderFor("confirmation", options);
  b.system(CODING_TOOLS);
  b.wait(10).state("confirmation_policy", { kind: "ConfirmRisky", threshold: "MEDIUM" });
  b.wait(800, 1500).user("Clean up the build output and redeploy the staging site.");
  b.wait(100).state("execution_status", "running");
  b.wait(1500, 3000);
  const risky = b.act({ ...exampleAction("TerminalAction"), command: "rm -rf build/ && ./deploy.sh staging" }, { thought: "Remove the build folder, then deploy.", summary: "Delete build/ and deploy", risk: "HIGH" });
  b.wait(50).state("execution_status", "waiting_for_confirmation");
  b.wait(4000, 8000).reject(risky, "Don't delete all of build/, only build/cache.");
  b.wait(50).state("execution_status", "running");
  b.wait(1500, 3000);
  const safer = b.act({ ...exampleAction("TerminalAction"), command: "rm -rf build/cache" }, { summary: "Delete build/cache only", risk: "MEDIUM" });
  b.wait(50).state("execution_status", "waiting_for_confirmation");
  b.wait(3000, 6000).state("execution_status", "running");
  b.wait(300, 800).observe(safer, "TerminalObservation", (o) => {
    o.content = [text("")];
    o.command = "rm -rf build/cache";
    o.exit_code = 0;
  });
  b.wait(1000, 2000).add({ source: "user", kind: "PauseEvent" } as Event);
  b.wait(50).state("execution_status", "paused");
  b.wait(5000, 9000).user("Go ahead with the deploy.");
  b.wait(50).state("execution_status", "running");
  b.wait(1500, 3000);
  runCommand(b, "./deploy.sh staging", "Deploying to staging... done (https://staging.example.com)", 0, { summary: "Deploy to staging", risk: "LOW" });
  b.wait(1000, 2000).agent("Removed build/cache and redeployed staging: https://staging.example.com");
  b.wait(50).state("execution_status", "finished");
  return { name: "confirmation", description: "Confirmation mode: a risky command rejected by the user (UserRejectObservation), a safer one approved, a pause.", conversationId: conversationIdFor("confirmation", options.seed), events: b.events, preload: 2, origin: "built-in" };
}

const WORDS = ["build", "failing", "test", "deploy", "Migration", "cache", "résumé", "naïve", "TIMEOUT", "parser", "index", "flaky", "Größe", "retry", "docs"];

/**
 * A long conversation (at least 5,000 events) for paging and infinite scroll: many turns using every
 * Action kind (each answered by its Observation kind; a client tool's action too), every tool, token
 * and completion-log events, and the stored kinds of later releases (hooks, interrupts, ACP tool calls).
 */
export function longScenario(options: ScenarioOptions, minimumEvents = 5_000): Scenario {
  const b = builderFor("long", options);
  const random = seededRandom(deriveSeed(options.seed, "long:choices"));
  b.system(TOOL_KINDS, "Repository: example/monorepo (branch main).");
  const actionKinds: ActionKind[] = [...ACTION_KINDS, exampleClientActionKind()];
  let actionIndex = 0;
  let turn = 0;
  let lastTurnStart = 0;
  while (b.events.length < minimumEvents) {
    turn++;
    lastTurnStart = b.events.length;
    b.wait(3000, 20_000).user(`Turn ${turn}: look at the ${pick(random, WORDS)} ${pick(random, WORDS)} issue`);
    const actions = 2 + Math.floor(random() * 4);
    for (let i = 0; i < actions; i++) {
      const kind = actionKinds[actionIndex++ % actionKinds.length]!;
      b.wait(800, 4000);
      const action = b.act(exampleAction(kind), { thought: `Step ${i + 1} of turn ${turn}.`, summary: `${kind.replace(/Action$/, "")} for turn ${turn}` });
      if (turn % 4 === 0 && i === 0) b.wait(20, 60).hook(action, "PreToolUse", ".openhands/hooks/audit.sh");
      b.wait(200, 3000).observe(action, observationKindFor(kind), (o) => {
        if (random() < 0.5) o.content = [text(`${kind} result ${turn}.${i + 1}: ${pick(random, WORDS)}`)];
      });
    }
    if (turn % 5 === 0) b.wait(10).tokens(8, 4);
    if (turn % 7 === 0) b.wait(10).completionLog("gpt-4o");
    if (turn % 10 === 0) b.wait(10).state("stats", { turns: turn, events: b.events.length });
    if (turn % 9 === 0) {
      // An ACP agent's tool call, as ACP agents record it: an early event, then the terminal one.
      const call = { tool_call_id: `toolu_${randomUuid(random).replace(/-/g, "").slice(0, 20)}`, title: "Run `npm test`", tool_kind: "execute", raw_input: { command: "npm test" } };
      b.wait(100, 400).add({ source: "agent", ...call, status: "in_progress", is_error: false, kind: "ACPToolCallEvent" } as Event);
      b.wait(500, 3000).add({ source: "agent", ...call, status: "completed", raw_output: { exit_code: 0 }, is_error: false, kind: "ACPToolCallEvent" } as Event);
    }
    if (turn % 11 === 0) {
      b.wait(300, 900).add({ source: "user", kind: "InterruptEvent" } as Event);
      b.wait(5).state("execution_status", "paused");
      b.wait(2000, 6000).state("execution_status", "running");
    }
    b.wait(500, 2000).agent(`Turn ${turn} done: the ${pick(random, WORDS)} part is ${pick(random, ["fixed", "unchanged", "flaky", "documented"])}.`);
  }
  return {
    name: "long",
    description: `A long conversation (${b.events.length} events) using every action, observation and tool kind, for paging and infinite scroll.`,
    conversationId: conversationIdFor("long", options.seed),
    events: b.events,
    preload: lastTurnStart,
    origin: "built-in",
  };
}

/** Every built-in scenario by name, in the order the banner lists them. */
export const BUILT_IN_SCENARIOS: Record<string, (options: ScenarioOptions) => Scenario> = {
  happy: happyScenario,
  errors: errorsScenario,
  condensation: condensationScenario,
  confirmation: confirmationScenario,
  long: (options) => longScenario(options),
};
