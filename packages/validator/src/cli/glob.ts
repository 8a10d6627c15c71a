/**
 * Glob expansion for paths the shell did not expand (quoted patterns, Windows shells, the GitHub
 * action): `*`, `?`, `[abc]`, `[!abc]`, `{a,b}` within a path segment and `**` for any number of
 * directories. As in shells, `*` and `?` do not match a leading dot, and `**` does not enter dot
 * directories, node_modules, or symbolic links to directories (no loops).
 */
import { readdir } from "node:fs/promises";
import path from "node:path";

/** True when the argument has glob syntax. */
export function hasGlobMagic(pattern: string): boolean {
  return /[*?[{]/.test(pattern);
}

/** Translates one path segment of a glob into a RegExp (anchored). */
function segmentToRegExp(segment: string): RegExp {
  let source = "";
  let braces = 0;
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === "\\" && i + 1 < segment.length) {
      source += escapeRegExp(segment[++i]!);
    } else if (c === "*") {
      while (segment[i + 1] === "*") i++;
      source += "[^/]*";
    } else if (c === "?") {
      source += "[^/]";
    } else if (c === "[") {
      const close = segment.indexOf("]", i + 2);
      if (close < 0) {
        source += "\\[";
        continue;
      }
      let body = segment.slice(i + 1, close);
      const negated = body.startsWith("!") || body.startsWith("^");
      if (negated) body = body.slice(1);
      source += `[${negated ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`;
      i = close;
    } else if (c === "{") {
      braces++;
      source += "(?:";
    } else if (c === "}" && braces > 0) {
      braces--;
      source += ")";
    } else if (c === "," && braces > 0) {
      source += "|";
    } else {
      source += escapeRegExp(c);
    }
  }
  source += ")".repeat(braces);
  return new RegExp(`^${source}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

const SKIPPED_DIRECTORIES = new Set(["node_modules", ".git"]);

/**
 * The files and directories matching `pattern`, relative patterns resolved against `cwd`; the
 * result keeps the pattern's form (relative stays relative), sorted, without duplicates.
 */
export async function expandGlob(pattern: string, cwd: string): Promise<string[]> {
  // A backslash escapes a glob character, except on Windows where it separates directories.
  const normalized = process.platform === "win32" ? pattern.replace(/\\/g, "/") : pattern;
  const absolute = path.isAbsolute(normalized);
  const segments = normalized.split("/").filter((s, i) => s !== "" || (i === 0 && absolute));
  // The leading segments without glob syntax are the directory the search starts from.
  let baseCount = 0;
  while (baseCount < segments.length - 1 && !hasGlobMagic(segments[baseCount]!)) baseCount++;
  const baseParts = segments.slice(0, baseCount);
  const base = absolute ? path.join("/", ...baseParts) : baseParts.join("/");
  const rest = segments.slice(baseCount).map((s) => (s === "**" ? "**" : segmentToRegExp(s)));
  const found = new Set<string>();

  async function walk(relative: string, index: number): Promise<void> {
    const matcher = rest[index];
    if (matcher === undefined) {
      found.add(relative);
      return;
    }
    const directory = path.resolve(cwd, relative || ".");
    let entries;
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch {
      return; // not a directory, or unreadable: nothing matches below it
    }
    const join = (name: string) => (relative ? `${relative}/${name}` : name);
    if (matcher === "**") {
      await walk(relative, index + 1); // ** matches no directory at all
      for (const entry of entries) {
        if (entry.isDirectory() && !entry.name.startsWith(".") && !SKIPPED_DIRECTORIES.has(entry.name)) await walk(join(entry.name), index);
      }
      return;
    }
    const last = index === rest.length - 1;
    for (const entry of entries) {
      if (entry.name.startsWith(".") && !matcher.source.startsWith("^\\.")) continue;
      if (!matcher.test(entry.name)) continue;
      if (last) found.add(join(entry.name));
      else if (entry.isDirectory() || entry.isSymbolicLink()) await walk(join(entry.name), index + 1);
    }
  }

  await walk(base, 0);
  return [...found].sort();
}
