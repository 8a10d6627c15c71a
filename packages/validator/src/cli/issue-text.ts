/** One issue as the human format prints it; the HTML report shows the same text at the event. */
import { sanitize, type ReportedIssue } from "./model.js";

/** `text` in an ANSI colour (`code`) when `enabled`. */
export const paint = (enabled: boolean, code: string, text: string): string => (enabled ? `\x1b[${code}m${text}\x1b[0m` : text);

/**
 * `file:line  /pointer  message  (rule)`, then the line of the input with the culprit marked, each
 * line ending in a line feed; the input's own text is sanitised for a terminal.
 */
export function issueText(issue: ReportedIssue, color: boolean): string {
  const where = issue.line !== undefined ? `${issue.file}:${issue.line}` : issue.file;
  const tone = issue.severity === "error" ? "31" : "33";
  const parts = [paint(color, "1", sanitize(where))];
  if (issue.pointer !== undefined) parts.push(sanitize(issue.pointer || "/"));
  parts.push(paint(color, tone, `${issue.severity === "warning" ? "warning: " : ""}${sanitize(issue.message)}`));
  parts.push(paint(color, "2", `(${issue.rule})`));
  let text = `${parts.join("  ")}\n`;
  if (issue.fragment) {
    const bar = paint(color, "2", "    | ");
    text += `${bar}${issue.fragment.text}\n${bar}${" ".repeat(issue.fragment.mark)}${paint(color, tone, "^".repeat(issue.fragment.length))}\n`;
  }
  return text;
}
