/**
 * `acs-validate`: validates recorded events, input by input, writing issues as they are found.
 * Everything the command touches (arguments, streams, environment, working directory) comes in
 * through {@link run}, so tests drive it in-process exactly as the binary does.
 */
import { createReadStream, writeFileSync } from "node:fs";
import { usageErrorLine } from "@acs-toolkit/cli-kit";
import packageJson from "../../package.json" with { type: "json" };
import { locatePointer } from "../locate.js";
import { NOTHING, TrajectoryChecker, type SequenceResult } from "../sequence.js";
import { validateEvent, type ValidateOptions, type ValidationResult } from "../validate.js";
import type { ValidationIssue } from "../issues.js";
import { parseCliArgs, UsageError, USAGE } from "./args.js";
import { displayPath, resolveInputs, type Input } from "./inputs.js";
import { EXIT_INVALID, EXIT_USAGE, EXIT_VALID, fragmentAt, sanitize, type InputReport, type ReportedIssue, type RunReport } from "./model.js";
import { Output, Progress, type OutputStream } from "./output.js";
import { DEFAULT_LIMITS, InputError, readEventDirectory, readStream, type Entry, type Format, type ReadContext, type ReadLimits, type SourceIssue } from "./read.js";
import { createReporter, type Reporter } from "./report.js";
import type { WindowBounds } from "./html/window.js";

interface RunIo {
  /** The arguments after the command name. */
  argv: readonly string[];
  cwd?: string;
  env?: Record<string, string | undefined>;
  stdin?: AsyncIterable<unknown>;
  stdout?: OutputStream;
  stderr?: OutputStream;
  /** Size limits of the readers (tests make them small). */
  limits?: ReadLimits;
  /** When the progress line is drawn (tests draw it for small inputs). */
  progressPace?: { minBytes: number; everyMs: number };
  /** How much the HTML report shows, and keeps in memory (tests make both small). */
  html?: { bounds?: WindowBounds; spoolMemoryBytes?: number };
}

/** Distinct kinds counted in the summary; past this many, the rest count as "(other kinds)". */
const MAX_KINDS = 100;

const isCi = (env: Record<string, string | undefined>) => env.CI !== undefined && env.CI !== "" && env.CI !== "0" && env.CI.toLowerCase() !== "false";

/** Runs the command; resolves to its exit code. */
export async function run(io: RunIo): Promise<number> {
  const env = io.env ?? process.env;
  const cwd = io.cwd ?? process.cwd();
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;

  const options = parseOptions(io.argv, stdout, stderr);
  if (typeof options === "number") return options;

  const started = performance.now();
  const state = new RunState(options, io, { env, cwd, stdout, stderr });
  const inputs = await resolveInputs(options.paths, cwd);
  let skippedInputs = 0;
  for (const input of inputs) {
    if (state.stopped) {
      skippedInputs++;
      continue;
    }
    await state.checkInput(input);
  }
  const exitCode = await state.finish(skippedInputs);

  // For the benchmark (not documented): the process's own peak memory, measured where it runs.
  if (env.ACS_VALIDATE_STATS) {
    writeFileSync(
      env.ACS_VALIDATE_STATS,
      JSON.stringify({ maxRssBytes: process.resourceUsage().maxRSS * 1024, events: state.events, bytes: state.bytes, seconds: (performance.now() - started) / 1000 }),
    );
  }
  return exitCode;
}

type CliOptions = ReturnType<typeof parseCliArgs>;

/**
 * The parsed command line, or the exit code when there is nothing to validate: a usage error
 * (reported on `stderr`), `--help` or `--version` (answered on `stdout`).
 */
function parseOptions(argv: readonly string[], stdout: OutputStream, stderr: OutputStream): CliOptions | number {
  let options: CliOptions;
  try {
    options = parseCliArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    stderr.write(`${usageErrorLine("acs-validate", error.message)}\n`);
    return EXIT_USAGE;
  }
  if (options.help) {
    stdout.write(USAGE);
    return EXIT_VALID;
  }
  if (options.version) {
    stdout.write(`${packageJson.version}\n`);
    return EXIT_VALID;
  }
  return options;
}

/** Where the command runs: {@link RunIo} with its defaults filled in. */
interface RunPlace {
  env: Record<string, string | undefined>;
  cwd: string;
  stdout: OutputStream;
  stderr: OutputStream;
}

/** One run over its inputs: the totals so far, and where issues and progress go. */
class RunState {
  events = 0;
  bytes = 0;
  private errors = 0;
  private warnings = 0;
  private fatal = false;
  private truncated = false;
  private readonly errorsByRule = new Map<string, number>();
  private readonly warningsByRule = new Map<string, number>();
  private readonly kinds = new Map<string, number>();
  private readonly reports: InputReport[] = [];
  /** The report of the input being read: its issues are counted in it too. */
  private current: InputReport = { file: "", events: 0, errors: 0, warnings: 0, bytes: 0 };
  readonly validateOptions: ValidateOptions;
  private readonly maxErrors: number;
  private readonly limits: ReadLimits;
  private readonly progress: Progress;
  private readonly output: Output;
  private readonly reporter: Reporter;

  constructor(
    readonly options: CliOptions,
    private readonly io: RunIo,
    private readonly place: RunPlace,
  ) {
    const { env, stdout, stderr } = place;
    const forceColor = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "";
    const color = options.color ?? (forceColor || (stdout.isTTY === true && env.NO_COLOR === undefined && env.TERM !== "dumb"));
    this.validateOptions = { profile: options.profile, unknownKinds: options.unknownKinds, unknownProperties: options.unknownProperties };
    this.maxErrors = options.maxErrors ?? Infinity;
    this.limits = io.limits ?? DEFAULT_LIMITS;
    // Progress only for a person at a terminal: not in CI, not when the output goes to a pipe or a file.
    const interactive = stderr.isTTY === true && stdout.isTTY === true && !isCi(env);
    this.progress = new Progress(stderr, options.progress ?? interactive, () => this.events, io.progressPace);
    this.output = new Output(stdout, () => this.progress.clear());
    this.reporter = createReporter(options.format, this.output, {
      color,
      stepSummary: env.GITHUB_STEP_SUMMARY,
      html: {
        profile: options.profile,
        sequence: options.sequence,
        unknownKinds: options.unknownKinds,
        unknownProperties: options.unknownProperties,
        maxErrors: options.maxErrors,
        version: packageJson.version,
        bounds: io.html?.bounds,
        spoolMemoryBytes: io.html?.spoolMemoryBytes,
      },
    });
  }

  /** Whether to read no further: `--max-errors` reached, or the output is gone. */
  get stopped(): boolean {
    return this.truncated || this.output.broken;
  }

  /** Counts and reports one issue; once the run is truncated, issues are dropped. */
  emit(issue: ReportedIssue): void {
    if (this.truncated) return;
    if (issue.fatal) this.fatal = true;
    if (issue.severity === "error") {
      this.errors++;
      this.current.errors++;
      this.errorsByRule.set(issue.rule, (this.errorsByRule.get(issue.rule) ?? 0) + 1);
    } else {
      this.warnings++;
      this.current.warnings++;
      this.warningsByRule.set(issue.rule, (this.warningsByRule.get(issue.rule) ?? 0) + 1);
    }
    this.reporter.issue(issue);
    if (this.errors >= this.maxErrors) this.truncated = true;
  }

  /** Passes an event as read, before its issues, to a format that shows events. */
  eventRead(entry: Entry, index: number): void {
    this.reporter.event?.(entry, index);
  }

  /** Counts an event of kind `name` for the summary. */
  countKind(name: string): void {
    const count = this.kinds.get(name);
    if (count !== undefined) this.kinds.set(name, count + 1);
    else if (this.kinds.size < MAX_KINDS && name.length <= 100) this.kinds.set(name, 1);
    else this.kinds.set("(other kinds)", (this.kinds.get("(other kinds)") ?? 0) + 1);
  }

  /** Reads and validates one input, reporting its issues as they are found and its summary at its end. */
  async checkInput(input: Input): Promise<void> {
    const report: InputReport = { file: input.display, format: undefined, events: 0, errors: 0, warnings: 0, bytes: 0 };
    this.current = report;
    this.reports.push(report);
    this.reporter.inputStart?.(input.display);
    if (input.type === "error") {
      report.unreadable = { rule: input.rule, message: input.message };
      this.emit({ severity: "error", rule: input.rule, message: input.message, file: input.display, fatal: true });
      this.reporter.inputDone(report);
      return;
    }
    const events = new InputEvents(this, report, input.display);
    this.progress.begin(input.display, input.type === "file" ? input.size : undefined);
    try {
      report.format = await readInput(input, this.readContext(report, input.display), events.sink, this.limits, this.io.stdin ?? process.stdin, this.place.cwd);
    } catch (error) {
      const rule = error instanceof InputError ? error.rule : "input/unreadable";
      const message = error instanceof InputError ? error.message : `cannot be read: ${(error as Error).message}`;
      report.unreadable = { rule, message };
      this.emit({ severity: "error", rule, message, file: input.display, fatal: true });
    }
    events.end();
    this.progress.clear();
    this.reporter.inputDone(report);
  }

  /** What a reader of the input `display` reports to: its bytes, its own findings, when to pause or stop. */
  private readContext(report: InputReport, display: string): ReadContext {
    return {
      onBytes: (count) => {
        report.bytes += count;
        this.bytes += count;
        this.progress.advance(count);
      },
      issue: (issue) => this.emit(sourceIssue(issue, display)),
      breathe: () => this.output.drain(),
      stopped: () => this.stopped,
    };
  }

  /** Reports the run's summary and flushes the output; resolves to the exit code. */
  async finish(skippedInputs: number): Promise<number> {
    const exitCode = this.fatal ? EXIT_USAGE : this.errors > 0 ? EXIT_INVALID : EXIT_VALID;
    const runReport: RunReport = {
      inputs: this.reports,
      events: this.events,
      kinds: Object.fromEntries([...this.kinds].map(([name, count]) => [sanitize(name), count])),
      errors: this.errors,
      warnings: this.warnings,
      errorsByRule: Object.fromEntries(this.errorsByRule),
      warningsByRule: Object.fromEntries(this.warningsByRule),
      truncated: this.truncated,
      skippedInputs,
      exitCode,
    };
    await this.reporter.finish(runReport);
    await this.output.end();
    this.progress.clear();
    return exitCode;
  }
}

/** An event's issues, waiting to be emitted. */
interface EventIssues {
  entry: Entry;
  index: number;
  result: ValidationResult;
  sequence: SequenceResult;
}

/**
 * The events of one input, which is one trajectory: each validated and checked against the
 * sequence rules (unless `--no-sequence`), its issues located and emitted.
 */
class InputEvents {
  private readonly checker: TrajectoryChecker | undefined;
  /**
   * The first event's issues, held back until it is known whether a second event follows (a lone
   * event breaks no sequence rule).
   */
  private held: EventIssues | undefined;

  constructor(
    private readonly state: RunState,
    private readonly report: InputReport,
    private readonly display: string,
  ) {
    this.checker = state.options.sequence ? new TrajectoryChecker() : undefined;
  }

  /** Takes one entry of the reader; false asks the reader to stop. */
  readonly sink = (entry: Entry): boolean => {
    const { state } = this;
    const index = this.report.events++;
    state.events++;
    if (this.held && index === 1) {
      this.release(this.held);
      this.held = undefined;
    }
    state.eventRead(entry, index);
    if (entry.parseError !== undefined) {
      this.checker?.check(undefined);
      state.countKind("(not JSON)");
      state.emit(entryIssue(entry, index, { pointer: "", rule: "json", message: `is not valid JSON: ${entry.parseError}` }, "error", this.display));
      return !state.stopped;
    }
    const value = entry.value;
    const kind = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as { kind?: unknown }).kind : undefined;
    state.countKind(typeof kind === "string" ? kind : "(no kind)");
    const result = validateEvent(value, state.validateOptions);
    const sequence = this.checker ? this.checker.check(value, entry.hasLine ? entry.line : undefined) : NOTHING;
    if (result.errors.length > 0 || result.warnings.length > 0 || sequence !== NOTHING) {
      if (index === 0 && entry.bare && sequence !== NOTHING) this.held = { entry: { ...entry }, index, result, sequence };
      else this.release({ entry, index, result, sequence });
    }
    return !state.stopped;
  };

  /** At the input's end: the issues still held (a lone event's without its sequence ones). */
  end(): void {
    if (!this.held) return;
    const { entry, index, result, sequence } = this.held;
    // A lone event: the sequence rules say nothing about it.
    this.release({ entry, index, result, sequence: this.report.events > 1 ? sequence : NOTHING });
    this.held = undefined;
  }

  /** Emits an event's issues: errors before warnings, schema before sequence. */
  private release({ entry, index, result, sequence }: EventIssues): void {
    const emit = (issue: ValidationIssue, severity: "error" | "warning") => this.state.emit(entryIssue(entry, index, issue, severity, this.display));
    for (const issue of result.errors) emit(issue, "error");
    for (const issue of sequence.errors) emit(issue, "error");
    for (const issue of result.warnings) emit(issue, "warning");
    for (const issue of sequence.warnings) emit(issue, "warning");
  }
}

async function readInput(input: Exclude<Input, { type: "error" }>, context: ReadContext, sink: (entry: Entry) => boolean, limits: ReadLimits, stdin: AsyncIterable<unknown>, cwd: string): Promise<Format> {
  switch (input.type) {
    case "stdin":
      return readStream(stdin, context, sink, limits);
    case "file":
      // 256 KiB reads: few system calls, few buffers alive at once (the JSONL reader decodes in smaller windows).
      return readStream(createReadStream(input.path, { highWaterMark: 256 * 1024 }), context, sink, limits);
    case "directory":
      return readEventDirectory(input.files, input.odd, (file) => displayPath(file, cwd), input.display, context, sink);
  }
}

/** 1-based line and column of `offset` in `text`. */
function positionOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/** An issue of one event, located in the input: file, line, column, pointer and fragment. */
function entryIssue(entry: Entry, index: number, issue: ValidationIssue, severity: "error" | "warning", display: string): ReportedIssue {
  let line = entry.line;
  let column = entry.column;
  let fragment;
  if (entry.text) {
    let offset: number | undefined;
    let length = 1;
    if (issue.rule === "json") {
      offset = Math.min(entry.parseOffset ?? 0, entry.text.length);
    } else {
      const location = locatePointer(entry.text, entry.textPointer + issue.pointer);
      if (location) {
        offset = location.offset;
        length = location.length;
      }
    }
    if (offset !== undefined) {
      const position = positionOf(entry.text, offset);
      line = entry.line + position.line - 1;
      column = position.line === 1 ? entry.column + position.column - 1 : position.column;
      fragment = fragmentAt(entry.text, offset, length);
    }
  }
  let eventId: string | undefined;
  if (typeof entry.value === "object" && entry.value !== null) {
    const id = (entry.value as { id?: unknown }).id;
    if (typeof id === "string") eventId = id;
  }
  return {
    severity,
    rule: issue.rule,
    message: issue.message,
    file: entry.file ?? display,
    line,
    column,
    // A text that is not JSON has no inside to point into: only an array element's own pointer.
    ...(issue.rule !== "json" || entry.pointer !== "" ? { pointer: entry.pointer + issue.pointer } : {}),
    index,
    ...(eventId !== undefined && { eventId }),
    ...(fragment && { fragment }),
  };
}

/** A finding of a reader (page fields, structure, directory layout), located the same way. */
function sourceIssue(issue: SourceIssue, display: string): ReportedIssue {
  let { line, column } = issue;
  let fragment = issue.fragment;
  if (issue.text !== undefined && issue.textPointer !== undefined) {
    const location = locatePointer(issue.text, issue.textPointer);
    if (location) {
      const position = positionOf(issue.text, location.offset);
      const baseLine = line ?? 1;
      const baseColumn = column ?? 1;
      line = baseLine + position.line - 1;
      column = position.line === 1 ? baseColumn + position.column - 1 : position.column;
      fragment = fragmentAt(issue.text, location.offset, location.length);
    }
  }
  return {
    severity: issue.severity,
    rule: issue.rule,
    message: issue.message,
    file: issue.file ?? display,
    ...(line !== undefined && { line }),
    ...(column !== undefined && { column }),
    ...(issue.pointer !== undefined && { pointer: issue.pointer }),
    ...(fragment && { fragment }),
    ...(issue.fatal && { fatal: true }),
  };
}
