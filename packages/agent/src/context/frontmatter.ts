/**
 * YAML front matter as OpenHands reads a skill file (the `python-frontmatter` package its
 * `Skill.load` uses): the text is trimmed; when its first line is three dashes or more, the text up
 * to the next such line is YAML and the rest, trimmed, is the content. YAML is read as YAML 1.1
 * (PyYAML's `safe_load`): `yes`/`no` are booleans there too.
 */
import { parse } from "yaml";

/** A `---` line (the dashes may be followed by blanks, line ends included, as Python's `\s*$`). */
const BOUNDARY = /^-{3,}\s*$/m;

interface FrontMatter {
  /** The YAML mapping, or `{}` without front matter (or when the YAML is not a mapping). */
  metadata: Record<string, unknown>;
  /** The text after the front matter, trimmed. */
  content: string;
}

/**
 * Splits `source` into front matter and content.
 * @throws Error (the YAML parser's) when the front matter is not valid YAML: OpenHands then skips the file
 */
export function parseFrontMatter(source: string): FrontMatter {
  const text = source.trim();
  const first = BOUNDARY.exec(text);
  if (!first || first.index !== 0) return { metadata: {}, content: text };
  const rest = text.slice(first[0].length);
  const second = BOUNDARY.exec(rest);
  if (!second) return { metadata: {}, content: text };
  const yaml = rest.slice(0, second.index);
  const content = rest.slice(second.index + second[0].length).trim();
  // Duplicate keys are allowed (the last wins), as PyYAML allows them; warnings are not printed.
  const parsed: unknown = parse(yaml, { version: "1.1", uniqueKeys: false, maxAliasCount: 100, logLevel: "error" });
  const metadata = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  return { metadata, content };
}
