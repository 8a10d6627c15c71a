/**
 * The JUnit XML writer of acs-validate and acs-conformance: one escaping and one set of counts, so
 * that the two reports cannot disagree on what a CI server can read.
 *
 * Suites are rendered one at a time ({@link junitSuite}) so that a caller streaming its inputs
 * keeps only finished suites' text, then joined under `<testsuites>` ({@link junitDocument}).
 * The counts of each element are computed here from the testcases, never passed in.
 */

/** A failing (`failure`: an assertion did not hold) or broken (`error`: could not run) testcase. */
export interface JUnitProblem {
  kind: "failure" | "error";
  type?: string | undefined;
  message?: string | undefined;
  /** The element's text: the details. */
  text?: string | undefined;
}

export interface JUnitCase {
  classname: string;
  name: string;
  file?: string | undefined;
  line?: number | undefined;
  timeMs?: number | undefined;
  /** Absent: the testcase passed. */
  problem?: JUnitProblem | undefined;
  /** Present: the testcase was skipped, for this reason. */
  skipped?: string | undefined;
}

export interface JUnitSuite {
  name: string;
  timeMs?: number | undefined;
  /** ISO 8601. */
  timestamp?: string | undefined;
  properties?: readonly (readonly [name: string, value: string | number])[] | undefined;
  cases: readonly JUnitCase[];
  systemOut?: string | undefined;
}

export interface JUnitCounts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

/** A suite as XML, with the counts the document totals. */
export interface RenderedSuite extends JUnitCounts {
  xml: string;
}

/**
 * Characters XML 1.0 cannot hold at all, not even as a character reference: C0 controls other than
 * tab, newline and carriage return, U+FFFE, U+FFFF and unpaired surrogates.
 */
// eslint-disable-next-line no-control-regex -- these control characters are what this finds
const FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// Written as `\uXXXX` (visible, and tells which character it was) rather than dropped: evidence may quote a hostile name.
const visible = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * Escapes element text. `>` is escaped too, so `]]>` (forbidden in text) cannot occur; `\r` is a
 * reference, else a parser would turn `\r\n` into `\n`.
 */
export function xmlText(text: string): string {
  return text.replace(FORBIDDEN, visible).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/\r/g, "&#13;");
}

/** Escapes a double-quoted attribute value; tab, newline and carriage return are references, else a parser reads them as spaces. */
export function xmlAttribute(value: string): string {
  return xmlText(value).replace(/\n/g, "&#10;").replace(/\t/g, "&#9;");
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** ` a="x" b="y"`, leaving out undefined values. */
function attributes(pairs: readonly (readonly [string, string | number | undefined])[]): string {
  return pairs
    .filter((pair): pair is readonly [string, string | number] => pair[1] !== undefined)
    .map(([name, value]) => ` ${name}="${typeof value === "number" ? value : xmlAttribute(value)}"`)
    .join("");
}

/** `<name attrs>text</name>`, or `<name attrs/>` without text. */
function element(indent: string, name: string, attrs: string, text: string | undefined): string {
  return text ? `${indent}<${name}${attrs}>${xmlText(text)}</${name}>` : `${indent}<${name}${attrs}/>`;
}

function testcase(c: JUnitCase): string {
  const open = `    <testcase${attributes([
    ["classname", c.classname],
    ["name", c.name],
    ["file", c.file],
    ["line", c.line],
    ["time", c.timeMs === undefined ? undefined : seconds(c.timeMs)],
  ])}`;
  const inner =
    c.problem !== undefined
      ? element("      ", c.problem.kind, attributes([["type", c.problem.type], ["message", c.problem.message]]), c.problem.text)
      : c.skipped !== undefined
        ? element("      ", "skipped", attributes([["message", c.skipped]]), undefined)
        : undefined;
  return inner === undefined ? `${open}/>` : `${open}>\n${inner}\n    </testcase>`;
}

function countsOf(cases: readonly JUnitCase[]): JUnitCounts {
  return {
    tests: cases.length,
    failures: cases.filter((c) => c.problem?.kind === "failure").length,
    errors: cases.filter((c) => c.problem?.kind === "error").length,
    skipped: cases.filter((c) => c.problem === undefined && c.skipped !== undefined).length,
  };
}

const countAttributes = (counts: JUnitCounts): [string, number][] => [
  ["tests", counts.tests],
  ["failures", counts.failures],
  ["errors", counts.errors],
  ["skipped", counts.skipped],
];

export function junitSuite(suite: JUnitSuite): RenderedSuite {
  const counts = countsOf(suite.cases);
  const lines = [
    `  <testsuite${attributes([
      ["name", suite.name],
      ...countAttributes(counts),
      ["time", suite.timeMs === undefined ? undefined : seconds(suite.timeMs)],
      ["timestamp", suite.timestamp],
    ])}>`,
  ];
  if (suite.properties?.length) {
    lines.push("    <properties>", ...suite.properties.map(([name, value]) => `      <property${attributes([["name", name], ["value", value]])}/>`), "    </properties>");
  }
  lines.push(...suite.cases.map(testcase));
  if (suite.systemOut) lines.push(`    <system-out>${xmlText(suite.systemOut)}</system-out>`);
  lines.push("  </testsuite>");
  return { ...counts, xml: lines.join("\n") };
}

/** The whole report: `<testsuites>` with the totals of its suites. */
export function junitDocument(name: string, suites: readonly RenderedSuite[], options: { timeMs?: number | undefined } = {}): string {
  const totals: JUnitCounts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  for (const suite of suites) {
    totals.tests += suite.tests;
    totals.failures += suite.failures;
    totals.errors += suite.errors;
    totals.skipped += suite.skipped;
  }
  const open = `<testsuites${attributes([["name", name], ...countAttributes(totals), ["time", options.timeMs === undefined ? undefined : seconds(options.timeMs)]])}>`;
  return ['<?xml version="1.0" encoding="UTF-8"?>', open, ...suites.map((s) => s.xml), "</testsuites>", ""].join("\n");
}
