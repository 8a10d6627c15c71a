/**
 * `--format html`: one self-contained page showing each recording as a conversation, with every
 * issue at its event. Events are decided and rendered as they are read (see window.ts) into a
 * spool (spool.ts); at the end the page is written: head, summary, then the spooled body.
 */
import type { InputReport, ReportedIssue, RunReport } from "../model.js";
import type { Output } from "../output.js";
import type { Entry } from "../read.js";
import type { Reporter } from "../report.js";
import { renderEvent, type AnsweredAction, type EventView } from "./events.js";
import { documentEnd, documentStart, documentTitle, gapNote, renderIssue, sectionEnd, sectionStart, summarySection, type Gap, type IndexEntry, type ReportSettings } from "./layout.js";
import { Spool } from "./spool.js";
import { text } from "./text.js";
import { DEFAULT_BOUNDS, EventWindow, type ShowBudget, type WindowBounds } from "./window.js";

/** What the HTML report states of the run, and how much of it it shows. */
export interface HtmlReportOptions extends ReportSettings {
  bounds?: WindowBounds | undefined;
  /** Characters of the body kept in memory before it moves to a temporary file. */
  spoolMemoryBytes?: number | undefined;
}

/** Issues the summary lists with a link, and issues of no event it shows in full. */
const LISTED = { errors: 200, warnings: 100, inputIssues: 100 } as const;
/** Tool calls remembered, per input, until answered: enough for any real run of parallel calls. */
const MAX_OPEN_CALLS = 10_000;
/** Characters kept of an event that is not JSON. */
const RAW_TEXT = 4_096;

interface HeldIssue {
  issue: ReportedIssue;
  id: string;
  entry: IndexEntry | undefined;
}

/** An event waiting to be decided, with its issues. */
interface EventItem {
  type: "event";
  view: EventView;
  issues: HeldIssue[];
}

/** An issue of no one event, shown where it was found. */
interface NoteItem {
  type: "note";
  held: HeldIssue;
}

type Item = EventItem | NoteItem;

const ANSWERS = new Set(["ObservationEvent", "UserRejectObservation", "AgentErrorEvent"]);

/**
 * The `html` format's reporter: events and issues go through an {@link EventWindow} per input into
 * the spool as they come; {@link HtmlReporter.finish} writes the page.
 */
export class HtmlReporter implements Reporter {
  private readonly spool: Spool;
  private readonly bounds: WindowBounds;
  private readonly budget: ShowBudget = { shown: 0 };
  private window: EventWindow<Item> | undefined;
  private pending: EventItem | undefined;
  private gap: Gap | undefined;
  /** The event shown last in the current input, when nothing came between. */
  private lastShown: number | undefined;
  /** Open tool calls of the current input: `tool_call_id` → the ActionEvent. */
  private readonly calls = new Map<string, AnsweredAction>();
  private issues = 0;
  private readonly inputAnchors: string[] = [];
  private readonly inputShown: number[] = [];
  private readonly errors: IndexEntry[] = [];
  private readonly warnings: IndexEntry[] = [];
  private readonly inputIssues: HeldIssue[] = [];
  private moreInputIssues = 0;
  private shownEvents = 0;
  private omittedEvents = 0;
  private omittedWithIssues = 0;

  constructor(
    private readonly output: Output,
    private readonly options: HtmlReportOptions,
  ) {
    this.spool = new Spool(options.spoolMemoryBytes);
    this.bounds = options.bounds ?? DEFAULT_BOUNDS;
  }

  inputStart(file: string): void {
    const anchor = `f${this.inputAnchors.length + 1}`;
    this.inputAnchors.push(anchor);
    this.inputShown.push(0);
    this.calls.clear();
    this.lastShown = undefined;
    this.window = new EventWindow<Item>(this.bounds, { show: (item) => this.show(item), omit: (item) => this.omit(item) }, this.budget);
    this.spool.write(sectionStart(anchor, file));
  }

  event(entry: Entry, index: number): void {
    this.settle();
    const view: EventView = { index, anchor: `e${this.inputAnchors.length}-${index + 1}`, value: entry.value };
    if (entry.file !== undefined) view.file = entry.file;
    else if (entry.hasLine) view.line = entry.line;
    if (entry.parseError !== undefined) {
      view.parseError = entry.parseError;
      view.rawText = entry.text.slice(0, RAW_TEXT);
    }
    this.pending = { type: "event", view, issues: [] };
  }

  issue(issue: ReportedIssue): void {
    const id = `i${++this.issues}`;
    const held: HeldIssue = { issue, id, entry: this.listed(issue, id) };
    if (this.pending && issue.index === this.pending.view.index) {
      this.pending.issues.push(held);
      return;
    }
    this.settle();
    if (this.inputIssues.length < LISTED.inputIssues) this.inputIssues.push(held);
    else this.moreInputIssues++;
    this.window?.note({ type: "note", held });
  }

  inputDone(input: InputReport): void {
    this.settle();
    this.window?.end();
    this.closeGap();
    this.spool.write(sectionEnd(input));
  }

  async finish(report: RunReport): Promise<void> {
    try {
      this.output.write(documentStart(documentTitle(report), this.options.version));
      this.output.write(
        summarySection({
          report,
          settings: this.options,
          bounds: this.bounds,
          inputAnchors: this.inputAnchors,
          inputShown: this.inputShown,
          errors: this.errors,
          warnings: this.warnings,
          inputIssues: this.inputIssues.map(({ issue, id }) => ({ issue, id })),
          moreInputIssues: this.moreInputIssues,
          shownEvents: this.shownEvents,
          omittedEvents: this.omittedEvents,
          omittedWithIssues: this.omittedWithIssues,
        }),
      );
      await this.spool.copyTo(this.output);
      this.output.write(documentEnd(this.options.version));
    } finally {
      this.spool.dispose();
    }
  }

  /** The pending event, now that all its issues are in, goes to the window. */
  private settle(): void {
    if (!this.pending) return;
    const item = this.pending;
    this.pending = undefined;
    this.window?.push(item, item.issues.length > 0);
  }

  /** The summary's entry for an issue, while the summary lists more. */
  private listed(issue: ReportedIssue, id: string): IndexEntry | undefined {
    const list = issue.severity === "error" ? this.errors : this.warnings;
    if (list.length >= (issue.severity === "error" ? LISTED.errors : LISTED.warnings)) return undefined;
    const entry: IndexEntry = {
      id,
      severity: issue.severity,
      where: issue.line !== undefined ? `${issue.file}:${issue.line}` : issue.file,
      pointer: issue.pointer,
      message: issue.message.slice(0, 1_000),
      rule: issue.rule,
      anchored: false,
    };
    list.push(entry);
    return entry;
  }

  private show(item: Item): void {
    this.closeGap();
    if (item.type === "note") {
      this.spool.write(renderIssue(item.held.issue, item.held.id));
      if (item.held.entry) item.held.entry.anchored = true;
      this.lastShown = undefined;
      return;
    }
    const { view, issues } = item;
    const answers = this.answered(view, view.anchor);
    const flag = issues.some((h) => h.issue.severity === "error") ? "error" : issues.length > 0 ? "warning" : undefined;
    let issuesHtml = "";
    for (const held of issues) {
      issuesHtml += renderIssue(held.issue, held.id);
      if (held.entry) held.entry.anchored = true;
    }
    this.spool.write(renderEvent(view, issuesHtml, { ...(answers && { answers }), joined: answers !== undefined && answers.index === this.lastShown, ...(flag && { flag }) }));
    this.lastShown = view.index;
    this.shownEvents++;
    this.inputShown[this.inputShown.length - 1]!++;
  }

  private omit(item: Item): void {
    if (item.type === "note") return;
    this.answered(item.view, undefined);
    this.lastShown = undefined;
    this.omittedEvents++;
    const withIssues = item.issues.length > 0 ? 1 : 0;
    this.omittedWithIssues += withIssues;
    const index = item.view.index;
    if (this.gap) {
      this.gap.to = index;
      this.gap.events++;
      this.gap.withIssues += withIssues;
    } else {
      this.gap = { from: index, to: index, events: 1, withIssues };
    }
  }

  private closeGap(): void {
    if (!this.gap) return;
    this.spool.write(gapNote(this.gap));
    this.gap = undefined;
  }

  /**
   * Pairs tool calls and their answers, for every event decided (shown or not), in order: an
   * ActionEvent opens its call, an answer closes it and gets the action back.
   */
  private answered(view: EventView, anchor: string | undefined): AnsweredAction | undefined {
    const kind = text(view.value, "kind");
    const call = text(view.value, "tool_call_id");
    if (kind === undefined || call === undefined) return undefined;
    if (kind === "ActionEvent") {
      this.calls.delete(call);
      this.calls.set(call, anchor !== undefined ? { index: view.index, anchor } : { index: view.index });
      if (this.calls.size > MAX_OPEN_CALLS) this.calls.delete(this.calls.keys().next().value!);
      return undefined;
    }
    if (!ANSWERS.has(kind)) return undefined;
    const action = this.calls.get(call);
    this.calls.delete(call);
    return action;
  }
}
