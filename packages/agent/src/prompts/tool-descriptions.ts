/**
 * What the LLM reads about the built-in tools: their descriptions and the descriptions of their
 * parameters, verbatim from OpenHands (software-agent-sdk v1.43.1, MIT licence):
 * - `terminal`: `openhands-tools/openhands/tools/terminal/descriptions.py` (the Unix text) and
 *   `terminal/definition.py` (`TerminalAction`);
 * - `file_editor`: `openhands-tools/openhands/tools/file_editor/definition.py`;
 * - `task_tracker`: `openhands-tools/openhands/tools/task_tracker/definition.py`;
 * - `finish`, `think`: `openhands-sdk/openhands/sdk/tool/builtins/finish.py`, `think.py`.
 *
 * Parameter descriptions are keyed by path (`task_list.items.title`) and laid over the spec's
 * Action schema (`tools/arguments.ts`).
 */

const TERMINAL_DESCRIPTION = `Execute a shell command in the terminal within a persistent shell session.


### Command Execution
* One command at a time: You can only execute one shell command at a time.
  If you need to run multiple commands sequentially, use \`&&\` or \`;\`.
* Persistent session: Environment variables, virtual environments, and
  working directory changes persist across commands.
* Soft timeout: Commands pause for confirmation after 10 seconds without
  new output unless you provide a longer \`timeout\`.
* Shell options: Do NOT use \`set -e\`, \`set -eu\`, or \`set -euo pipefail\`.
  The runtime may not support them reliably.

### Long-running Commands
* For commands that may run indefinitely, run them in the background and
  redirect output to a file, e.g. \`python3 app.py > server.log 2>&1 &\`.
* For long-running commands, set the \`timeout\` parameter accordingly.
* If a command returns exit code \`-1\`, it hit the soft timeout and is
  still running. With \`is_input=true\`, you can:
  - Send empty \`command\` to retrieve additional logs
  - Send text to STDIN of the running process
  - Send control commands like \`C-c\`, \`C-d\`, or \`C-z\`
  - Send navigation keys like \`UP\`, \`DOWN\`, \`LEFT\`, \`RIGHT\`, \`TAB\`,
    \`ESC\`, \`BS\`, \`HOME\`, \`END\`, \`PGUP\`, and \`PGDN\`
  - Send any \`C-<letter>\` Ctrl sequence such as \`C-a\`, \`C-e\`, or \`C-l\`

### Best Practices
* Verify a parent directory exists before creating files or directories.
* Prefer absolute paths and avoid excessive use of \`cd\`.

### Output Handling
* Large output may be truncated before being returned.

### Terminal Reset
* Set \`reset=true\` to create a fresh terminal session if the current one
  becomes unresponsive.
* Resetting the terminal clears environment variables, working directory
  changes, and running processes.`;

/**
 * The terminal's description. OpenHands' text says 10 seconds whatever the soft timeout; it names
 * the runtime's own here, so that the model is told what happens.
 */
export function terminalDescription(softTimeoutSeconds: number): string {
  return TERMINAL_DESCRIPTION.replace("after 10 seconds without", `after ${softTimeoutSeconds} seconds without`);
}

/** The terminal's parameters (`TerminalAction`); `timeout` names the soft timeout, as OpenHands' does. */
export function terminalParameters(softTimeoutSeconds: number): Record<string, string> {
  return {
    command: `The shell command to execute. Can be empty string to view additional logs when the previous exit code is \`-1\`. Can be a special key name when \`is_input\` is True: \`C-c\` (Ctrl+C), \`C-d\` (Ctrl+D/EOF), \`C-z\` (Ctrl+Z), or any \`C-<letter>\` for Ctrl sequences; navigation keys \`UP\`, \`DOWN\`, \`LEFT\`, \`RIGHT\`, \`HOME\`, \`END\`, \`PGUP\`, \`PGDN\`; and \`TAB\`, \`ESC\`, \`BS\` (Backspace), \`ENTER\`. You can only execute one command at a time. Use the platform-appropriate shell syntax described in the tool description when chaining commands.`,
    is_input: `If True, the command is an input to the running process. If False, the command is executed in the terminal session. Default is False.`,
    timeout: `Optional. Sets a maximum time limit (in seconds) for running the command. If the command takes longer than this limit, you’ll be asked whether to continue or stop it. If you don’t set a value, the command will instead pause and ask for confirmation when it produces no new output for ${softTimeoutSeconds} seconds. Use a higher value if the command is expected to take a long time (like installation or testing), or if it has a known fixed duration (like sleep).`,
    reset: `If True, reset the terminal by creating a new session. Use this only when the terminal becomes unresponsive. Note that all previously set environment variables and session state will be lost after reset. Cannot be used with is_input=True.`,
  };
}

const FILE_EDITOR_DESCRIPTION = `Custom editing tool for viewing, creating and editing files in plain-text format
* State is persistent across command calls and discussions with the user
* If \`path\` is a text file, \`view\` displays the result of applying \`cat -n\`. If \`path\` is a directory, \`view\` lists non-hidden files and directories up to 2 levels deep
* The \`create\` command cannot be used if the specified \`path\` already exists as a file
* If a \`command\` generates a long output, it will be truncated and marked with \`<response clipped>\`
* The \`undo_edit\` command will revert the last edit made to the file at \`path\`
* This tool can be used for creating and editing files in plain-text format.


Before using this tool:
1. Use the view tool to understand the file's contents and context
2. Verify the directory path is correct (only applicable when creating new files):
   - Use the view tool to verify the parent directory exists and is the correct location

When making edits:
   - Ensure the edit results in idiomatic, correct code
   - Do not leave the code in a broken state
   - Always use absolute file paths (starting with /)

CRITICAL REQUIREMENTS FOR USING THIS TOOL:

1. EXACT MATCHING: The \`old_str\` parameter must match EXACTLY one or more consecutive lines from the file, including all whitespace and indentation. The tool will fail if \`old_str\` matches multiple locations or doesn't match exactly with the file content.

2. UNIQUENESS: The \`old_str\` must uniquely identify a single instance in the file:
   - Include sufficient context before and after the change point (3-5 lines recommended)
   - If not unique, the replacement will not be performed

3. REPLACEMENT: The \`new_str\` parameter should contain the edited lines that replace the \`old_str\`. Both strings must be different.

Remember: when making multiple file edits in a row to the same file, you should prefer to send all edits in a single message with multiple calls to this tool, rather than multiple messages with a single call each.
`;

/**
 * The file editor's description: OpenHands adds the working directory, so that the model starts
 * there rather than at `/`. (The line on viewing images, added for vision models, is left out: this
 * editor does not show images.)
 */
export function fileEditorDescription(workingDir: string): string {
  return `${FILE_EDITOR_DESCRIPTION}\n\nYour current working directory is: ${workingDir}\nWhen exploring project structure, start with this directory instead of the root filesystem.`;
}

/** The file editor's parameters (`FileEditorAction`). */
export const FILE_EDITOR_PARAMETERS: Readonly<Record<string, string>> = {
  command: `The commands to run. Allowed options are: \`view\`, \`create\`, \`str_replace\`, \`insert\`, \`undo_edit\`.`,
  path: `Absolute path to file or directory.`,
  file_text: `Required parameter of \`create\` command, with the content of the file to be created.`,
  old_str: `Required parameter of \`str_replace\` command containing the string in \`path\` to replace.`,
  new_str: `Optional parameter of \`str_replace\` command containing the new string (if not given, no string will be added). Required parameter of \`insert\` command containing the string to insert.`,
  insert_line: `Required parameter of \`insert\` command. The \`new_str\` will be inserted AFTER the line \`insert_line\` of \`path\`.`,
  view_range: `Optional parameter of \`view\` command when \`path\` points to a file. If none is given, the full file is shown. If provided, the file will be shown in the indicated line number range, e.g. [11, 12] will show lines 11 and 12. Indexing at 1 to start. Setting \`[start_line, -1]\` shows all lines from \`start_line\` to the end of the file.`,
};

export const TASK_TRACKER_DESCRIPTION = `This tool provides structured task management capabilities for development workflows.
It enables systematic tracking of work items, progress monitoring, and efficient
organization of complex development activities.

The tool maintains visibility into project status and helps communicate
progress effectively to users.

## Application Guidelines

Utilize this tool in the following situations:

1. Multi-phase development work - When projects involve multiple sequential or
   parallel activities
2. Complex implementation tasks - Work requiring systematic planning and
   coordination across multiple components
3. Explicit user request for task organization - When users specifically ask
   for structured task management
4. Multiple concurrent requirements - When users present several work items
   that need coordination
5. Project initiation - Capture and organize user requirements at project start
6. Work commencement - Update task status to in_progress before beginning
   implementation. Maintain focus by limiting active work to one task
7. Task completion - Update status to done and identify any additional work
   that emerged during implementation

## Situations Where Tool Usage Is Unnecessary

Avoid using this tool when:

1. Single atomic tasks that require no decomposition
2. Trivial operations where tracking adds no organizational value
3. Simple activities completable in minimal steps
4. Pure information exchange or discussion

Note: For single straightforward tasks, proceed with direct implementation
rather than creating tracking overhead.

## Usage Scenarios

**Scenario A: Feature Development with Validation**
User request: "Build a user authentication system with login/logout functionality.
Don't forget to include input validation and error handling!"

Response approach: I'll implement a user authentication system with comprehensive
validation. Let me organize this work systematically.

*Task breakdown includes:*
1. Design authentication API endpoints and data models
2. Implement user login/logout controllers with session management
3. Add client-side form validation and error display
4. Create backend input sanitization and security checks
5. Implement comprehensive error handling for edge cases
6. Perform integration testing and fix any issues

**Scenario B: Codebase Refactoring**
User request: "I need to update all instances of the method 'fetchData' to
'retrieveInformation' throughout the entire project"

Response approach: Let me first analyze your codebase to identify all locations
where 'fetchData' appears.

*After code analysis*

I've located 12 occurrences of 'fetchData' across 6 files in your project.
I'll create a systematic plan to update these references.

*Organized task list includes specific file-by-file updates*

**Scenario C: Multi-feature Development**
User request: "Set up a blog platform with these components: admin dashboard,
article management, comment system, and user profiles."

Response approach: I'll help build your blog platform. Let me break down these
components into manageable implementation phases.

*Creates structured plan with each feature decomposed into specific development tasks*

## Counter-examples - Direct Implementation Preferred

**Counter-example A: Simple inquiry**
User request: "What's the syntax for a for loop in JavaScript?"

Response approach: Here's how to write a for loop in JavaScript:

\`\`\`javascript
for (let i = 0; i < array.length; i++) {
    console.log(array[i]);
}
\`\`\`

*No task tracking needed - single informational response*

**Counter-example B: Minor modification**
User request: "Please add a docstring to the processPayment function explaining
its parameters."

Response approach: I'll add a docstring to explain the processPayment function.

*Direct edit without task tracking for simple modification*

## Status Management and Workflow

1. **Status Values**: Track work using these states:
   - todo: Not yet initiated
   - in_progress: Currently active (maintain single focus)
   - done: Successfully completed

2. **Workflow Practices**:
   - Update status dynamically as work progresses
   - Mark completion immediately upon task finish
   - Limit active work to ONE task at any given time
   - Complete current activities before initiating new ones
   - Remove obsolete tasks from tracking entirely

3. **Completion Criteria**:
   - Mark tasks as done only when fully achieved
   - Keep status as in_progress if errors, blocks, or partial completion exist
   - Create new tasks for discovered issues or dependencies
   - Never mark done when:
       - Test suites are failing
       - Implementation remains incomplete
       - Unresolved errors persist
       - Required resources are unavailable

4. **Task Organization**:
   - Write precise, actionable descriptions
   - Decompose complex work into manageable units
   - Use descriptive, clear naming conventions

When uncertain, favor using this tool. Proactive task management demonstrates
systematic approach and ensures comprehensive requirement fulfillment.`;

/** The task tracker's parameters (`TaskTrackerAction`, `TaskItem`). */
export const TASK_TRACKER_PARAMETERS: Readonly<Record<string, string>> = {
  command: `The command to execute. \`view\` shows the current task list. \`plan\` creates or updates the task list based on provided requirements and progress. Always \`view\` the current list before making changes.`,
  task_list: `The full task list. Required parameter of \`plan\` command.`,
  "task_list.items.title": `A brief title for the task.`,
  "task_list.items.notes": `Additional details or notes about the task.`,
  "task_list.items.status": `The current status of the task. One of 'todo', 'in_progress', or 'done'.`,
};

export const FINISH_DESCRIPTION = `Signals the completion of the current task or conversation.

Use this tool when:
- You have successfully completed the user's requested task
- You cannot proceed further due to technical limitations or missing information

The message should include:
- A clear summary of actions taken and their results
- Any next steps for the user
- Explanation if you're unable to complete the task
- Any follow-up questions if more information is needed
`;

export const FINISH_PARAMETERS: Readonly<Record<string, string>> = {
  message: `Final message to send to the user.`,
};

export const THINK_DESCRIPTION = `Use the tool to think about something. It will not obtain new information or make any changes to the repository, but just log the thought. Use it when complex reasoning or brainstorming is needed.

Common use cases:
1. When exploring a repository and discovering the source of a bug, call this tool to brainstorm several unique ways of fixing the bug, and assess which change(s) are likely to be simplest and most effective.
2. After receiving test results, use this tool to brainstorm ways to fix failing tests.
3. When planning a complex refactoring, use this tool to outline different approaches and their tradeoffs.
4. When designing a new feature, use this tool to think through architecture decisions and implementation details.
5. When debugging a complex issue, use this tool to organize your thoughts and hypotheses.

The tool simply logs your thought process for better transparency and does not execute any code or make changes.`;

export const THINK_PARAMETERS: Readonly<Record<string, string>> = {
  thought: `The thought to log.`,
};
