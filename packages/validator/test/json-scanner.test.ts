/** The streaming splitter of JSON arrays and pages: the same elements however the text is cut. */
import { describe, expect, it } from "vitest";
import { JsonDocumentScanner, type ScannedValue } from "../src/cli/json-scanner.js";
import { allExamples } from "./support.js";

function scan(text: string, cut: (text: string) => string[], maxValueChars?: number) {
  const elements: (ScannedValue & { index: number })[] = [];
  const members: [string, string][] = [];
  const scanner = new JsonDocumentScanner(
    {
      element: (value, index) => {
        elements.push({ ...value, index });
      },
      member: (key, value) => {
        members.push([key, value.text]);
      },
    },
    maxValueChars,
  );
  for (const chunk of cut(text)) if (!scanner.write(chunk)) break;
  scanner.end();
  return { elements, members, scanner };
}

const whole = (text: string) => [text];
const byChar = (text: string) => [...text];
const inPieces = (size: number) => (text: string) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

/** Values whose text is hard to split: escaped quotes and backslashes, brackets in strings, unicode. */
const tricky = [
  { s: 'quote " and backslash \\ and \\" both', t: "}]{[,:" },
  { s: "\\\\\\", u: "é 😀 \u2028", n: -12.5e-3, b: [true, false, null] },
  "a string element",
  42,
  null,
  [[[]], {}],
  { "key with \"quotes\"": { nested: [1, { deep: "x" }] } },
];

describe("JsonDocumentScanner", () => {
  const cuts = [
    ["whole", whole],
    ["one character at a time", byChar],
    ["chunks of 7", inPieces(7)],
    ["chunks of 64", inPieces(64)],
  ] as const;

  it.each(cuts)("a top-level array, cut %s: the elements of JSON.parse, each with its place", (_name, cut) => {
    const text = JSON.stringify([...tricky, ...allExamples()], null, 2);
    const { elements, scanner } = scan(text, cut);
    expect(scanner.error).toBeUndefined();
    expect(scanner.shape).toBe("array");
    expect(elements.map((e) => JSON.parse(e.text))).toEqual(JSON.parse(text));
    const lines = text.split("\n");
    for (const e of elements) expect(lines[e.line - 1]!.slice(e.column - 1).startsWith(e.text.split("\n")[0]!)).toBe(true);
  });

  it.each(cuts)("an EventPage, cut %s: its items streamed, its other members given", (_name, cut) => {
    const page = { before: { a: [1, 2] }, items: tricky, next_page_id: "abc\"def", after: 5 };
    const { elements, members, scanner } = scan(JSON.stringify(page), cut);
    expect(scanner.error).toBeUndefined();
    expect(scanner.isPage).toBe(true);
    expect(elements.map((e) => JSON.parse(e.text))).toEqual(tricky);
    expect(members.map(([k, v]) => [k, JSON.parse(v)])).toEqual([
      ["before", { a: [1, 2] }],
      ["next_page_id", 'abc"def'],
      ["after", 5],
    ]);
    expect(scanner.wholeText()).toBeUndefined();
  });

  it.each(cuts)("an object that is not a page, cut %s, is kept whole", (_name, cut) => {
    const event = allExamples()[3];
    const text = `\n  ${JSON.stringify(event, null, 2)}\n`;
    const { elements, scanner } = scan(text, cut);
    expect(elements).toEqual([]);
    expect(scanner.isPage).toBe(false);
    expect(JSON.parse(scanner.wholeText()!)).toEqual(event);
  });

  it("an object with an items member that is not an array is not a page", () => {
    const { scanner } = scan('{"items": {"a": 1}, "kind": "X"}', whole);
    expect(scanner.isPage).toBe(false);
    expect(scanner.wholeText()).toBe('{"items": {"a": 1}, "kind": "X"}');
  });

  it("an empty array and an empty page", () => {
    expect(scan("[ ]", whole).elements).toEqual([]);
    expect(scan('{"items": []}', whole)).toMatchObject({ elements: [], scanner: { isPage: true, error: undefined } });
  });

  it.each([
    ["a truncated array", '[{"a": 1}, {"b": [1, 2', /^the input ends inside element 1 of the JSON array \(it starts at line 1\): the file is truncated$/, 1],
    ["an array cut after a comma", '[{"a": 1},\n', /^the input ends before the end of the JSON array/, 1],
    ["a truncated page", '{"items": [{"a": 1}', /^the input ends before the end of the items array/, 1],
    ["a truncated object", '{"id": "x", "kind": ', /^the input ends before the end of the JSON object/, 0],
    ["a missing comma", '[{"a": 1} {"b": 2}]', /^expected "," or "]" after element 0, got "\{\\"b\\": 2}]"$/, 1],
    ["a trailing comma", "[1, 2, ]", /^a "]" follows a ",": element 2 is missing$/, 2],
    ["text after the array", "[1]\n[2]", /^expected nothing after the end of the JSON array, got "\[2]"$/, 1],
    ["a member without a colon", '{"items" []}', /^expected ":" after the key "items"/, 0],
    ["a member name without quotes", "{items: []}", /^expected a member name in double quotes/, 0],
  ])("%s: an error with its place, elements before it kept", (_name, text, message, count) => {
    const { elements, scanner } = scan(text, whole);
    expect(scanner.error?.message).toMatch(message);
    expect(elements).toHaveLength(count);
  });

  it("the error's line and column", () => {
    const { scanner } = scan('[\n  {"a": 1},\n  {"b": 2}\n  {"c": 3}\n]', whole);
    expect(scanner.error).toEqual({ message: 'expected "," or "]" after element 1, got "{\\"c\\": 3}\\n]"', line: 4, column: 3 });
  });

  it("an element larger than the limit stops the scan with a clear error", () => {
    const { scanner, elements } = scan(JSON.stringify([{ a: 1 }, { s: "x".repeat(5000) }, { b: 2 }]), inPieces(100), 1000);
    expect(elements).toHaveLength(1);
    expect(scanner.error?.message).toBe("element 1 is larger than 1000 bytes: it is not read");
  });

  it("a handler answering false stops the scan", () => {
    let seen = 0;
    const scanner = new JsonDocumentScanner({ element: () => ++seen < 2 });
    expect(scanner.write("[1, 2, 3, 4]")).toBe(false);
    expect(seen).toBe(2);
  });
});
