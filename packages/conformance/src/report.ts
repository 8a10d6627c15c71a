/** The report in the three output formats: text lines, JSON, JUnit XML. */
import type { Check } from "./check.js";
import type { CheckResult, ConformanceReport } from "./runner.js";

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ⏎ ");

/** One line: `pass  id — title`, `FAIL  id — evidence`, `skip  id — reason`. */
export function formatResultLine(result: CheckResult): string {
  switch (result.status) {
    case "pass":
      return `pass  ${result.id} — ${result.title}${result.note ? ` (${result.note})` : ""}`;
    case "fail":
      return `FAIL  ${result.id} — ${oneLine(result.evidence ?? "")}`;
    case "skip":
      return `skip  ${result.id} — ${oneLine(result.reason ?? "")}`;
  }
}

/** `65 checks: 63 passed, 1 failed, 1 skipped in 8.4 s against http://…` */
export function formatTotal(report: ConformanceReport): string {
  return `${report.results.length} checks: ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped in ${(report.durationMs / 1000).toFixed(1)} s against ${report.baseUrl}`;
}

export function formatText(report: ConformanceReport): string {
  return [...report.results.map(formatResultLine), formatTotal(report)].join("\n") + "\n";
}

export function formatJson(report: ConformanceReport): string {
  return JSON.stringify(report, null, 2) + "\n";
}

/** Escapes text for XML; characters XML 1.0 cannot carry at all (evidence may quote a hostile file name) become `\uXXXX`. */
function xml(text: string): string {
  let out = "";
  for (const c of text) {
    const code = c.charCodeAt(0);
    if (c === "&") out += "&amp;";
    else if (c === "<") out += "&lt;";
    else if (c === ">") out += "&gt;";
    else if (c === '"') out += "&quot;";
    else if (code < 0x20 && c !== "\n" && c !== "\t" && c !== "\r") out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += c;
  }
  return out;
}

/** JUnit XML, one testcase per check, classname = its group (the part of the id before the first dot). */
export function formatJUnit(report: ConformanceReport): string {
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const cases = report.results.map((r) => {
    const open = `    <testcase classname="acs-conformance.${xml(r.id.split(".")[0]!)}" name="${xml(r.id)}" time="${seconds(r.durationMs)}">`;
    if (r.status === "pass") return `${open}</testcase>`;
    if (r.status === "skip") return `${open}\n      <skipped message="${xml(r.reason ?? "")}"/>\n    </testcase>`;
    return `${open}\n      <failure message="${xml(r.title)}">${xml(r.evidence ?? "")}</failure>\n    </testcase>`;
  });
  const counts = `tests="${report.results.length}" failures="${report.failed}" skipped="${report.skipped}" errors="0" time="${seconds(report.durationMs)}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="acs-conformance" ${counts}>`,
    `  <testsuite name="acs-conformance ${xml(report.baseUrl)}" ${counts} timestamp="${report.startedAt}">`,
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}

/** The check list as a Markdown table (the README's, kept in step by a test). */
export function formatCheckTable(checks: readonly Check[]): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|");
  return [
    "| check | what must hold | spec | needs |",
    "| --- | --- | --- | --- |",
    ...checks.map((c) => `| \`${c.id}\` | ${cell(c.title)} | ${cell(c.spec)} | ${(c.needs ?? []).map((n) => `\`${n}\``).join(", ")} |`),
  ].join("\n");
}
