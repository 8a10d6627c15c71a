/** The JUnit writer, read back by a real XML parser: what goes in comes out, and the counts add up. */
import { describe, expect, it } from "vitest";
import { parseJUnit as parse } from "../testing/junit.js";
import { junitDocument, junitSuite, xmlAttribute, xmlText, type JUnitCase } from "../src/junit.js";

const HOSTILE = `a <b> & "c" 'd' ]]> e\nf\r\ng\th`;

describe("escaping", () => {
  it("markup, quotes, CDATA ends, tabs and line breaks come back as written, in text and in attributes", () => {
    const suite = junitSuite({ name: HOSTILE, properties: [[HOSTILE, HOSTILE]], cases: [{ classname: HOSTILE, name: HOSTILE, problem: { kind: "failure", type: HOSTILE, message: HOSTILE, text: HOSTILE } }], systemOut: HOSTILE });
    const doc = parse(junitDocument(HOSTILE, [suite]));
    expect(doc.testsuites["@name"]).toBe(HOSTILE);
    const s = doc.testsuites.testsuite[0];
    expect(s["@name"]).toBe(HOSTILE);
    expect(s.properties.property[0]).toEqual({ "@name": HOSTILE, "@value": HOSTILE });
    expect(s["system-out"]).toBe(HOSTILE);
    const c = s.testcase[0];
    expect([c["@classname"], c["@name"]]).toEqual([HOSTILE, HOSTILE]);
    expect(c.failure).toEqual({ "#text": HOSTILE, "@type": HOSTILE, "@message": HOSTILE });
  });

  it("characters XML 1.0 cannot hold become a visible \\uXXXX; other characters pass through", () => {
    const text = "bell\u0007 nul\u0000 esc\u001b fffe\ufffe lone\ud800 pair😀 del\u007f é";
    const expected = "bell\\u0007 nul\\u0000 esc\\u001b fffe\\ufffe lone\\ud800 pair😀 del\u007f é";
    expect(xmlText(text)).toBe(expected);
    expect(xmlAttribute(text)).toBe(expected);
    const doc = parse(junitDocument("x", [junitSuite({ name: text, cases: [{ classname: "c", name: "n", problem: { kind: "error", text } }] })]));
    expect(doc.testsuites.testsuite[0]["@name"]).toBe(expected);
    // An element without attributes parses as its text.
    expect(doc.testsuites.testsuite[0].testcase[0].error).toBe(expected);
  });
});

describe("counts", () => {
  const cases: JUnitCase[] = [
    { classname: "c", name: "pass" },
    { classname: "c", name: "fail", problem: { kind: "failure", message: "m" } },
    { classname: "c", name: "broken", problem: { kind: "error", text: "t" } },
    { classname: "c", name: "skip", skipped: "not here" },
    { classname: "c", name: "skip, no reason", skipped: "" },
  ];

  it("each suite counts its testcases by outcome; the document adds the suites up", () => {
    const doc = parse(junitDocument("tool", [junitSuite({ name: "one", cases }), junitSuite({ name: "two", cases: cases.slice(0, 2) }), junitSuite({ name: "empty", cases: [] })], { timeMs: 1234 }));
    const counts = (e: any) => [e["@tests"], e["@failures"], e["@errors"], e["@skipped"]].map(Number);
    expect(counts(doc.testsuites)).toEqual([7, 2, 1, 2]);
    expect(doc.testsuites["@time"]).toBe("1.234");
    expect(doc.testsuites.testsuite.map(counts)).toEqual([
      [5, 1, 1, 2],
      [2, 1, 0, 0],
      [0, 0, 0, 0],
    ]);
    // The counts match the elements a CI server reads.
    const one = doc.testsuites.testsuite[0].testcase;
    expect(one.filter((c: any) => c.failure !== undefined)).toHaveLength(1);
    expect(one.filter((c: any) => c.error !== undefined)).toHaveLength(1);
    expect(one.filter((c: any) => c.skipped !== undefined).map((c: any) => c.skipped["@message"])).toEqual(["not here", ""]);
  });

  it("an empty report is still a document", () => {
    expect(parse(junitDocument("tool", [])).testsuites).toMatchObject({ "@name": "tool", "@tests": "0", "@failures": "0", "@errors": "0", "@skipped": "0" });
  });
});
