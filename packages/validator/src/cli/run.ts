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
import { createReporter } from "./report.js";

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

  let options;
  try {
    options = parseCliArgs(io.argv);
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

  const started = performance.now();
  const forceColor = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "";
  const color = options.color ?? (forceColor || (stdout.isTTY === true && env.NO_COLOR === undefined && env.TERM !== "dumb"));
  const validateOptions: ValidateOptions = { profile: options.profile, unknownKinds: options.unknownKinds, unknownProperties: options.unknownProperties };
  const maxErrors = options.maxErrors ?? Infinity;
  const limits = io.limits ?? DEFAULT_LIMITS;

  let totalEvents = 0;
  let totalBytes = 0;
  let errors = 0;
  let warnings = 0;
  let fatal = false;
  let truncated = false;
  const errorsByRule = new Map<string, number>();
  const warningsByRule = new Map<string, number>();
  const kinds = new Map<string, number>();
  const reports: InputReport[] = [];

  // Progress only for a person at a terminal: not in CI, not when the output goes to a pipe or a file.
  const interactive = stderr.isTTY === true && stdout.isTTY === true && !isCi(env);
  const progress = new Progress(stderr, options.progress ?? interactive, () => totalEvents, io.progressPace);
  const output = new Output(stdout, () => progress.clear());
  const reporter = createReporter(options.format, output, { color, stepSummary: env.GITHUB_STEP_SUMMARY });

  let current: InputReport = { file: "", events: 0, errors: 0, warnings: 0, bytes: 0 };

  const emit = (issue: ReportedIssue): void => {
    if (truncated) return;
    if (issue.fatal) fatal = true;
    if (issue.severity === "error") {
      errors++;
      current.errors++;
      errorsByRule.set(issue.rule, (errorsByRule.get(issue.rule) ?? 0) + 1);
    } else {
      warnings++;
      current.warnings++;
      warningsByRule.set(issue.rule, (warningsByRule.get(issue.rule) ?? 0) + 1);
    }
    reporter.issue(issue);
    if (errors >= maxErrors) truncated = true;
  };

  const countKind = (name: string) => {
    const count = kinds.get(name);
    if (count !== undefined) kinds.set(name, count + 1);
    else if (kinds.size < MAX_KINDS && name.length <= 100) kinds.set(name, 1);
    else kinds.set("(other kinds)", (kinds.get("(other kinds)") ?? 0) + 1);
  };

  const inputs = await resolveInputs(options.paths, cwd);
  let skippedInputs = 0;
  for (const input of inputs) {
    if (truncated || output.broken) {
      skippedInputs++;
      continue;
    }
    current = { file: input.display, format: undefined, events: 0, errors: 0, warnings: 0, bytes: 0 };
    reports.push(current);
    const report = current;
    if (input.type === "error") {
      report.unreadable = { rule: input.rule, message: input.message };
      emit({ severity: "error", rule: input.rule, message: input.message, file: input.display, fatal: true });
      reporter.inputDone(report);
      continue;
    }

    // One trajectory: its sequence checker, and its first event's issues held back until it is
    // known whether a second event follows (a lone event breaks no sequence rule).
    const checker = options.sequence ? new TrajectoryChecker() : undefined;
    let held: { entry: Entry; index: number; result: ValidationResult; sequence: SequenceResult } | undefined;

    const release = (entry: Entry, index: number, result: ValidationResult, sequence: SequenceResult) => {
      for (const issue of result.errors) emit(entryIssue(entry, index, issue, "error", input.display));
      for (const issue of sequence.errors) emit(entryIssue(entry, index, issue, "error", input.display));
      for (const issue of result.warnings) emit(entryIssue(entry, index, issue, "warning", input.display));
      for (const issue of sequence.warnings) emit(entryIssue(entry, index, issue, "warning", input.display));
    };

    const sink = (entry: Entry): boolean => {
      const index = report.events++;
      totalEvents++;
      if (held && index === 1) {
        release(held.entry, held.index, held.result, held.sequence);
        held = undefined;
      }
      if (entry.parseError !== undefined) {
        checker?.check(undefined);
        countKind("(not JSON)");
        emit(entryIssue(entry, index, { pointer: "", rule: "json", message: `is not valid JSON: ${entry.parseError}` }, "error", input.display));
        return !truncated && !output.broken;
      }
      const value = entry.value;
      const kind = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as { kind?: unknown }).kind : undefined;
      countKind(typeof kind === "string" ? kind : "(no kind)");
      const result = validateEvent(value, validateOptions);
      const sequence = checker ? checker.check(value, entry.hasLine ? entry.line : undefined) : NOTHING;
      if (result.errors.length > 0 || result.warnings.length > 0 || sequence !== NOTHING) {
        if (index === 0 && entry.bare && sequence !== NOTHING) held = { entry: { ...entry }, index, result, sequence };
        else release(entry, index, result, sequence);
      }
      return !truncated && !output.broken;
    };

    const context: ReadContext = {
      onBytes(count) {
        report.bytes += count;
        totalBytes += count;
        progress.advance(count);
      },
      issue: (issue) => emit(sourceIssue(issue, input.display)),
      breathe: () => output.drain(),
      stopped: () => truncated || output.broken,
    };

    progress.begin(input.display, input.type === "file" ? input.size : undefined);
    try {
      report.format = await readInput(input, context, sink, limits, io.stdin ?? process.stdin, cwd);
    } catch (error) {
      const rule = error instanceof InputError ? error.rule : "input/unreadable";
      const message = error instanceof InputError ? error.message : `cannot be read: ${(error as Error).message}`;
      report.unreadable = { rule, message };
      emit({ severity: "error", rule, message, file: input.display, fatal: true });
    }
    if (held) {
      const { entry, index, result, sequence } = held;
      // A lone event: the sequence rules say nothing about it.
      release(entry, index, result, report.events > 1 ? sequence : NOTHING);
      held = undefined;
    }
    progress.clear();
    reporter.inputDone(report);
  }

  const exitCode = fatal ? EXIT_USAGE : errors > 0 ? EXIT_INVALID : EXIT_VALID;
  const runReport: RunReport = {
    inputs: reports,
    events: totalEvents,
    kinds: Object.fromEntries([...kinds].map(([name, count]) => [sanitize(name), count])),
    errors,
    warnings,
    errorsByRule: Object.fromEntries(errorsByRule),
    warningsByRule: Object.fromEntries(warningsByRule),
    truncated,
    skippedInputs,
    exitCode,
  };
  reporter.finish(runReport);
  await output.end();
  progress.clear();

  // For the benchmark (not documented): the process's own peak memory, measured where it runs.
  if (env.ACS_VALIDATE_STATS) {
    writeFileSync(
      env.ACS_VALIDATE_STATS,
      JSON.stringify({ maxRssBytes: process.resourceUsage().maxRSS * 1024, events: totalEvents, bytes: totalBytes, seconds: (performance.now() - started) / 1000 }),
    );
  }
  return exitCode;
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
