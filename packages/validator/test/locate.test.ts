import { describe, expect, it } from "vitest";
import { locatePointer, validateEvent } from "../src/index.js";
import { example } from "./support.js";

/** The text a location spans. */
const span = (text: string, pointer: string) => {
  const location = locatePointer(text, pointer);
  return location && { text: text.slice(location.offset, location.offset + location.length), line: location.line, column: location.column, found: location.found };
};

describe("locatePointer", () => {
  const pretty = JSON.stringify({ a: { "b/c": [10, { d: "x" }], "e~f": null }, g: true }, null, 2);

  it.each([
    ["", { text: pretty, line: 1, column: 1, found: true }],
    ["/a/b~1c/1/d", { text: '"d": "x"', line: 6, column: 9, found: true }],
    ["/a/b~1c/0", { text: "10", line: 4, column: 7, found: true }],
    ["/a/e~0f", { text: '"e~f": null', line: 9, column: 5, found: true }],
    ["/g", { text: '"g": true', line: 11, column: 3, found: true }],
  ])("%s in indented text", (pointer, expected) => {
    expect(span(pretty, pointer)).toEqual(expected);
  });

  it("a missing target: the first character of its nearest parent", () => {
    expect(span(pretty, "/a/missing")).toEqual({ text: "{", line: 2, column: 8, found: false });
    expect(span(pretty, "/a/b~1c/7")).toEqual({ text: "[", line: 3, column: 12, found: false });
    expect(span(pretty, "/g/below/a/primitive")).toEqual({ text: "t", line: 11, column: 8, found: false });
    expect(span(pretty, "/a/b~1c/x")).toMatchObject({ found: false });
  });

  it("strings with quotes, escapes and brackets inside do not confuse it", () => {
    const text = '{"s": "a \\" } ] \\\\", "k\\u0065y": {"t": "[{"}, "n": -1.5e3}';
    expect(span(text, "/key/t")).toMatchObject({ text: '"t": "[{"', found: true });
    expect(span(text, "/n")).toMatchObject({ text: '"n": -1.5e3', found: true });
  });

  it("a repeated key resolves to its last occurrence, as JSON.parse does", () => {
    expect(span('{"a": 1, "a": 2}', "/a")).toMatchObject({ text: '"a": 2' });
  });

  it("text that is not JSON enough to walk gives undefined", () => {
    expect(locatePointer("", "")).toBeUndefined();
    expect(locatePointer('{"a": ', "/a")).toBeUndefined();
    expect(locatePointer('{"a" 1}', "/a")).toBeUndefined();
    expect(locatePointer("[1, 2", "/1")).toBeUndefined();
  });

  it("finds every issue validateEvent reports on an event with several", () => {
    const event = example("ActionEvent", "BrowserNavigateAction");
    event.action.url = 42;
    delete event.tool_name;
    event.extra = 1;
    const text = JSON.stringify(event, null, 2);
    const issues = validateEvent(event).errors;
    expect(issues.length).toBe(3);
    for (const issue of issues) expect(locatePointer(text, issue.pointer)).toBeDefined();
    expect(span(text, "/action/url")).toMatchObject({ text: '"url": 42', found: true });
    expect(span(text, "/tool_name")).toMatchObject({ text: "{", line: 1, found: false });
  });
});
