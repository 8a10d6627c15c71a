/**
 * The output formats. Issues are written as they are found (JUnit keeps each input's until the
 * input ends, at most 1,000 of them; the HTML report spools its body, see html/), so the output
 * never holds a whole run in memory.
 */
import { appendFileSync } from "node:fs";
import { junitDocument, junitSuite, type JUnitCase, type RenderedSuite } from "@acs-toolkit/cli-kit/junit";
import { HtmlReporter, type HtmlReportOptions } from "./html/reporter.js";
import { issueText, paint } from "./issue-text.js";
import type { Output } from "./output.js";
import { sanitize, verdict, type InputReport, type ReportedIssue, type RunReport } from "./model.js";
import type { Entry } from "./read.js";

export type OutputFormat = "human" | "json" | "junit" | "github" | "html";

/** What a format is told of a run, in order: per input, its start, its events and issues, its end; then the summary. */
export interface Reporter {
  inputStart?(file: string): void;
  /** An event as read, before its issues; only for formats that show events. */
  event?(entry: Entry, index: number): void;
  issue(issue: ReportedIssue): void;
  inputDone(input: InputReport): void;
  finish(report: RunReport): void | Promise<void>;
}

interface ReporterOptions {
  color: boolean;
  /** `$GITHUB_STEP_SUMMARY`: where the github format appends a Markdown summary. */
  stepSummary?: string | undefined;
  /** What the HTML report states of the run (profile, rules) and how much it shows. */
  html: HtmlReportOptions;
}

export function createReporter(format: OutputFormat, output: Output, options: ReporterOptions): Reporter {
  switch (format) {
    case "json":
      return new JsonReporter(output);
    case "junit":
      return new JunitReporter(output);
    case "github":
      return new GithubReporter(output, options.stepSummary);
    case "html":
      return new HtmlReporter(output, options.html);
    default:
      return new HumanReporter(output, options.color);
  }
}

const plural = (count: number, word: string) => `${count.toLocaleString("en-US")} ${word}${count === 1 ? "" : "s"}`;

/** `ActionEvent 2, MessageEvent 3` by decreasing count, then name. */
function counts(record: Record<string, number>): string {
  return Object.entries(record)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([name, count]) => `${name} ${count.toLocaleString("en-US")}`)
    .join(", ");
}

/** The closing summary of the human and github formats. */
function summaryLines(report: RunReport): string[] {
  const lines: string[] = [];
  const invalid = report.inputs.filter((i) => i.errors > 0 || i.unreadable);
  if (report.inputs.length > 1) {
    const shown = invalid.slice(0, 20);
    for (const input of shown) {
      lines.push(
        input.unreadable
          ? `  ✖ ${sanitize(input.file)}  ${input.unreadable.message}`
          : `  ✖ ${sanitize(input.file)}  ${plural(input.events, "event")}, ${plural(input.errors, "error")}, ${plural(input.warnings, "warning")}`,
      );
    }
    if (invalid.length > shown.length) lines.push(`  ✖ ${invalid.length - shown.length} more invalid inputs`);
    const valid = report.inputs.length - invalid.length;
    if (valid > 0) lines.push(`  ✔ ${plural(valid, "input")} valid`);
    lines.push("");
  }
  lines.push("Summary");
  lines.push(`  inputs    ${report.inputs.length.toLocaleString("en-US")}${invalid.length ? ` (${invalid.length.toLocaleString("en-US")} invalid or unreadable)` : ""}`);
  lines.push(`  events    ${report.events.toLocaleString("en-US")}${report.events ? `: ${counts(report.kinds)}` : ""}`);
  lines.push(`  errors    ${report.errors.toLocaleString("en-US")}${report.errors ? `: ${counts(report.errorsByRule)}` : ""}`);
  lines.push(`  warnings  ${report.warnings.toLocaleString("en-US")}${report.warnings ? `: ${counts(report.warningsByRule)}` : ""}`);
  if (report.truncated) {
    lines.push(`  stopped after ${plural(report.errors, "error")} (--max-errors)${report.skippedInputs ? `; ${plural(report.skippedInputs, "input")} not read` : ""}`);
  }
  return lines;
}

/** `file:line  /pointer  message  (rule)`, then the line of the input with the culprit marked. */
class HumanReporter implements Reporter {
  constructor(
    private readonly output: Output,
    private readonly color: boolean,
  ) {}

  issue(issue: ReportedIssue): void {
    this.output.write(issueText(issue, this.color));
  }

  inputDone(): void {}

  finish(report: RunReport): void {
    const lines = summaryLines(report);
    const mark = report.exitCode === 0 ? paint(this.color, "32", "✔ valid") : paint(this.color, "31", `✖ ${verdict(report)}`);
    lines.push(`${mark} (exit code ${report.exitCode})`);
    this.output.write(`${report.errors + report.warnings > 0 || report.inputs.some((i) => i.unreadable) ? "\n" : ""}${lines.join("\n")}\n`);
  }
}

/**
 * One JSON document: `{"version":1,"issues":[…],"inputs":[…],"summary":{…},"ok":…,"exitCode":…}`,
 * its issues written as they are found.
 */
class JsonReporter implements Reporter {
  private started = false;
  private first = true;
  private readonly inputs: InputReport[] = [];

  constructor(private readonly output: Output) {}

  private start(): void {
    if (this.started) return;
    this.started = true;
    this.output.write('{"version":1,"issues":[');
  }

  issue(issue: ReportedIssue): void {
    this.start();
    const record = {
      severity: issue.severity,
      file: issue.file,
      line: issue.line,
      column: issue.column,
      pointer: issue.pointer,
      rule: issue.rule,
      message: issue.message,
      index: issue.index,
      eventId: issue.eventId,
      fragment: issue.fragment?.text,
    };
    this.output.write(`${this.first ? "\n" : ",\n"}${JSON.stringify(record)}`);
    this.first = false;
  }

  inputDone(input: InputReport): void {
    this.inputs.push(input);
  }

  finish(report: RunReport): void {
    this.start();
    const summary = {
      inputs: report.inputs.length,
      events: report.events,
      kinds: report.kinds,
      errors: report.errors,
      warnings: report.warnings,
      errorsByRule: report.errorsByRule,
      warningsByRule: report.warningsByRule,
      truncated: report.truncated,
      skippedInputs: report.skippedInputs,
    };
    const inputs = report.inputs.map((i) => JSON.stringify(i)).join(",\n");
    this.output.write(`${this.first ? "" : "\n"}],\n"inputs":[${inputs ? `\n${inputs}\n` : ""}],\n"summary":${JSON.stringify(summary)},\n"ok":${report.exitCode === 0},\n"exitCode":${report.exitCode}}\n`);
  }
}

const MAX_TESTCASES = 1000;

/**
 * JUnit XML for CI test reports: a testsuite per input, a failing testcase per error (an `error`
 * element when the input could not be read), one passing testcase for a valid input; warnings go
 * to the suite's system-out.
 */
class JunitReporter implements Reporter {
  private suites: RenderedSuite[] = [];
  private cases: JUnitCase[] = [];
  private warnings: string[] = [];
  private moreErrors = 0;
  private moreWarnings = 0;

  constructor(private readonly output: Output) {}

  issue(issue: ReportedIssue): void {
    const where = `${issue.file}${issue.line !== undefined ? `:${issue.line}` : ""}`;
    const text = `${where}  ${issue.pointer !== undefined ? `${issue.pointer || "/"}  ` : ""}${issue.severity === "warning" ? "warning: " : ""}${issue.message}  (${issue.rule})${
      issue.fragment ? `\n    | ${issue.fragment.text}\n    | ${" ".repeat(issue.fragment.mark)}${"^".repeat(issue.fragment.length)}` : ""
    }`;
    if (issue.severity === "warning") {
      if (this.warnings.length < MAX_TESTCASES) this.warnings.push(text);
      else this.moreWarnings++;
      return;
    }
    if (this.cases.length >= MAX_TESTCASES) {
      this.moreErrors++;
      return;
    }
    const name = `${issue.line !== undefined ? `line ${issue.line} ` : ""}${issue.pointer !== undefined ? `${issue.pointer || "/"} ` : ""}(${issue.rule})`;
    this.cases.push({
      classname: issue.file,
      name,
      file: issue.file,
      line: issue.line,
      problem: {
        kind: issue.fatal ? "error" : "failure",
        type: issue.rule,
        message: `${issue.pointer !== undefined ? `${issue.pointer || "/"}: ` : ""}${issue.message}`,
        text,
      },
    });
  }

  inputDone(input: InputReport): void {
    if (this.moreErrors > 0) {
      this.cases.push({
        classname: input.file,
        name: `${this.moreErrors} more errors`,
        problem: { kind: "failure", type: "truncated", message: `${this.moreErrors} more errors, not listed` },
      });
    }
    if (this.cases.length === 0) this.cases.push({ classname: input.file, name: `valid (${plural(input.events, "event")})` });
    if (this.moreWarnings > 0) this.warnings.push(`… ${this.moreWarnings} more warnings`);
    this.suites.push(
      junitSuite({
        name: input.file,
        properties: [
          ["format", input.format ?? "unknown"],
          ["events", input.events],
          ["warnings", input.warnings],
        ],
        cases: this.cases,
        systemOut: this.warnings.join("\n"),
      }),
    );
    this.cases = [];
    this.warnings = [];
    this.moreErrors = 0;
    this.moreWarnings = 0;
  }

  finish(): void {
    this.output.write(junitDocument("acs-validate", this.suites));
  }
}

/** Workflow commands: `::error file=…,line=…,col=…,title=…::message`, shown on the file and line. */
class GithubReporter implements Reporter {
  constructor(
    private readonly output: Output,
    private readonly stepSummary: string | undefined,
  ) {}

  issue(issue: ReportedIssue): void {
    const properties: string[] = [];
    if (issue.file !== "<stdin>") properties.push(`file=${property(issue.file)}`);
    if (issue.line !== undefined) properties.push(`line=${issue.line}`);
    if (issue.column !== undefined) properties.push(`col=${issue.column}`);
    properties.push(`title=${property(`acs-validate ${issue.rule}`)}`);
    const message = `${issue.pointer !== undefined ? `${issue.pointer || "/"}: ` : ""}${issue.message}`;
    this.output.write(`::${issue.severity} ${properties.join(",")}::${data(message)}\n`);
  }

  inputDone(): void {}

  finish(report: RunReport): void {
    const lines = summaryLines(report);
    lines.push(`${report.exitCode === 0 ? "✔ valid" : `✖ ${verdict(report)}`} (exit code ${report.exitCode})`);
    this.output.write(`${lines.join("\n")}\n`);
    if (this.stepSummary) {
      try {
        appendFileSync(this.stepSummary, markdownSummary(report));
      } catch {
        // The job summary is a nicety: failing to write it must not change the verdict.
      }
    }
  }
}

/** Escaping of workflow command data and properties (as @actions/core does). */
const data = (text: string) => text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
const property = (text: string) => data(text).replace(/:/g, "%3A").replace(/,/g, "%2C");

const cell = (text: string) => sanitize(text).replace(/\|/g, "\\|");

function markdownSummary(report: RunReport): string {
  const rows = report.inputs.slice(0, 50).map((i) =>
    `| ${cell(i.file)} | ${i.unreadable ? cell(i.unreadable.message) : (i.format ?? "")} | ${i.events.toLocaleString("en-US")} | ${i.errors.toLocaleString("en-US")} | ${i.warnings.toLocaleString("en-US")} |`,
  );
  const more = report.inputs.length > 50 ? `\n\n… and ${report.inputs.length - 50} more inputs` : "";
  const line = (label: string, record: Record<string, number>) => (Object.keys(record).length ? `\n**${label}:** ${cell(counts(record))}` : "");
  return (
    `### acs-validate: ${report.exitCode === 0 ? "✔ valid" : `✖ ${verdict(report)}`}\n\n` +
    `| input | format | events | errors | warnings |\n| --- | --- | ---: | ---: | ---: |\n${rows.join("\n")}${more}\n` +
    `${line("Events by kind", report.kinds)}${line("Errors by rule", report.errorsByRule)}${line("Warnings by rule", report.warningsByRule)}\n\n`
  );
}
