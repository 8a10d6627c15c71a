/**
 * `acs-validate --format html`, in-process: one self-contained document (snapshot:
 * test/__snapshots__/cli-output.html), the summary first, every issue at its event with the text the
 * human format prints, links that land, hostile recordings as text, and long recordings cut down
 * to what matters, saying what was left out.
 */
import { cpSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { eventDirectoryFixture, jsonl, runCli, tempDir, trajectory, writeFiles } from "./cli-support.js";
import { writeLongRecording } from "./long-recording.js";
import { example } from "./support.js";

const unescape = (html: string) => html.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");

/** What a report is made of: its issues as shown at their events, its links, ids and gap notes. */
function anatomy(html: string) {
  const main = html.slice(html.indexOf("<main>"));
  return {
    inlineIssues: [...main.matchAll(/<div class="issue (error|warning)" id="(i\d+)">.*?<pre>([\s\S]*?)<\/pre><\/div>/g)].map((m) => ({ severity: m[1], id: m[2], text: unescape(m[3]!) })),
    events: [...main.matchAll(/<article class="ev [^"]*" id="e(\d+)-(\d+)">/g)].map((m) => [Number(m[1]), Number(m[2])] as const),
    links: [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!),
    ids: new Set([...html.matchAll(/\sid="([^"]*)"/g)].map((m) => m[1]!)),
    gaps: [...main.matchAll(/<p class="gap">… ([\d,]+) events? (?:without errors or warnings omitted|omitted) \(#([\d,]+)(?:–#([\d,]+))?\)/g)].map((m) => ({ events: Number(m[1]!.replace(/,/g, "")), from: Number(m[2]!.replace(/,/g, "")), to: Number((m[3] ?? m[2]!).replace(/,/g, "")) })),
  };
}

const REPORT_ELEMENTS = ["!doctype", "html", "head", "meta", "title", "style", "body", "header", "main", "footer", "section", "article", "h1", "h2", "p", "a", "span", "code", "pre", "div", "dl", "dt", "dd", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "time", "em"];

/** One whole HTML document, with nothing that loads or runs. */
function expectSelfContained(html: string): void {
  expect(html.startsWith("<!doctype html>\n<html")).toBe(true);
  expect(html.endsWith("</html>\n")).toBe(true);
  for (const once of ["<!doctype", "<html", "</html>", "<head>", "<body>", "<style>", "</style>", "<main>", "</main>"]) expect(html.split(once).length - 1, once).toBe(1);
  expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`);
  // Text escapes every "<", so each one opens an element of the report's own, with its own attributes.
  const elements = new Set<string>();
  for (const [, name, attributes] of html.matchAll(/<\/?([a-zA-Z!][\w-]*)([^>]*)>/g)) {
    elements.add(name!.toLowerCase());
    for (const [, attribute, value] of attributes!.matchAll(/\s([\w-]+)(?:="([^"]*)")?/g)) {
      expect(["class", "id", "href", "title", "lang", "charset", "http-equiv", "content", "name", "html"], attribute).toContain(attribute);
      if (attribute === "href") expect(value).toMatch(/^#[a-z0-9-]+$/);
    }
  }
  expect([...elements].filter((e) => !REPORT_ELEMENTS.includes(e))).toEqual([]);
  const style = html.slice(html.indexOf("<style>"), html.indexOf("</style>"));
  expect(style).not.toMatch(/url\(|@import|@font-face/i);
}

/** Inputs with something of everything, as for the other formats, and an event directory. */
function fixtures(): string {
  const directory = tempDir();
  const events = trajectory();
  events[2]!.action.kind = "TerminalActon";
  events[3]!.action_id = "00000000-0000-4000-8000-0000000000aa";
  events[6]!.llm_message.cache_enabled = true;
  const tab = example("ActionEvent", "BrowserClickAction");
  tab.action.index = -1;
  tab.id = "00000000-0000-4000-8000-000000000101";
  tab.timestamp = "2026-02-05T11:25:00";
  const page = { items: trajectory().slice(0, 3).concat([tab]), next_page_id: null };
  delete page.items[1]!.llm_message;
  writeFiles(directory, {
    "recordings/conversation.jsonl": jsonl(events),
    "recordings/page.json": JSON.stringify(page, null, 2),
    "recordings/valid.jsonl": jsonl(trajectory()),
  });
  cpSync(eventDirectoryFixture, path.join(directory, "recordings/stored"), { recursive: true });
  return directory;
}

const argv = ["recordings/conversation.jsonl", "recordings/page.json", "recordings/valid.jsonl", "recordings/stored", "recordings/missing.jsonl", "--format", "html"];
let cwd: string;
beforeAll(() => {
  cwd = fixtures();
});

describe("--format html", () => {
  it("snapshot: one self-contained document, the summary first, then each input as a conversation", async () => {
    const result = await runCli(argv, { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("");
    expectSelfContained(result.stdout);
    expect(result.stdout.indexOf('<header id="summary">')).toBeLessThan(result.stdout.indexOf("<main>"));
    await expect(result.stdout).toMatchFileSnapshot("__snapshots__/cli-output.html");
  });

  it("every issue at its event, with the text the human format prints; the summary links to each and lists what belongs to no event", async () => {
    const html = (await runCli(argv, { cwd })).stdout;
    const json = JSON.parse((await runCli([...argv.slice(0, -2), "--format", "json"], { cwd })).stdout) as { issues: { severity: string; index?: number; rule: string }[] };
    const human = (await runCli(argv.slice(0, -2), { cwd })).stdout;
    const { inlineIssues, links, ids } = anatomy(html);
    expect(inlineIssues.map((i) => i.severity)).toEqual(json.issues.map((i) => i.severity));
    for (const issue of inlineIssues) expect(human).toContain(issue.text);
    // Each issue of an event sits in that event's article, marked by the worst of them; the others in their input's section.
    const articles = [...html.matchAll(/<article class="ev ([^"]*)" id="e(\d+)-(\d+)">([\s\S]*?)<\/article>/g)];
    const inArticles = articles.flatMap(([, , , , body]) => [...body!.matchAll(/<div class="issue (error|warning)"/g)].map((m) => m[1]));
    expect(inArticles).toEqual(json.issues.filter((i) => i.index !== undefined).map((i) => i.severity));
    for (const [, classes, , , body] of articles) {
      const worst = body!.includes('<div class="issue error"') ? "has-error" : body!.includes('<div class="issue warning"') ? "has-warning" : undefined;
      expect(classes!.split(" ").filter((c) => c.startsWith("has-"))).toEqual(worst ? [worst] : []);
    }
    // The summary links to every issue, and every link lands on an element.
    const summary = html.slice(0, html.indexOf("<main>"));
    for (const issue of inlineIssues) expect(summary).toContain(`href="#${issue.id}"`);
    for (const link of links) expect(ids.has(link.slice(1)), link).toBe(true);
    // The missing input's error belongs to no event: the summary shows it in full.
    expect(summary).toContain("Problems of the inputs themselves");
    expect(summary).toMatch(/<div class="issue error" id="i\d+-summary">.*input\/not-found/s);
  });

  it("the summary: verdict, exit code, profile and rules, events per kind, errors per rule, the inputs", async () => {
    const html = (await runCli([...argv, "--profile", "1.22.0", "--unknown-kinds", "warn"], { cwd })).stdout;
    const summary = html.slice(0, html.indexOf("<main>"));
    expect(summary).toContain('<span class="verdict fail">✖ an input could not be read</span>');
    expect(summary).toContain("<dt>exit code</dt><dd>2</dd>");
    expect(summary).toContain("<dt>profile</dt><dd><code>1.22.0</code>: OpenHands 1.22.0</dd>");
    expect(summary).toContain("<dt>rules</dt><dd>schema and sequence rules; unknown kinds: warn; unknown properties: error</dd>");
    expect(summary).toMatch(/<dt>events<\/dt><dd>26: ActionEvent 8, MessageEvent 8, /);
    expect(summary).toMatch(/<tr class="bad"><td><a href="#f5">recordings\/missing\.jsonl<\/a><\/td><td>no such file or directory/);
  });

  it("exit codes as the other formats: 0 valid, 1 invalid, 2 for a usage error (nothing on standard output)", async () => {
    const valid = await runCli(["recordings/valid.jsonl", "--format", "html"], { cwd });
    expect(valid.code).toBe(0);
    expectSelfContained(valid.stdout);
    expect(valid.stdout).toContain('<span class="verdict pass">✔ valid</span>');
    expect(valid.stdout).not.toContain('class="issue');
    const invalid = await runCli(["recordings/conversation.jsonl", "--format", "html"], { cwd });
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toContain('<span class="verdict fail">✖ invalid</span>');
    expect(await runCli(["--format", "html"], { cwd })).toMatchObject({ code: 2, stdout: "" });
  });

  it("--max-errors: the report says where it stopped", async () => {
    const result = await runCli(["recordings/conversation.jsonl", "recordings/page.json", "--format", "html", "--max-errors", "1"], { cwd });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("Stopped after 1 error (--max-errors): the rest was not read.");
    expect(anatomy(result.stdout).inlineIssues).toHaveLength(1);
  });

  it("a hostile recording and file name come out as text: no script, no markup, no closed style", async () => {
    const directory = tempDir();
    const events = trajectory();
    const payload = `</style></pre><script>window.pwned = 1</script><img src=x onerror="alert(1)">`;
    events[1]!.llm_message.content = [{ type: "text", text: payload }];
    events[2]!.action.command = payload;
    events[2]!.tool_name = payload;
    events[3]!.observation.content = [{ type: "text", text: payload }];
    events[4]!.action.kind = payload;
    const name = `<b>rec</b>'"&.jsonl`;
    writeFiles(directory, { [name]: jsonl(events) });
    const result = await runCli([name, "--format", "html"], { cwd: directory });
    expect(result.code).toBe(1);
    expectSelfContained(result.stdout);
    expect(result.stdout).toContain("&lt;/style&gt;&lt;/pre&gt;&lt;script&gt;window.pwned = 1&lt;/script&gt;");
    expect(result.stdout).toContain("&lt;b&gt;rec&lt;/b&gt;&#39;&quot;&amp;.jsonl");
    expect(result.stdout).not.toContain("<b>");
  });

  it("the body spooled to a temporary file gives the same document as in memory", async () => {
    const inMemory = await runCli(argv, { cwd });
    const onDisk = await runCli(argv, { cwd, html: { spoolMemoryBytes: 512 } });
    expect(onDisk.stdout).toBe(inMemory.stdout);
  });
});

describe("--format html on a long recording", () => {
  let directory: string;
  let errors: number;
  beforeAll(() => {
    directory = tempDir();
    errors = writeLongRecording(path.join(directory, "long.jsonl"), 100_000, 250);
  });

  it("100,000 events: the first ones, each error with its neighbours, the last ones; what was left out, said at its place", async () => {
    const result = await runCli(["long.jsonl", "--format", "html"], { cwd: directory, html: { bounds: { head: 50, context: 2, maxShown: 100_000 } } });
    expect(result.code).toBe(1);
    expectSelfContained(result.stdout);
    const { inlineIssues, events, gaps } = anatomy(result.stdout);
    expect(inlineIssues).toHaveLength(errors);
    expect(errors).toBe(99);
    const numbers = events.map(([, n]) => n);
    expect(numbers.slice(0, 50)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(numbers.slice(-2)).toEqual([99_999, 100_000]);
    expect(numbers).toHaveLength(50 + errors * 5 + 2);
    // The gaps and the events shown cover the recording exactly once, in order.
    const covered = [...numbers.map((n) => [n, n] as const), ...gaps.map((g) => [g.from, g.to] as const)].sort((a, b) => a[0] - b[0]);
    let next = 1;
    for (const [from, to] of covered) {
      expect(from).toBe(next);
      next = to + 1;
    }
    expect(next).toBe(100_001);
    expect(gaps.reduce((sum, g) => sum + g.events, 0)).toBe(100_000 - numbers.length);
    expect(result.stdout).toContain(`<dt>shown</dt><dd>${numbers.length.toLocaleString("en-US")} of 100,000 events: the first 50 of each input, each event with an issue and 2 before and after it, and the last 2</dd>`);
  });

  it("past the report's limit of shown events: errors counted and listed, said to be past the limit", async () => {
    const result = await runCli(["long.jsonl", "--format", "html"], { cwd: directory, html: { bounds: { head: 10, context: 1, maxShown: 40 } } });
    const { inlineIssues, events, gaps } = anatomy(result.stdout);
    expect(events).toHaveLength(40);
    expect(inlineIssues.length).toBeLessThan(errors);
    const omittedWithIssues = errors - inlineIssues.length;
    expect(result.stdout).toContain(`${omittedWithIssues} events with issues past the report&#39;s limit of 40 shown events are counted above but not shown`);
    expect(result.stdout).toContain("(its event is past the report's limit)");
    expect(gaps.at(-1)!.to).toBe(100_000);
    expect(result.stdout).toContain(`<dt>errors</dt><dd>${errors}: unknownProperty ${errors}</dd>`);
  });
});
