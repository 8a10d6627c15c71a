/**
 * The frame of the HTML report: the document's head (a strict Content-Security-Policy: the page
 * loads nothing and runs nothing), the summary, the sections of the inputs, the issues and the
 * notes of what was left out.
 */
import { describeSize } from "../json-scanner.js";
import { issueText } from "../issue-text.js";
import { verdict, type InputReport, type ReportedIssue, type RunReport } from "../model.js";
import { count, escapeHtml, shown } from "./escape.js";
import { STYLE } from "./style.js";
import type { WindowBounds } from "./window.js";

/** What the report states of the run: the catalogue and the rules it was validated against. */
export interface ReportSettings {
  profile: string;
  sequence: boolean;
  unknownKinds: "error" | "warn";
  unknownProperties: "error" | "warn";
  maxErrors?: number | undefined;
  /** The validator's version. */
  version: string;
}

/** An issue as the summary lists it, linking to where the report shows it. */
export interface IndexEntry {
  id: string;
  severity: "error" | "warning";
  where: string;
  pointer?: string | undefined;
  message: string;
  rule: string;
  /** Whether the report shows the issue (its event may be past the report's limit). */
  anchored: boolean;
}

/** What the summary is made of, known once every input is read. */
interface SummaryData {
  report: RunReport;
  settings: ReportSettings;
  bounds: WindowBounds;
  /** The section id of each input, in the order of `report.inputs`. */
  inputAnchors: string[];
  /** Events shown, per input. */
  inputShown: number[];
  errors: IndexEntry[];
  warnings: IndexEntry[];
  /** Issues of no one event (an unreadable input, a page's own fields, a directory's layout). */
  inputIssues: { issue: ReportedIssue; id: string }[];
  moreInputIssues: number;
  shownEvents: number;
  omittedEvents: number;
  omittedWithIssues: number;
}

const CSP = "default-src 'none'; style-src 'unsafe-inline'";
const LIMIT = { text: 4_000, line: 300 } as const;

/** The document up to the start of its body. */
export function documentStart(title: string, version: string): string {
  return (
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n` +
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n` +
    `<meta name="generator" content="acs-validate ${escapeHtml(version)}">\n` +
    `<title>${shown(title, LIMIT.line)}</title>\n<style>${STYLE}</style>\n</head>\n<body>\n`
  );
}

/** The end of the inputs' sections, a footer, and the end of the document. */
export const documentEnd = (version: string): string =>
  `</main>\n<footer><p>Written by acs-validate ${escapeHtml(version)} (@acs-toolkit/validator). A self-contained page: it loads and runs nothing.</p></footer>\n</body>\n</html>\n`;

/** `acs-validate: invalid (a.jsonl, b.jsonl)`. */
export function documentTitle(report: RunReport): string {
  const files = report.inputs.slice(0, 3).map((i) => i.file);
  const more = report.inputs.length > 3 ? `, +${report.inputs.length - 3}` : "";
  return `acs-validate: ${verdict(report)}${files.length ? ` (${files.join(", ")}${more})` : ""}`;
}

const plural = (value: number, word: string) => `${count(value)} ${word}${value === 1 ? "" : "s"}`;

const PROFILES: Record<string, string> = { releases: "every shipped OpenHands release", interface: "the interface 0.1.0 catalogue" };

/** `ActionEvent 2, MessageEvent 3` by decreasing count, then name. */
function counts(record: Record<string, number>): string {
  return Object.entries(record)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([name, value]) => `${shown(name, LIMIT.line)} ${count(value)}`)
    .join(", ");
}

/** The summary at the top: verdict, settings, totals, inputs, and every issue listed (up to a bound) with a link. */
export function summarySection(data: SummaryData): string {
  const { report, settings } = data;
  const pass = report.exitCode === 0;
  const profile = PROFILES[settings.profile] ?? `OpenHands ${settings.profile}`;
  const rules = [
    settings.sequence ? "schema and sequence rules" : "schema rules (sequence rules off)",
    `unknown kinds: ${settings.unknownKinds}`,
    `unknown properties: ${settings.unknownProperties}`,
    ...(settings.maxErrors !== undefined ? [`stop after ${plural(settings.maxErrors, "error")}`] : []),
  ];
  let html = `<header id="summary">\n<h1><span class="verdict ${pass ? "pass" : "fail"}">${pass ? "✔" : "✖"} ${escapeHtml(verdict(report))}</span>acs-validate report</h1>\n`;
  html += `<dl class="facts">`;
  html += `<dt>exit code</dt><dd>${report.exitCode}</dd>`;
  html += `<dt>profile</dt><dd><code>${shown(settings.profile, LIMIT.line)}</code>: ${shown(profile, LIMIT.line)}</dd>`;
  html += `<dt>rules</dt><dd>${escapeHtml(rules.join("; "))}</dd>`;
  html += `<dt>inputs</dt><dd>${count(report.inputs.length)}${report.skippedInputs ? ` (${count(report.skippedInputs)} not read: --max-errors)` : ""}</dd>`;
  html += `<dt>events</dt><dd>${count(report.events)}${report.events ? `: ${counts(report.kinds)}` : ""}</dd>`;
  html += `<dt>errors</dt><dd>${count(report.errors)}${report.errors ? `: ${counts(report.errorsByRule)}` : ""}</dd>`;
  html += `<dt>warnings</dt><dd>${count(report.warnings)}${report.warnings ? `: ${counts(report.warningsByRule)}` : ""}</dd>`;
  html += `<dt>shown</dt><dd>${shownSentence(data)}</dd>`;
  html += `<dt>validator</dt><dd>@acs-toolkit/validator ${escapeHtml(settings.version)}</dd>`;
  html += `</dl>\n`;
  if (report.truncated) html += `<p class="note">Stopped after ${plural(report.errors, "error")} (--max-errors): the rest was not read.</p>\n`;
  html += inputsTable(data);
  if (data.inputIssues.length > 0) {
    html += `<h2>Problems of the inputs themselves</h2>\n`;
    for (const { issue, id } of data.inputIssues) html += `<p class="note"><a href="#${id}">${shown(issue.file, LIMIT.line)}</a></p>${renderIssue(issue, `${id}-summary`)}`;
    if (data.moreInputIssues > 0) html += `<p class="note">… ${plural(data.moreInputIssues, "more problem")} of the inputs, shown in their sections</p>\n`;
  }
  html += issueIndex("Errors", data.errors, report.errors, "error");
  html += issueIndex("Warnings", data.warnings, report.warnings, "warning");
  return `${html}</header>\n<main>\n`;
}

function shownSentence(data: SummaryData): string {
  const { report, bounds } = data;
  if (data.omittedEvents === 0) return `every event (${count(data.shownEvents)})`;
  let text = `${count(data.shownEvents)} of ${count(report.events)} events: the first ${count(bounds.head)} of each input, each event with an issue and ${count(bounds.context)} before and after it, and the last ${count(bounds.context)}`;
  if (data.omittedWithIssues > 0) text += `. ${plural(data.omittedWithIssues, "event")} with issues past the report's limit of ${count(bounds.maxShown)} shown events are counted above but not shown`;
  return escapeHtml(text);
}

function inputsTable(data: SummaryData): string {
  const rows = data.report.inputs.map((input: InputReport, i) => {
    const bad = input.errors > 0 || input.unreadable !== undefined;
    const anchor = data.inputAnchors[i];
    const name = shown(input.file, LIMIT.line);
    return (
      `<tr${bad ? ' class="bad"' : ""}><td>${anchor ? `<a href="#${anchor}">${name}</a>` : name}</td>` +
      `<td>${input.unreadable ? shown(input.unreadable.message, LIMIT.line) : escapeHtml(input.format ?? "")}</td>` +
      `<td class="n">${count(input.events)}</td><td class="n">${count(data.inputShown[i] ?? 0)}</td>` +
      `<td class="n">${count(input.errors)}</td><td class="n">${count(input.warnings)}</td><td class="n">${escapeHtml(describeSize(input.bytes))}</td></tr>`
    );
  });
  return `<table class="inputs"><thead><tr><th>input</th><th>format</th><th class="n">events</th><th class="n">shown</th><th class="n">errors</th><th class="n">warnings</th><th class="n">size</th></tr></thead><tbody>\n${rows.join("\n")}\n</tbody></table>\n`;
}

/** `Errors`: each listed issue linking to where it is shown, and how many more there are. */
function issueIndex(title: string, entries: IndexEntry[], total: number, word: string): string {
  if (total === 0) return "";
  let html = `<h2>${title}${entries.length < total ? ` (the first ${count(entries.length)} of ${count(total)})` : ""}</h2>\n<ol class="index">\n`;
  for (const entry of entries) {
    const where = shown(entry.where, LIMIT.line);
    html +=
      `<li>${entry.anchored ? `<a href="#${entry.id}">${where}</a>` : where}` +
      `${entry.pointer !== undefined ? ` <code>${shown(entry.pointer || "/", LIMIT.line)}</code>` : ""} ${shown(entry.message, LIMIT.line)} <span class="rule">(${shown(entry.rule, LIMIT.line)})</span>` +
      `${entry.anchored ? "" : ' <span class="note">(its event is past the report\'s limit)</span>'}</li>\n`;
  }
  html += `</ol>\n`;
  if (entries.length < total) html += `<p class="note">… ${plural(total - entries.length, `more ${word}`)}, each shown at its event</p>\n`;
  return html;
}

/** The start of an input's section. */
export const sectionStart = (anchor: string, file: string): string => `<section class="input" id="${anchor}">\n<h2>${shown(file, LIMIT.line)}</h2>\n`;

/** The end of an input's section: its counts and a link back to the summary. */
export function sectionEnd(input: InputReport): string {
  const facts = input.unreadable ? "not read" : `${plural(input.events, "event")}, ${plural(input.errors, "error")}, ${plural(input.warnings, "warning")}${input.format ? ` · ${input.format}` : ""}`;
  return `<p class="note">${escapeHtml(facts)} · <a href="#summary">summary</a></p>\n</section>\n`;
}

/**
 * An issue as at its event: severity, rule, pointer and line, then the human format's text (the
 * message and the input's line with the culprit marked).
 */
export function renderIssue(issue: ReportedIssue, id: string): string {
  const head = [`<span class="sev">${issue.severity}</span>`, `<span class="rule">${shown(issue.rule, LIMIT.line)}</span>`];
  if (issue.pointer !== undefined) head.push(`<code>${shown(issue.pointer || "/", LIMIT.line)}</code>`);
  if (issue.line !== undefined) head.push(`line ${count(issue.line)}${issue.column !== undefined ? `, column ${count(issue.column)}` : ""}`);
  return `<div class="issue ${issue.severity}" id="${id}"><p class="issue-head">${head.join(" · ")}</p><pre>${shown(issueText(issue, false), LIMIT.text)}</pre></div>\n`;
}

/** What a run of left-out events was: how many, from which to which, how many had issues. */
export interface Gap {
  from: number;
  to: number;
  events: number;
  withIssues: number;
}

/** The line that stands for a run of left-out events, where they were. */
export function gapNote(gap: Gap): string {
  const range = gap.from === gap.to ? `#${count(gap.from + 1)}` : `#${count(gap.from + 1)}–#${count(gap.to + 1)}`;
  const what =
    gap.withIssues === 0
      ? `${plural(gap.events, "event")} without errors or warnings omitted (${range})`
      : `${plural(gap.events, "event")} omitted (${range}), ${count(gap.withIssues)} of them with issues: past the report's limit of shown events`;
  return `<p class="gap">… ${escapeHtml(what)} …</p>\n`;
}
