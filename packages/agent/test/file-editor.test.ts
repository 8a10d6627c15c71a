import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FileEditorAction, FileEditorObservation } from "@acs-toolkit/schema";
import { FileEditor } from "../src/tools/file-editor.js";

let root: string;
let ws: string;
let editor: FileEditor;
const run = (action: Omit<FileEditorAction, "kind">) => editor.run({ ...action, kind: "FileEditorAction" });
const textOf = (observation: FileEditorObservation) => (observation.content?.[0] as { text: string }).text;

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), "acs-editor-")));
  ws = path.join(root, "ws");
  mkdirSync(ws);
  editor = new FileEditor(ws);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("file_editor", () => {
  it("refuses a file over 10 MB with OpenHands' message, naming its size", async () => {
    const file = path.join(ws, "big.txt");
    writeFileSync(file, Buffer.alloc(11 * 1024 * 1024, 97));
    for (const action of [{ command: "view", path: file }, { command: "str_replace", path: file, old_str: "a", new_str: "b" }] as const) {
      const observation = await run(action);
      expect(observation.is_error).toBe(true);
      expect(textOf(observation)).toBe("File is too large (11.0MB). Maximum allowed size is 10MB.");
    }
  });

  it("creates a file, refuses to overwrite it, and reports prev_exist and new_content", async () => {
    const file = path.join(ws, "src", "app.py");
    const created = await run({ command: "create", path: file, file_text: "a = 1\n" });
    expect(created).toEqual({
      content: [{ cache_prompt: false, type: "text", text: `File created successfully at: ${file}` }],
      is_error: false,
      command: "create",
      path: file,
      prev_exist: false,
      new_content: "a = 1\n",
      kind: "FileEditorObservation",
    });
    const again = await run({ command: "create", path: file, file_text: "b" });
    expect(again).toMatchObject({ is_error: true, command: "create" });
    expect(textOf(again)).toBe(`Invalid \`path\` parameter: ${file}. File already exists at: ${file}. Cannot overwrite files using command \`create\`.`);
    expect(textOf(await run({ command: "create", path: path.join(ws, "x") }))).toBe("Parameter `file_text` is required for command: create.");
  });

  it("views a file with cat -n numbering, and a view_range", async () => {
    const file = path.join(ws, "f.txt");
    writeFileSync(file, "one\ntwo\nthree\nfour");
    expect(textOf(await run({ command: "view", path: file }))).toBe(`Here's the result of running \`cat -n\` on ${file}:\n     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n`);
    expect(textOf(await run({ command: "view", path: file, view_range: [2, 3] }))).toBe(`Here's the result of running \`cat -n\` on ${file}:\n     2\ttwo\n     3\tthree\n`);
    expect(textOf(await run({ command: "view", path: file, view_range: [3, -1] }))).toContain("     3\tthree\n     4\tfour\n");
    expect(textOf(await run({ command: "view", path: file, view_range: [0, 2] }))).toBe(
      "Invalid `view_range` parameter: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 4].",
    );
    expect(textOf(await run({ command: "view", path: file, view_range: [2, 9] }))).toContain("should be smaller than the number of lines in the file: `4`");
    expect(textOf(await run({ command: "view", path: file, view_range: [3, 2] }))).toContain("should be greater than or equal to the first element `3`");
  });

  it("views a directory two levels deep, hidden entries left out and counted", async () => {
    mkdirSync(path.join(ws, "a", "b", "c"), { recursive: true });
    writeFileSync(path.join(ws, "a", "b", "c", "deep.txt"), "");
    writeFileSync(path.join(ws, "top.txt"), "");
    writeFileSync(path.join(ws, ".env"), "");
    const listing = textOf(await run({ command: "view", path: ws }));
    expect(listing).toBe(
      `Here's the files and directories up to 2 levels deep in ${ws}, excluding hidden items:\n${ws}/\n${ws}/a/\n${ws}/a/b/\n${ws}/top.txt\n\n` +
        `1 hidden files/directories in this directory are excluded. You can use 'ls -la ${ws}' to see them.`,
    );
    expect(textOf(await run({ command: "view", path: ws, view_range: [1, 2] }))).toContain("The `view_range` parameter is not allowed when `path` points to a directory.");
  });

  it("str_replace needs exactly one match and shows a snippet; undo_edit restores", async () => {
    const file = path.join(ws, "code.py");
    const original = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join("\n") + "\nrepeat\nrepeat\n";
    writeFileSync(file, original);

    expect(textOf(await run({ command: "str_replace", path: file, old_str: "missing", new_str: "x" }))).toBe(
      `No replacement was performed, old_str \`missing\` did not appear verbatim in ${file}.`,
    );
    expect(textOf(await run({ command: "str_replace", path: file, old_str: "repeat", new_str: "x" }))).toBe(
      "No replacement was performed. Multiple occurrences of old_str `repeat` in lines [13, 14]. Please ensure it is unique.",
    );
    expect(textOf(await run({ command: "str_replace", path: file, old_str: "line 6", new_str: "line 6" }))).toBe(
      "No replacement was performed. `new_str` and `old_str` must be different.",
    );
    expect(textOf(await run({ command: "str_replace", path: file }))).toBe("Parameter `old_str` is required for command: str_replace.");

    const edited = await run({ command: "str_replace", path: file, old_str: "line 6", new_str: "line six" });
    expect(edited).toMatchObject({ is_error: false, command: "str_replace", path: file, prev_exist: true, old_content: original });
    expect(edited.new_content).toBe(original.replace("line 6", "line six"));
    expect(textOf(edited)).toBe(
      `The file ${file} has been edited. Here's the result of running \`cat -n\` on a snippet of ${file}:\n` +
        "     3\tline 3\n     4\tline 4\n     5\tline 5\n     6\tline six\n     7\tline 7\n     8\tline 8\n     9\tline 9\n    10\tline 10\n" +
        "Review the changes and make sure they are as expected. Edit the file again if necessary.",
    );
    // Surrounding whitespace is forgiven, as OpenHands retries with both strings stripped.
    await run({ command: "str_replace", path: file, old_str: "  line 7\n", new_str: "line seven" });
    expect(readFileSync(file, "utf8")).toContain("line seven\nline 8");

    await run({ command: "undo_edit", path: file });
    const undone = await run({ command: "undo_edit", path: file });
    expect(textOf(undone)).toMatch(/^Last edit to .* undone successfully\. Here's the result of running `cat -n`/);
    expect(readFileSync(file, "utf8")).toBe(original);
    expect(textOf(await run({ command: "undo_edit", path: file }))).toBe(`No edit history found for ${file}.`);
  });

  it("inserts after insert_line (0 = at the top) and checks its range", async () => {
    const file = path.join(ws, "list.txt");
    writeFileSync(file, "a\nb\nc");
    const inserted = await run({ command: "insert", path: file, insert_line: 1, new_str: "after a" });
    expect(readFileSync(file, "utf8")).toBe("a\nafter a\nb\nc");
    expect(textOf(inserted)).toBe(
      `The file ${file} has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:\n     1\ta\n     2\tafter a\n     3\tb\n     4\tc\n` +
        "Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
    );
    await run({ command: "insert", path: file, insert_line: 0, new_str: "top" });
    expect(readFileSync(file, "utf8").startsWith("top\na\n")).toBe(true);
    expect(textOf(await run({ command: "insert", path: file, insert_line: 9, new_str: "x" }))).toBe(
      "Invalid `insert_line` parameter: 9. It should be within the range of allowed values: [0, 5]",
    );
    expect(textOf(await run({ command: "insert", path: file, new_str: "x" }))).toBe("Parameter `insert_line` is required for command: insert.");
  });

  it("asks for absolute paths, existing files, and files (not directories) to edit", async () => {
    expect(textOf(await run({ command: "view", path: "rel.txt" }))).toBe(
      `Invalid \`path\` parameter: rel.txt. The path rel.txt is not an absolute path, it should start with \`/\`. Maybe you meant ${ws}/rel.txt?`,
    );
    expect(textOf(await run({ command: "view", path: `${ws}/nope.txt` }))).toBe(
      `Invalid \`path\` parameter: ${ws}/nope.txt. The path ${ws}/nope.txt does not exist. Please provide a valid path.`,
    );
    expect(textOf(await run({ command: "str_replace", path: ws, old_str: "a" }))).toContain("is a directory and only the `view` command can be used on directories.");
    writeFileSync(path.join(ws, "bin.dat"), Buffer.from([0, 1, 2]));
    expect(textOf(await run({ command: "view", path: path.join(ws, "bin.dat") }))).toContain("appears to be binary");
  });

  it("never reads or writes outside the workspace, symbolic links included", async () => {
    writeFileSync(path.join(root, "outside.txt"), "secret");
    symlinkSync(root, path.join(ws, "link"));
    for (const target of [path.join(root, "outside.txt"), "/etc/hostname", path.join(ws, "link", "outside.txt"), `${ws}/../outside.txt`]) {
      const observation = await run({ command: "view", path: target });
      expect(observation.is_error, target).toBe(true);
      expect(textOf(observation)).toContain("is outside the workspace");
    }
    const write = await run({ command: "create", path: path.join(ws, "link", "new.txt"), file_text: "x" });
    expect(write.is_error).toBe(true);
    expect(() => readFileSync(path.join(root, "new.txt"))).toThrow();
  });
});
