/**
 * From command-line arguments to the inputs to validate: standard input, files, the per-event
 * directories of the reference implementation, directories of recordings, and globs.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { expandGlob, hasGlobMagic } from "./glob.js";

/**
 * How the reference implementation names the file of each event in a conversation's `events/`
 * directory (`event-{index:05d}-{id}.json`; more digits past 99999).
 */
const EVENT_FILE_PATTERN = /^event-(\d{5,})-([0-9a-fA-F-]{8,})\.json$/;

/** Files a directory walk picks up as recordings (also gzip-compressed). */
const RECORDING_FILE = /\.(?:json|jsonl|ndjson)(?:\.gz)?$/i;

const SKIPPED_DIRECTORIES = new Set(["node_modules", ".git"]);

export interface EventFile {
  path: string;
  name: string;
  index: number;
  id: string;
}

export type Input =
  | { type: "stdin"; display: string }
  | { type: "file"; path: string; display: string; size: number }
  | { type: "directory"; path: string; display: string; files: EventFile[]; /** names like event files that do not follow the pattern */ odd: string[] }
  | { type: "error"; display: string; rule: string; message: string };

/** The path as shown: relative to `cwd` when inside it, with forward slashes. */
export function displayPath(absolute: string, cwd: string): string {
  const relative = path.relative(cwd, absolute);
  const shown = relative === "" ? "." : relative.startsWith("..") || path.isAbsolute(relative) ? absolute : relative;
  return shown.split(path.sep).join("/");
}

/** Resolves the arguments, in order; an argument naming nothing readable becomes an `error` input. */
export async function resolveInputs(args: readonly string[], cwd: string): Promise<Input[]> {
  const inputs: Input[] = [];
  const seen = new Set<string>();
  const add = (input: Input, key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    inputs.push(input);
  };
  for (const arg of args) {
    if (arg === "-") {
      add({ type: "stdin", display: "<stdin>" }, "-");
      continue;
    }
    const absolute = path.resolve(cwd, arg);
    const info = await stat(absolute).catch((error: NodeJS.ErrnoException) => error);
    if (!(info instanceof Error)) {
      for (const input of await inputsAt(absolute, info.isDirectory(), info.size, cwd)) add(input, input.type === "error" ? `!${absolute}` : (input as { path: string }).path);
      continue;
    }
    if (hasGlobMagic(arg)) {
      const matches = await expandGlob(arg, cwd);
      if (matches.length === 0) {
        add({ type: "error", display: arg, rule: "input/not-found", message: "no file or directory matches this pattern" }, `!${arg}`);
      }
      for (const match of matches) {
        const matchPath = path.resolve(cwd, match);
        const matchInfo = await stat(matchPath).catch(() => undefined);
        if (!matchInfo) continue;
        for (const input of await inputsAt(matchPath, matchInfo.isDirectory(), matchInfo.size, cwd)) add(input, input.type === "error" ? `!${matchPath}` : (input as { path: string }).path);
      }
      continue;
    }
    const code = (info as NodeJS.ErrnoException).code;
    add(
      {
        type: "error",
        display: displayPath(absolute, cwd),
        rule: code === "ENOENT" || code === "ENOTDIR" ? "input/not-found" : "input/unreadable",
        message: code === "ENOENT" || code === "ENOTDIR" ? "no such file or directory" : `cannot be read: ${info.message}`,
      },
      `!${absolute}`,
    );
  }
  return inputs;
}

async function inputsAt(absolute: string, isDirectory: boolean, size: number, cwd: string): Promise<Input[]> {
  const display = displayPath(absolute, cwd);
  if (!isDirectory) return [{ type: "file", path: absolute, display, size }];
  const found: Input[] = [];
  try {
    await walk(absolute, cwd, found, true);
  } catch (error) {
    return [{ type: "error", display, rule: "input/unreadable", message: `cannot be read: ${(error as Error).message}` }];
  }
  if (found.length === 0) {
    return [
      {
        type: "error",
        display,
        rule: "input/no-recordings",
        message: "holds no recording: no event-NNNNN-<id>.json files, and no .json, .jsonl or .ndjson file below it",
      },
    ];
  }
  return found;
}

/**
 * A directory holding event files is one trajectory; so is one whose `events/` subdirectory holds
 * them (a conversation directory as the reference stores it). Any other directory is searched
 * for recordings: files by extension (symbolic links to files followed), and event directories
 * below it (symbolic links to directories are not followed: no loops). A subdirectory that
 * cannot be read becomes an `error` input: skipping it would pass what was never checked.
 */
async function walk(directory: string, cwd: string, found: Input[], top: boolean): Promise<void> {
  let entries;
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    if (top) throw error;
    found.push({ type: "error", display: displayPath(directory, cwd), rule: "input/unreadable", message: `cannot be read: ${(error as Error).message}` });
    return;
  }
  const events = eventDirectory(directory, entries, cwd);
  if (events) {
    found.push(events);
    return;
  }
  if (entries.some((e) => e.isDirectory() && e.name === "events")) {
    const subdirectory = path.join(directory, "events");
    const inner = eventDirectory(subdirectory, await readdir(subdirectory, { withFileTypes: true }).catch(() => []), cwd);
    if (inner) {
      found.push(inner);
      return;
    }
  }
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of sorted) {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) {
      if (!entry.name.startsWith(".") && !SKIPPED_DIRECTORIES.has(entry.name)) await walk(full, cwd, found, false);
    } else if ((entry.isFile() || entry.isSymbolicLink()) && RECORDING_FILE.test(entry.name)) {
      const info = await stat(full).catch(() => undefined);
      if (info?.isFile()) found.push({ type: "file", path: full, display: displayPath(full, cwd), size: info.size });
      else if (!info) found.push({ type: "error", display: displayPath(full, cwd), rule: "input/not-found", message: "is a broken symbolic link" });
    }
  }
}

function eventDirectory(directory: string, entries: { name: string; isFile(): boolean; isSymbolicLink(): boolean }[], cwd: string): Input | undefined {
  const files: EventFile[] = [];
  const odd: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    const match = EVENT_FILE_PATTERN.exec(entry.name);
    if (match) files.push({ path: path.join(directory, entry.name), name: entry.name, index: Number(match[1]), id: match[2]! });
    else if (entry.name.startsWith("event-") && entry.name.endsWith(".json")) odd.push(entry.name);
  }
  if (files.length === 0) return undefined;
  files.sort((a, b) => a.index - b.index || (a.name < b.name ? -1 : 1));
  return { type: "directory", path: directory, display: displayPath(directory, cwd), files, odd: odd.sort() };
}
