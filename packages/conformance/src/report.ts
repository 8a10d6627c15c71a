/** The report in the three output formats: text lines, JSON, JUnit XML. */
import { junitDocument, junitSuite, type JUnitCase } from "@acs-toolkit/cli-kit/junit";
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

/** JUnit XML, one testcase per check, classname = its group (the part of the id before the first dot). */
export function formatJUnit(report: ConformanceReport): string {
  const cases = report.results.map(
    (r): JUnitCase => ({
      classname: `acs-conformance.${r.id.split(".")[0]!}`,
      name: r.id,
      timeMs: r.durationMs,
      problem: r.status === "fail" ? { kind: "failure", message: r.title, text: r.evidence } : undefined,
      skipped: r.status === "skip" ? (r.reason ?? "") : undefined,
    }),
  );
  const suite = junitSuite({ name: `acs-conformance ${report.baseUrl}`, timeMs: report.durationMs, timestamp: report.startedAt, cases });
  return junitDocument("acs-conformance", [suite], { timeMs: report.durationMs });
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
