import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, timeline, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

describe("a conversation driven by the scripted LLM", () => {
  it("runs a terminal command that creates a file, edits it, and finishes", async () => {
    h = await start();
    const file = path.join(h.host.workspaceDir, "hello.txt");
    h.llm.play(
      { toolCalls: [{ name: "terminal", arguments: { command: "echo hello > hello.txt && cat hello.txt", security_risk: "LOW", summary: "write hello.txt" } }], content: "I will create the file." },
      { toolCalls: [{ name: "file_editor", arguments: { command: "str_replace", path: file, old_str: "hello", new_str: "hello world" } }] },
      { toolCalls: [{ name: "finish", arguments: { message: "Done: hello.txt says hello world." } }] },
    );
    await h.conversation.sendMessage(userText("Create hello.txt"), { run: true });
    await h.conversation.idle();

    expect(readFileSync(file, "utf8")).toBe("hello world\n");
    expect(timeline(h.host)).toEqual([
      "SystemPromptEvent",
      "MessageEvent:user",
      "status:running",
      "ActionEvent:terminal",
      "ObservationEvent:TerminalObservation",
      "ActionEvent:file_editor",
      "ObservationEvent:FileEditorObservation",
      "ActionEvent:finish",
      "ObservationEvent:FinishObservation",
      "status:finished",
    ]);
    const [terminal] = h.host.ofKind("ObservationEvent");
    expect(terminal!.observation).toMatchObject({
      kind: "TerminalObservation",
      command: "echo hello > hello.txt && cat hello.txt",
      exit_code: 0,
      content: [{ type: "text", text: "hello" }],
      metadata: { exit_code: 0, working_dir: h.host.workspaceDir, suffix: "\n[The command completed with exit code 0.]" },
    });
    const [action] = h.host.ofKind("ActionEvent");
    // Without a security analyzer the model's rating is not read.
    expect(action).toMatchObject({ security_risk: "UNKNOWN", summary: "write hello.txt", thought: [{ text: "I will create the file." }], llm_response_id: "chatcmpl-scripted-1" });
    expect(action!.action).toEqual({ command: "echo hello > hello.txt && cat hello.txt", is_input: false, reset: false, kind: "TerminalAction" });
    expect(h.llm.unexpected).toBe(0);
    expectValidTrajectory(h.host);
  });
});

describe("tool calls the agent cannot run", () => {
  it("records an unknown tool as an action without action and an AgentErrorEvent, and goes on", async () => {
    h = await start();
    h.llm.play({ toolCalls: [{ name: "browse_web", arguments: { url: "https://example.com" } }] }, { text: "I cannot browse; here is what I know." });
    await h.conversation.sendMessage(userText("Browse"), { run: true });
    await h.conversation.idle();

    expect(timeline(h.host).slice(2)).toEqual(["status:running", "ActionEvent:browse_web(no action)", "AgentErrorEvent", "MessageEvent:agent", "status:finished"]);
    const [error] = h.host.ofKind("AgentErrorEvent");
    expect(error!.error).toBe("Tool 'browse_web' not found. Available: ['terminal', 'file_editor', 'task_tracker', 'think', 'finish']");
    // The LLM reads the error as the tool's result.
    const second = h.llm.requests[1]!.body.messages as Array<Record<string, unknown>>;
    expect(second.at(-1)).toMatchObject({ role: "tool", tool_call_id: error!.tool_call_id, content: error!.error });
    expectValidTrajectory(h.host);
  });

  it("records malformed argument JSON as 1.43.1 does (a marker and the error), with an AgentErrorEvent, and goes on", async () => {
    h = await start();
    const malformed = '{"command": "ls -la", "is_input": fals';
    h.llm.play({ toolCalls: [{ name: "terminal", arguments: malformed }] }, { toolCalls: [{ name: "finish", arguments: { message: "gave up" } }] });
    await h.conversation.sendMessage(userText("List files"), { run: true });
    await h.conversation.idle();

    const [action] = h.host.ofKind("ActionEvent");
    expect(action!.action).toBeUndefined();
    const [error] = h.host.ofKind("AgentErrorEvent");
    expect(error!.error).toMatch(/^Error validating tool 'terminal': .*JSON.*\. Arguments: unparseable JSON$/);
    // openhands-sdk/openhands/sdk/agent/agent.py `_emit_tool_error`: the text is replaced, as json.dumps writes it.
    expect(JSON.parse(action!.tool_call.arguments)).toEqual({ _openhands_malformed_tool_call: true, error: error!.error });
    expect(action!.tool_call.arguments).toMatch(/^\{"_openhands_malformed_tool_call": true, "error": "Error validating tool 'terminal': /);
    expect(h.conversation.executionStatus).toBe("finished");
    expectValidTrajectory(h.host);
  });

  it("refuses arguments the spec rejects (a missing field, an unknown field) and names the field", async () => {
    h = await start();
    h.llm.play(
      { toolCalls: [{ name: "file_editor", arguments: { path: "/x" } }, { name: "think", arguments: { thought: "hm", mood: "calm" } }] },
      { text: "ok" },
    );
    await h.conversation.sendMessage(userText("Edit"), { run: true });
    await h.conversation.idle();
    const errors = h.host.ofKind("AgentErrorEvent").map((event) => event.error);
    expect(errors[0]).toMatch(/^Error validating tool 'file_editor': .*\/command: is required in FileEditorAction.*\. Parameters provided: \['path'\]$/);
    expect(errors[1]).toMatch(/^Error validating tool 'think': .*mood.*\. Parameters provided: \['thought', 'mood'\]$/);
    expectValidTrajectory(h.host);
  });

  it("records the arguments as OpenHands re-serialises them, and a summary of its own when the model gives none", async () => {
    h = await start();
    // Compact JSON, a null, a misspelt security_risk, a non-ASCII character and a raw newline inside a string.
    h.llm.play({ toolCalls: [{ name: "terminal", arguments: '{"command":"echo \u00e9t\u00e9","timeout":null,"securtiy_risk":"LOW","is_input":false}' }, { name: "think", arguments: '{"thought":"line one\nline two"}' }] }, { text: "ok" });
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.conversation.idle();
    const [terminal, think] = h.host.ofKind("ActionEvent");
    expect(terminal!.tool_call.arguments).toBe('{"command": "echo \\u00e9t\\u00e9", "is_input": false, "security_risk": "LOW"}');
    expect(terminal!.summary).toBe('terminal: {"command": "echo \\u00e9t\\u00e9", "is_input": false}');
    expect(terminal!.action).toMatchObject({ command: "echo été", is_input: false });
    expect(think!.action).toMatchObject({ thought: "line one\nline two" });
    expect(think!.tool_call.arguments).toBe('{"thought": "line one\\nline two"}');
    expectValidTrajectory(h.host);
  });

  it("coerces arguments as OpenHands' pydantic models do (numbers and booleans as strings, lists as JSON text)", async () => {
    h = await start();
    h.llm.play(
      {
        toolCalls: [
          { name: "task_tracker", arguments: { command: "plan", task_list: JSON.stringify([{ title: "write tests" }, { title: "ship", status: "in_progress" }]) } },
          { name: "terminal", arguments: { command: "true", is_input: "false", timeout: "5" } },
        ],
      },
      { text: "planned" },
    );
    await h.conversation.sendMessage(userText("Plan"), { run: true });
    await h.conversation.idle();
    const [plan, terminal] = h.host.ofKind("ActionEvent");
    expect(plan!.action).toEqual({
      command: "plan",
      task_list: [
        { title: "write tests", notes: "", status: "todo" },
        { title: "ship", notes: "", status: "in_progress" },
      ],
      kind: "TaskTrackerAction",
    });
    expect(terminal!.action).toEqual({ command: "true", is_input: false, timeout: 5, reset: false, kind: "TerminalAction" });
    expectValidTrajectory(h.host);
  });

  it("gives every action of one response the response id, and the thought to the first", async () => {
    h = await start();
    h.llm.play(
      { content: "Two things at once.", toolCalls: [{ name: "think", arguments: { thought: "a" } }, { name: "think", arguments: { thought: "b" } }] },
      { text: "ok" },
    );
    await h.conversation.sendMessage(userText("Think"), { run: true });
    await h.conversation.idle();
    const actions = h.host.ofKind("ActionEvent");
    expect(actions.map((action) => action.llm_response_id)).toEqual(["chatcmpl-scripted-1", "chatcmpl-scripted-1"]);
    expect(actions.map((action) => action.thought.map((part) => part.text))).toEqual([["Two things at once."], []]);
    // One assistant message with both calls goes back to the LLM, then both results.
    const messages = h.llm.requests[1]!.body.messages as Array<{ role: string; tool_calls?: unknown[] }>;
    expect(messages.slice(2).map((message) => message.role)).toEqual(["assistant", "tool", "tool"]);
    expect(messages[2]!.tool_calls).toHaveLength(2);
    expectValidTrajectory(h.host);
  });
});

describe("the task list", () => {
  it("is kept per conversation and read back from the events when the conversation opens again", async () => {
    h = await start();
    h.llm.play(
      { toolCalls: [{ name: "task_tracker", arguments: { command: "plan", task_list: [{ title: "Reproduce", status: "done" }, { title: "Fix" }] } }] },
      { toolCalls: [{ name: "task_tracker", arguments: { command: "view" } }] },
      { text: "planned" },
    );
    await h.conversation.sendMessage(userText("Plan it"), { run: true });
    await h.conversation.idle();
    const views = h.host.ofKind("ObservationEvent").map((event) => event.observation);
    expect(views[0]).toMatchObject({ kind: "TaskTrackerObservation", command: "plan", content: [{ text: "Task list has been updated with 2 item(s)." }] });
    expect(views[1]).toMatchObject({ command: "view", content: [{ text: "# Task List\n\n1. ✅ Reproduce\n\n2. ⏳ Fix\n" }] });

    // A new runtime (a restarted server) finds the list in the stored events.
    await h.runtime.close();
    const { AgentRuntime, openAiLlmFactory } = await import("../src/index.js");
    const runtime = new AgentRuntime({ llm: openAiLlmFactory() });
    const reopened = await runtime.open(h.host);
    h.llm.play({ toolCalls: [{ name: "task_tracker", arguments: { command: "view" } }] }, { text: "still there" });
    await reopened.sendMessage(userText("Show the plan"), { run: true });
    await reopened.idle();
    expect(h.host.ofKind("ObservationEvent").at(-1)!.observation).toMatchObject({ task_list: [{ title: "Reproduce" }, { title: "Fix" }] });
    await runtime.close();
    expectValidTrajectory(h.host);
  });
});

describe("stats", () => {
  it("records token usage and cost after each LLM call, in the snapshot form", async () => {
    h = await start({ runtime: { pricing: { "gpt-4o": { input: 1, output: 2 } } } });
    h.llm.play({ toolCalls: [{ name: "think", arguments: { thought: "x" } }], usage: { prompt_tokens: 1000, completion_tokens: 500, cached_tokens: 200 } }, { text: "ok", usage: { prompt_tokens: 10, completion_tokens: 5 } });
    await h.conversation.sendMessage(userText("Go"), { run: true });
    await h.conversation.idle();
    const stats = h.host.events.filter((event) => event.kind === "ConversationStateUpdateEvent" && event.key === "stats");
    expect(stats).toHaveLength(2);
    expect((stats[1] as { value: unknown }).value).toEqual({
      usage_to_metrics: {
        agent: {
          model_name: "openai/gpt-4o",
          accumulated_cost: (1000 * 1 + 500 * 2 + 10 * 1 + 5 * 2) / 1_000_000,
          max_budget_per_task: null,
          accumulated_token_usage: {
            model: "openai/gpt-4o",
            prompt_tokens: 1010,
            completion_tokens: 505,
            cache_read_tokens: 200,
            cache_write_tokens: 0,
            reasoning_tokens: 0,
            context_window: 128_000,
            per_turn_token: 15,
            response_id: "",
          },
        },
      },
    });
    expect(h.conversation.stats).toEqual((stats[1] as { value: unknown }).value);
  });
});
