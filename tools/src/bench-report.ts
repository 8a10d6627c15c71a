/**
 * BENCHMARKS.md from the figures the benchmarks append as JSON lines to `ACS_BENCH_RESULTS` (one
 * object per figure: suite, name, value, unit, and optionally peer, ratio, target, met), with the
 * machine and the date. `scripts/bench.mjs` collects the lines and calls this module.
 */
import { cpus, release, totalmem, type as osType } from "node:os";

/** A figure measured in the same run as its peer (so that the ratio holds whatever the machine). */
export interface BenchPeer {
  name: string;
  value: number;
  unit: string;
}

/** One figure, as a benchmark writes it. */
export interface BenchFigure {
  suite: string;
  name: string;
  value: number;
  unit: string;
  peer?: BenchPeer;
  /** Whatever the target compares (figure / peer, or a bound). */
  ratio?: number;
  /** The target as a person reads it: `ratio ≤ 1.0`, `p50 < 10 ms`. */
  target?: string;
  met?: boolean;
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryBytes: number;
  node: string;
  os: string;
}

interface ParsedResults {
  figures: BenchFigure[];
  /** Lines that are not a figure, each with its line number and what is wrong; duplicate figures. */
  problems: string[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isText = (value: unknown): value is string => typeof value === "string" && value.trim().length > 0;
const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

/** What is wrong with a parsed line, or undefined when it is a figure. */
function figureProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "is not a JSON object";
  for (const key of ["suite", "name", "unit"]) if (!isText(value[key])) return `${key} must be a non-empty string`;
  if (!isNumber(value.value)) return "value must be a finite number";
  if (value.peer !== undefined) {
    const peer = value.peer;
    if (!isObject(peer) || !isText(peer.name) || !isNumber(peer.value) || !isText(peer.unit)) return "peer must be {name, value, unit}";
  }
  if (value.ratio !== undefined && !isNumber(value.ratio)) return "ratio must be a finite number";
  if (value.target !== undefined && !isText(value.target)) return "target must be a non-empty string";
  if (value.met !== undefined && typeof value.met !== "boolean") return "met must be true or false";
  if (value.met !== undefined && value.target === undefined) return "met is given without a target";
  return undefined;
}

/** The figures of a results file (JSON Lines); blank lines are ignored. */
export function parseBenchResults(text: string): ParsedResults {
  const figures: BenchFigure[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  text.split("\n").forEach((line, index) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push(`line ${index + 1}: not JSON: ${line.slice(0, 80)}`);
      return;
    }
    const problem = figureProblem(value);
    if (problem) {
      problems.push(`line ${index + 1}: ${problem}: ${line.slice(0, 80)}`);
      return;
    }
    const figure = value as BenchFigure;
    const key = `${figure.suite}\u0000${figure.name}`;
    if (seen.has(key)) problems.push(`line ${index + 1}: "${figure.name}" of suite ${figure.suite} is given twice`);
    seen.add(key);
    figures.push(figure);
  });
  return { figures, problems };
}

/** The machine this process runs on. */
export function describeMachine(): Machine {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() || "unknown CPU",
    cores: list.length,
    memoryBytes: totalmem(),
    node: process.version,
    os: `${osType()} ${release()} (${process.arch})`,
  };
}

/** 1,122,371 · 447 · 2.01 · 0.0042: thousands separated, three significant digits below 100. */
export function formatNumber(value: number): string {
  if (Number.isInteger(value) || Math.abs(value) >= 100) return Math.round(value).toLocaleString("en-US");
  return value.toLocaleString("en-US", { maximumSignificantDigits: 3 });
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

interface ReportInput {
  figures: readonly BenchFigure[];
  machine: Machine;
  date: Date;
  /** A smoke run's figures are not measurements: the report says so. */
  smoke?: boolean;
  /** A benchmark failed in this run: its figures are missing, and the report says so. */
  incomplete?: boolean;
  /**
   * Written notes per suite (Markdown: what the suite measures, how to read its ratios, what bounds
   * it; the reasoning behind its design is in `bench/DECISIONS.md`), kept in `bench/notes/<suite>.md`
   * so that a run regenerates every figure without losing them:
   * each follows its suite's table; a suite with notes and no figure in this run gets its notes alone.
   */
  notes?: Readonly<Record<string, string>>;
}

/** The notes file of a suite: `bench/notes/<this>.md` (`agent runtime` → `agent-runtime`). */
export const notesFileName = (suite: string) => `${suite.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")}.md`;

/** BENCHMARKS.md: the machine, the date, a summary of targets, then one table per suite (in order of first figure). */
export function renderBenchReport({ figures, machine, date, smoke = false, incomplete = false, notes = {} }: ReportInput): string {
  const measured = [...new Set(figures.map((f) => f.suite))];
  const suites = [...measured, ...Object.keys(notes).filter((suite) => !measured.includes(suite))];
  const targeted = figures.filter((f) => f.met !== undefined);
  const missed = targeted.filter((f) => f.met === false);
  const lines = [
    "# Benchmarks",
    "",
    `Generated by \`pnpm bench${smoke ? " --smoke" : ""}\` on ${date.toISOString().slice(0, 10)} at ${date.toISOString().slice(11, 16)} UTC.` +
      " Every ratio compares a figure with its peer (or bound) measured in the same run on the same machine: compare ratios, not absolute figures across machines.",
    ...(smoke ? ["", "**Smoke run**: each benchmark ran briefly to prove it works; these figures are not measurements."] : []),
    ...(incomplete ? ["", "**Incomplete**: a benchmark failed in this run; its figures are missing below."] : []),
    "",
    "| machine | |",
    "| --- | --- |",
    `| CPU | ${cell(machine.cpu)} × ${machine.cores} |`,
    `| memory | ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB |`,
    `| Node.js | ${machine.node} |`,
    `| OS | ${cell(machine.os)} |`,
    "",
    `${figures.length} figures in ${suites.length} suites; ${targeted.length} with a target: ${targeted.length - missed.length} met, ${missed.length} not met.`,
    ...missed.map((f) => `- ✗ ${f.suite}: ${f.name} (${f.target})`),
  ];
  for (const suite of suites) {
    lines.push("", `## ${suite}`);
    const note = notes[suite]?.trim();
    if (!measured.includes(suite)) {
      lines.push("", "Not measured in this run.", "", note!);
      continue;
    }
    lines.push("", "| figure | value | peer | ratio | target | met |", "| --- | ---: | --- | ---: | --- | :---: |");
    for (const f of figures.filter((figure) => figure.suite === suite)) {
      const peer = f.peer ? `${cell(f.peer.name)}: ${formatNumber(f.peer.value)} ${cell(f.peer.unit)}` : "—";
      const ratio = f.ratio === undefined ? "—" : formatNumber(f.ratio);
      const met = f.met === undefined ? "—" : f.met ? "✓" : "✗";
      lines.push(`| ${cell(f.name)} | ${formatNumber(f.value)} ${cell(f.unit)} | ${peer} | ${ratio} | ${f.target ? cell(f.target) : "—"} | ${met} |`);
    }
    if (note) lines.push("", note);
  }
  return lines.join("\n") + "\n";
}
