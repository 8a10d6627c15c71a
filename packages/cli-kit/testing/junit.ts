/**
 * Tests' reading of a JUnit report (of the writer in src/junit.ts, or of a command's real output):
 * a real XML parser, after the checks it does not make itself. Not bundled into any command.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";

// htmlEntities: also decode numeric references (&#10;); "@" keeps attributes apart from child elements.
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  htmlEntities: true,
  isArray: (name) => ["testsuite", "testcase", "property"].includes(name),
});

/**
 * `xml` as a tree (attributes as `@name`, an element's text as `#text`, or the element itself when it
 * has no attributes). Throws unless it is well-formed XML 1.0 that a conforming parser reads as written.
 */
export function parseJUnit(xml: string): any {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new Error(`not well-formed: ${valid.err.msg} (line ${valid.err.line})`);
  // With the u flag a surrogate class matches only unpaired surrogates.
  // eslint-disable-next-line no-control-regex -- the characters XML 1.0 forbids are what this looks for
  const forbidden = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udfff]/u.exec(xml);
  if (forbidden) throw new Error(`holds U+${forbidden[0].charCodeAt(0).toString(16).padStart(4, "0")}, which XML 1.0 forbids`);
  // A conforming parser reads a raw tab or line break in an attribute as a space (fast-xml-parser does not normalise).
  const flattened = /="[^"]*[\t\n\r]/.exec(xml);
  if (flattened) throw new Error(`a raw tab or line break in an attribute, which a parser reads as a space: ${JSON.stringify(flattened[0])}`);
  return parser.parse(xml);
}
