/**
 * `file_editor`: view, create, str_replace, insert and undo_edit with the semantics and the messages
 * of OpenHands' FileEditor (openhands-tools `file_editor/editor.py`, after openhands-aci's
 * str_replace_editor): absolute paths, `cat -n` views, a unique match required for str_replace,
 * insertion after `insert_line`, one undo per edit.
 *
 * One addition: the editor runs in the server process, outside the terminal's sandbox, so it only
 * touches regular files inside the conversation's workspace, through {@link WorkspaceFiles} (a walk
 * that cannot be raced out of the workspace by a link swapped meanwhile, and never blocks on a
 * FIFO). A path outside, or a link leading outside, is an error, never a read.
 */
import path from "node:path";
import type { FileEditorAction, FileEditorObservation } from "@acs-toolkit/schema";
import { FILE_EDITOR_PARAMETERS, fileEditorDescription } from "../prompts/tool-descriptions.js";
import { buildAction, llmParameters, toolDefinition } from "./arguments.js";
import { text, type AgentTool } from "./tool.js";
import { WorkspaceFileError, WorkspaceFiles, type WorkspaceEntry } from "./workspace-files.js";

/** Lines of context around an edit in the snippet shown back. */
const SNIPPET_CONTEXT_WINDOW = 4;
/** Longest view returned, in characters. */
const MAX_RESPONSE_LEN_CHAR = 16_000;
const MAX_FILE_BYTES = 10 * 1024 * 1024;
const FILE_CONTENT_TRUNCATED_NOTICE =
  "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";
const DIRECTORY_CONTENT_TRUNCATED_NOTICE =
  "<response clipped><NOTE>Due to the max output limit, only part of this directory has been shown to you. You should use `ls -la` instead to view large directories incrementally.</NOTE>";

/** An editor failure: its message goes back to the LLM as an error observation. */
class EditorError extends Error {}

const invalid = (parameter: string, value: unknown, hint: string) => new EditorError(`Invalid \`${parameter}\` parameter: ${format(value)}. ${hint}`);
const missing = (parameter: string, command: string) => new EditorError(`Parameter \`${parameter}\` is required for command: ${command}.`);

/** Values in messages as Python prints them (lists as `[1, 2]`). */
function format(value: unknown): string {
  return Array.isArray(value) ? `[${value.map(format).join(", ")}]` : String(value);
}

function maybeTruncate(content: string, notice: string): string {
  return content.length > MAX_RESPONSE_LEN_CHAR ? content.slice(0, MAX_RESPONSE_LEN_CHAR) + notice : content;
}

/** `cat -n` of `content`, numbered from `startLine`, as OpenHands formats it. */
function catN(content: string, description: string, startLine = 1): string {
  const numbered = maybeTruncate(content, FILE_CONTENT_TRUNCATED_NOTICE)
    .split("\n")
    .map((line, index) => `${String(index + startLine).padStart(6)}\t${line}`)
    .join("\n");
  return `Here's the result of running \`cat -n\` on ${description}:\n${numbered}\n`;
}

interface FileEditorOptions {
  workspaceDir: string;
  /** Who the files the editor creates belong to (the sandbox's user, when it is not the server's). */
  owner?: { uid: number; gid: number };
}

export function fileEditorTool(options: FileEditorOptions): AgentTool {
  const editor = new FileEditor(options.workspaceDir, options.owner);
  const definition = toolDefinition("FileEditorTool", {
    title: "file_editor",
    description: fileEditorDescription(options.workspaceDir),
    annotations: { title: "file_editor", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  });
  return {
    name: "file_editor",
    definition,
    parameters: llmParameters("FileEditorAction", FILE_EDITOR_PARAMETERS),
    readOnly: false,
    toAction: (args) => buildAction("FileEditorAction", args),
    execute: (action) => editor.run(action as FileEditorAction),
  };
}

/** The editor of one conversation: its undo history lives as long as the conversation is open. */
export class FileEditor {
  private readonly history = new Map<string, string[]>();
  private readonly files: WorkspaceFiles;

  constructor(
    private readonly workspaceDir: string,
    owner?: { uid: number; gid: number },
  ) {
    this.files = new WorkspaceFiles(workspaceDir, owner);
  }

  async run(action: FileEditorAction): Promise<FileEditorObservation> {
    try {
      return await this.dispatch(action);
    } catch (error) {
      if (!(error instanceof EditorError || error instanceof WorkspaceFileError)) throw error;
      const message = error instanceof WorkspaceFileError && error.reason === "outside" ? invalid("path", action.path, error.message).message : error.message;
      return { content: [text(message)], is_error: true, command: action.command, kind: "FileEditorObservation" };
    }
  }

  private async dispatch(action: FileEditorAction): Promise<FileEditorObservation> {
    const { file, entry } = await this.validatePath(action.command, action.path);
    switch (action.command) {
      case "view":
        return this.view(file, entry?.type === "directory", action.view_range ?? null);
      case "create": {
        if (action.file_text == null) throw missing("file_text", "create");
        await this.files.create(file, action.file_text);
        return this.result("create", file, `File created successfully at: ${file}`, { prev_exist: false, new_content: action.file_text });
      }
      case "str_replace":
        if (action.old_str == null) throw missing("old_str", "str_replace");
        return this.strReplace(file, action.old_str, action.new_str ?? "");
      case "insert":
        if (action.insert_line == null) throw missing("insert_line", "insert");
        if (action.new_str == null) throw missing("new_str", "insert");
        return this.insert(file, action.insert_line, action.new_str);
      case "undo_edit":
        return this.undo(file);
    }
  }

  private result(command: FileEditorAction["command"], file: string, output: string, extra: Partial<FileEditorObservation> = {}): FileEditorObservation {
    return { content: [text(output)], is_error: false, command, path: file, prev_exist: true, ...extra, kind: "FileEditorObservation" };
  }

  /** OpenHands' path checks, then the workspace fence. Returns the absolute path. */
  private async validatePath(command: string, given: string): Promise<{ file: string; entry: WorkspaceEntry | undefined }> {
    if (!path.isAbsolute(given)) {
      const suggestion = path.join(this.workspaceDir, given);
      throw invalid("path", given, `The path ${given} is not an absolute path, it should start with \`/\`. Maybe you meant ${suggestion}?`);
    }
    const file = path.normalize(given);
    if (!this.files.contains(file)) {
      throw invalid("path", given, `The path ${given} is outside the workspace ${this.workspaceDir}; the file editor only works inside the workspace.`);
    }
    const info = await this.entry(file);
    if (!info && command !== "create") throw invalid("path", given, `The path ${given} does not exist. Please provide a valid path.`);
    if (info && command === "create") throw invalid("path", given, `File already exists at: ${given}. Cannot overwrite files using command \`create\`.`);
    if (info?.type === "directory" && command !== "view") {
      throw invalid("path", given, `The path ${given} is a directory and only the \`view\` command can be used on directories.`);
    }
    return { file, entry: info };
  }

  /** What `file` is, or undefined when it does not exist (a missing parent, or a file as a parent, included). */
  private async entry(file: string): Promise<WorkspaceEntry | undefined> {
    try {
      return await this.files.lookup(file);
    } catch (error) {
      if (error instanceof WorkspaceFileError && (error.reason === "missing" || error.reason === "not_directory")) return undefined;
      throw error;
    }
  }

  private async readText(file: string): Promise<string> {
    const bytes = await this.files.read(file, MAX_FILE_BYTES).catch((error: unknown) => {
      if (!(error instanceof WorkspaceFileError && error.reason === "too_large")) throw error;
      throw new EditorError(`File is too large (${(error.size! / 1024 / 1024).toFixed(1)}MB). Maximum allowed size is ${MAX_FILE_BYTES / 1024 / 1024}MB.`);
    });
    if (bytes.includes(0)) throw new EditorError(`The file ${file} appears to be binary; the file editor only works on text files.`);
    return bytes.toString("utf8");
  }

  private async view(file: string, isDirectory: boolean, viewRange: number[] | null): Promise<FileEditorObservation> {
    if (isDirectory) {
      if (viewRange) throw invalid("view_range", viewRange, "The `view_range` parameter is not allowed when `path` points to a directory.");
      return this.result("view", file, await this.listDirectory(file));
    }
    const content = await this.readText(file);
    if (!viewRange) return this.result("view", file, catN(content, file));
    const lines = content.split("\n");
    const count = lines.length;
    if (viewRange.length !== 2 || !viewRange.every(Number.isInteger)) throw invalid("view_range", viewRange, "It should be a list of two integers.");
    const [start, end] = viewRange as [number, number];
    if (start < 1 || start > count) {
      throw invalid("view_range", viewRange, `Its first element \`${start}\` should be within the range of lines of the file: [1, ${count}].`);
    }
    if (end > count) throw invalid("view_range", viewRange, `Its second element \`${end}\` should be smaller than the number of lines in the file: \`${count}\`.`);
    if (end !== -1 && end < start) {
      throw invalid("view_range", viewRange, `Its second element \`${end}\` should be greater than or equal to the first element \`${start}\`.`);
    }
    const shown = (end === -1 ? lines.slice(start - 1) : lines.slice(start - 1, end)).join("\n");
    return this.result("view", file, catN(shown, file, start));
  }

  /** Non-hidden entries up to two levels deep, sorted, directories with a trailing `/`. */
  private async listDirectory(dir: string): Promise<string> {
    const found: string[] = [dir.endsWith("/") ? dir : `${dir}/`];
    const all = await this.files.list(dir);
    const hidden = all.filter((entry) => entry.name.startsWith(".")).length;
    for (const entry of all) {
      if (entry.name.startsWith(".")) continue;
      const child = path.join(dir, entry.name);
      // A link is followed only while it stays inside the workspace.
      const isDir = entry.isDirectory() || (entry.isSymbolicLink() && (await this.files.lookup(child).catch(() => undefined))?.type === "directory");
      found.push(isDir ? `${child}/` : child);
      if (!isDir) continue;
      const inner = await this.files.list(child).catch(() => []);
      for (const sub of inner) {
        if (sub.name.startsWith(".")) continue;
        found.push(sub.isDirectory() ? `${path.join(child, sub.name)}/` : path.join(child, sub.name));
      }
    }
    found.sort((a, b) => (a.replace(/\/$/, "") < b.replace(/\/$/, "") ? -1 : 1));
    let output = `Here's the files and directories up to 2 levels deep in ${dir}, excluding hidden items:\n${found.join("\n")}`;
    if (output.length > MAX_RESPONSE_LEN_CHAR) output = output.slice(0, MAX_RESPONSE_LEN_CHAR) + DIRECTORY_CONTENT_TRUNCATED_NOTICE;
    if (hidden > 0) output += `\n\n${hidden} hidden files/directories in this directory are excluded. You can use 'ls -la ${dir}' to see them.`;
    return output;
  }

  private occurrences(content: string, needle: string): number[] {
    const found: number[] = [];
    if (!needle) return found;
    for (let at = content.indexOf(needle); at >= 0; at = content.indexOf(needle, at + 1)) found.push(at);
    return found;
  }

  private async strReplace(file: string, oldStr: string, newStr: string): Promise<FileEditorObservation> {
    if (newStr === oldStr) throw new EditorError("No replacement was performed. `new_str` and `old_str` must be different.");
    const content = await this.readText(file);
    let found = this.occurrences(content, oldStr);
    if (found.length === 0) {
      // Possibly extra whitespace around the string: OpenHands retries with both stripped.
      oldStr = oldStr.trim();
      newStr = newStr.trim();
      found = this.occurrences(content, oldStr);
      if (found.length === 0) throw new EditorError(`No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${file}.`);
    }
    const lineOf = (offset: number) => content.slice(0, offset).split("\n").length;
    if (found.length > 1) {
      const lines = [...new Set(found.map(lineOf))].sort((a, b) => a - b);
      throw new EditorError(`No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines ${format(lines)}. Please ensure it is unique.`);
    }
    const at = found[0]!;
    const updated = content.slice(0, at) + newStr + content.slice(at + oldStr.length);
    await this.files.write(file, updated);
    this.remember(file, content);
    const replacementLine = lineOf(at);
    const start = Math.max(0, replacementLine - SNIPPET_CONTEXT_WINDOW);
    const end = replacementLine + SNIPPET_CONTEXT_WINDOW + newStr.split("\n").length - 1;
    // OpenHands reads lines start+1 … end (1-based, inclusive) of the new content.
    const snippet = updated.split("\n").slice(start, end).join("\n");
    const output =
      `The file ${file} has been edited. ` +
      catN(snippet, `a snippet of ${file}`, start + 1) +
      "Review the changes and make sure they are as expected. Edit the file again if necessary.";
    return this.result("str_replace", file, output, { old_content: content, new_content: updated });
  }

  private async insert(file: string, insertLine: number, newStr: string): Promise<FileEditorObservation> {
    const content = await this.readText(file);
    const lines = content.split("\n");
    if (insertLine < 0 || insertLine > lines.length) {
      throw invalid("insert_line", insertLine, `It should be within the range of allowed values: [0, ${lines.length}]`);
    }
    const inserted = newStr.split("\n");
    const updated = [...lines.slice(0, insertLine), ...inserted, ...lines.slice(insertLine)].join("\n");
    const snippet = [
      ...lines.slice(Math.max(0, insertLine - SNIPPET_CONTEXT_WINDOW), insertLine),
      ...inserted,
      ...lines.slice(insertLine, insertLine + SNIPPET_CONTEXT_WINDOW),
    ].join("\n");
    await this.files.write(file, updated);
    this.remember(file, content);
    const output =
      `The file ${file} has been edited. ` +
      catN(snippet, "a snippet of the edited file", Math.max(1, insertLine - SNIPPET_CONTEXT_WINDOW + 1)) +
      "Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.";
    return this.result("insert", file, output, { old_content: content, new_content: updated });
  }

  private async undo(file: string): Promise<FileEditorObservation> {
    const previous = this.history.get(file)?.pop();
    if (previous === undefined) throw new EditorError(`No edit history found for ${file}.`);
    const current = await this.readText(file);
    await this.files.write(file, previous);
    return this.result("undo_edit", file, `Last edit to ${file} undone successfully. ${catN(previous, file)}`, { old_content: current, new_content: previous });
  }

  private remember(file: string, content: string): void {
    const stack = this.history.get(file) ?? [];
    stack.push(content);
    this.history.set(file, stack);
  }
}
