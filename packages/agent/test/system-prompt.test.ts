/**
 * The system prompt and the tool texts are OpenHands 1.43.1's, byte for byte: compared with what
 * OpenHands' own code renders for the same settings (`fixtures/openhands-1.43.1/`, made by its
 * `generate.py`), both as this package builds them and as a conversation records and sends them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { SystemPromptEvent } from "@acs-toolkit/schema";
import { staticSystemPrompt } from "../src/prompts/system-prompt.js";
import {
  FILE_EDITOR_PARAMETERS,
  FINISH_DESCRIPTION,
  FINISH_PARAMETERS,
  TASK_TRACKER_DESCRIPTION,
  TASK_TRACKER_PARAMETERS,
  THINK_DESCRIPTION,
  THINK_PARAMETERS,
  fileEditorDescription,
  terminalDescription,
  terminalParameters,
} from "../src/prompts/tool-descriptions.js";
import { userText } from "../src/test-kit/index.js";
import { type Harness, useHarness } from "./support.js";

const FIXTURES = new URL("./fixtures/openhands-1.43.1/", import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), "utf8");

interface ToolTexts {
  description: string;
  parameters: Record<string, string>;
}
const tools = JSON.parse(fixture("tools.json")) as { soft_timeout_seconds: number } & Record<"terminal" | "file_editor" | "task_tracker" | "finish" | "think", ToolTexts>;

/** The model of each rendered prompt (as `generate.py` names them). */
const MODELS: Record<string, string> = {
  "gpt-4o": "openai/gpt-4o",
  claude: "anthropic/claude-sonnet-4-5-20250929",
  "gpt-5": "openai/gpt-5.2",
  gemini: "gemini/gemini-2.5-pro",
  qwen: "openrouter/qwen/qwen3-coder",
};

describe("the 1.43.1 system prompt", () => {
  for (const [name, model] of Object.entries(MODELS)) {
    it(`is OpenHands' static prompt for ${model}`, () => {
      expect(staticSystemPrompt({ model })).toBe(fixture(`system-prompt.${name}.txt`));
    });
  }
});

describe("the 1.43.1 tool texts", () => {
  it("are OpenHands' descriptions and parameter descriptions", () => {
    // OpenHands' terminal text names 10 seconds, its `timeout` parameter its soft timeout (30 s).
    expect(terminalDescription(10)).toBe(tools.terminal.description);
    expect(terminalParameters(tools.soft_timeout_seconds)).toEqual(tools.terminal.parameters);
    expect(fileEditorDescription("{{WORKSPACE}}")).toBe(tools.file_editor.description);
    expect(FILE_EDITOR_PARAMETERS).toEqual(tools.file_editor.parameters);
    expect(TASK_TRACKER_DESCRIPTION).toBe(tools.task_tracker.description);
    expect(TASK_TRACKER_PARAMETERS).toEqual(tools.task_tracker.parameters);
    expect(FINISH_DESCRIPTION).toBe(tools.finish.description);
    expect(FINISH_PARAMETERS).toEqual(tools.finish.parameters);
    expect(THINK_DESCRIPTION).toBe(tools.think.description);
    expect(THINK_PARAMETERS).toEqual(tools.think.parameters);
  });
});

describe("a conversation", () => {
  const start = useHarness();
  let h: Harness;

  it("records and sends OpenHands' prompt and tool texts", async () => {
    h = await start();
    h.llm.play({ text: "Hi." });
    await h.conversation.sendMessage(userText("Hello"), { run: true });
    await h.conversation.idle();

    const [prompt] = h.host.ofKind("SystemPromptEvent") as SystemPromptEvent[];
    expect(prompt!.system_prompt).toEqual({ cache_prompt: false, type: "text", text: fixture("system-prompt.gpt-4o.txt") });
    const byTitle = Object.fromEntries(prompt!.tools.map((tool) => [tool.title, tool]));
    expect(byTitle.terminal!.description).toBe(tools.terminal.description);
    expect(byTitle.file_editor!.description).toBe(tools.file_editor.description.replace("{{WORKSPACE}}", h.host.workspaceDir));
    expect(byTitle.task_tracker).toMatchObject({ description: tools.task_tracker.description, annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false } });
    expect(byTitle.task_tracker!.annotations).not.toHaveProperty("title");
    expect(byTitle.finish!.description).toBe(tools.finish.description);
    expect(byTitle.think!.description).toBe(tools.think.description);

    // What the LLM is offered: the same descriptions; the `timeout` text names this runtime's 10 s.
    const offered = Object.fromEntries(
      (h.llm.requests[0]!.body.tools as Array<{ function: { name: string; description: string; parameters: { properties: Record<string, { description?: string }> } } }>).map(
        (tool) => [tool.function.name, tool.function],
      ),
    );
    expect(offered.terminal!.description).toBe(tools.terminal.description);
    for (const [name, description] of Object.entries(tools.terminal.parameters)) {
      expect(offered.terminal!.parameters.properties[name]!.description, name).toBe(description.replace(`for ${tools.soft_timeout_seconds} seconds.`, "for 10 seconds."));
    }
    for (const [name, description] of Object.entries(tools.file_editor.parameters)) expect(offered.file_editor!.parameters.properties[name]!.description, name).toBe(description);
    expect(offered.task_tracker!.parameters.properties.command!.description).toBe(tools.task_tracker.parameters.command);
  });
});
