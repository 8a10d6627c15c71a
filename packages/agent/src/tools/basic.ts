/**
 * The three tools that touch nothing outside the conversation: `finish` (ends the run), `think`
 * (logs a thought) and `task_tracker` (the conversation's task list).
 */
import type { TaskItem, TaskTrackerAction } from "@acs-toolkit/schema";
import { FINISH_DESCRIPTION, FINISH_PARAMETERS, TASK_TRACKER_DESCRIPTION, TASK_TRACKER_PARAMETERS, THINK_DESCRIPTION, THINK_PARAMETERS } from "../prompts/tool-descriptions.js";
import { buildAction, llmParameters, toolDefinition } from "./arguments.js";
import { text, type AgentTool } from "./tool.js";

export function finishTool(): AgentTool {
  const definition = toolDefinition("FinishTool", {
    title: "finish",
    description: FINISH_DESCRIPTION,
    annotations: { title: "finish", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  });
  return {
    name: "finish",
    definition,
    parameters: llmParameters("FinishAction", FINISH_PARAMETERS),
    readOnly: true,
    toAction: (args) => buildAction("FinishAction", args),
    async execute(action) {
      const message = action.kind === "FinishAction" ? action.message : "";
      return { content: [text(message)], is_error: false, kind: "FinishObservation" };
    },
  };
}

export function thinkTool(): AgentTool {
  const definition = toolDefinition("ThinkTool", {
    title: "think",
    description: THINK_DESCRIPTION,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  });
  return {
    name: "think",
    definition,
    parameters: llmParameters("ThinkAction", THINK_PARAMETERS),
    readOnly: true,
    toAction: (args) => buildAction("ThinkAction", args),
    async execute() {
      return { content: [text("Your thought has been logged.")], is_error: false, kind: "ThinkObservation" };
    },
  };
}

const STATUS_ICONS: Record<string, string> = { todo: "⏳", in_progress: "🔄", done: "✅" };

/** The task list as the LLM reads it. */
function formatTaskList(tasks: readonly TaskItem[]): string {
  const lines = ["# Task List", ""];
  tasks.forEach((task, index) => {
    lines.push(`${index + 1}. ${STATUS_ICONS[task.status ?? "todo"] ?? "⏳"} ${task.title}`);
    if (task.notes) lines.push(`   ${task.notes}`);
    lines.push("");
  });
  return lines.join("\n");
}

/**
 * The task tracker. Its list lives in the conversation's events (the last `plan` observation), so
 * it survives a restart with nothing else stored: the runtime passes that list in as `initial`.
 */
export function taskTrackerTool(initial: readonly TaskItem[] = []): AgentTool {
  let tasks: TaskItem[] = structuredClone([...initial]);
  const definition = toolDefinition("TaskTrackerTool", {
    title: "task_tracker",
    description: TASK_TRACKER_DESCRIPTION,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  });
  return {
    name: "task_tracker",
    definition,
    parameters: llmParameters("TaskTrackerAction", TASK_TRACKER_PARAMETERS),
    readOnly: false,
    toAction: (args) => buildAction("TaskTrackerAction", args),
    async execute(action) {
      const { command = "view", task_list = [] } = action as TaskTrackerAction;
      if (command === "plan") {
        tasks = structuredClone(task_list);
        return {
          content: [text(`Task list has been updated with ${tasks.length} item(s).`)],
          is_error: false,
          command,
          task_list: structuredClone(tasks),
          kind: "TaskTrackerObservation",
        };
      }
      const body = tasks.length ? formatTaskList(tasks) : 'No task list found. Use the "plan" command to create one.';
      return { content: [text(body)], is_error: false, command, task_list: structuredClone(tasks), kind: "TaskTrackerObservation" };
    },
  };
}
