/**
 * The HTML report's pieces (src/cli/html/): each event kind as the report draws it (a snapshot,
 * test/__snapshots__/html-events.html), issues at their event, and hostile recordings rendered as
 * text, never as markup.
 */
import { EVENT_KINDS } from "@acs-toolkit/schema";
import { describe, expect, it } from "vitest";
import { clip, escapeHtml } from "../src/cli/html/escape.js";
import { renderEvent, type EventView } from "../src/cli/html/events.js";
import { gapNote, renderIssue } from "../src/cli/html/layout.js";
import { previewJson } from "../src/cli/html/text.js";
import type { ReportedIssue } from "../src/cli/model.js";
import { allExamples, example } from "./support.js";

const view = (value: unknown, index = 0): EventView => ({ index, anchor: `e1-${index + 1}`, line: index + 1, value });

/** The elements and attributes a fragment of the report opens: only the report's own. */
function tags(html: string): string[] {
  return [...new Set([...html.matchAll(/<([a-z][a-z0-9]*)\b/g)].map((m) => m[1]!))].sort();
}

const ALLOWED_TAGS = ["a", "article", "code", "dd", "details", "div", "dl", "dt", "em", "p", "pre", "span", "summary", "time"];

describe("each event kind", () => {
  it("has a drawing of its own (none falls back to raw JSON) and opens only the report's own elements", () => {
    for (const event of allExamples()) {
      const html = renderEvent(view(event), "");
      expect(html, `${event.kind}`).not.toContain('class="ev other');
      expect(tags(html).filter((t) => !ALLOWED_TAGS.includes(t)), event.kind).toEqual([]);
    }
    expect(new Set(allExamples().map((e) => e.kind))).toEqual(new Set(EVENT_KINDS));
  });

  it("snapshot: the first example of every kind, an observation joined to its action, a rejection and an agent error naming theirs", async () => {
    const examples = allExamples();
    const parts = EVENT_KINDS.map((kind, index) => renderEvent(view(examples.find((e) => e.kind === kind), index), ""));
    const action = example("ActionEvent", "FileEditorAction");
    const observation = example("ObservationEvent", "FileEditorObservation");
    parts.push(renderEvent(view(action, 30), ""));
    parts.push(renderEvent(view(observation, 31), "", { answers: { index: 30, anchor: "e1-31" }, joined: true }));
    parts.push(renderEvent(view(example("UserRejectObservation"), 32), "", { answers: { index: 30 } }));
    parts.push(renderEvent(view(example("AgentErrorEvent"), 33), ""));
    await expect(parts.join("")).toMatchFileSnapshot("__snapshots__/html-events.html");
  });

  it("the essentials of each: text, tool and command, output, condensation, state", () => {
    const user = example("MessageEvent");
    user.source = "user";
    user.llm_message = { role: "user", content: [{ type: "text", text: "Run the tests." }, { type: "image", image_urls: ["data:image/png;base64,AAAA"] }] };
    const html = renderEvent(view(user), "");
    expect(html).toContain('class="ev msg from-user"');
    expect(html).toContain('<div class="bubble">Run the tests.<p class="note">1 image (not shown)</p></div>');
    expect(html).not.toContain("data:image");

    const terminal = renderEvent(view(example("ActionEvent", "TerminalAction")), "");
    expect(terminal).toContain('<span class="tool-name">terminal</span>');
    expect(terminal).toContain('<pre class="cmd">$ pwd &gt; tool_output.txt</pre>');

    const observation = renderEvent(view(example("ObservationEvent", "TerminalObservation")), "", { answers: { index: 2, anchor: "e1-3" } });
    expect(observation).toMatch(/result of <a href="#e1-3">#3<\/a> · exit code 0/);

    const condensation = example("Condensation");
    const condensed = renderEvent(view(condensation), "");
    expect(condensed).toContain(`forgot ${condensation.forgotten_event_ids.length} events`);
    expect(condensed).toContain(condensation.summary);
    expect(condensed).toContain(condensation.forgotten_event_ids[0]);

    const state = renderEvent(view(example("ConversationStateUpdateEvent")), "");
    expect(state).toContain('class="ev line state status-running"');
    expect(state).toContain("state <code>execution_status</code> = <code>running</code>");

    const failure = renderEvent(view(example("ConversationErrorEvent")), "");
    expect(failure).toContain("<code>MaxIterationsReached</code>");
  });

  it("an invalid event, a value that is no event and a line that is not JSON are drawn all the same", () => {
    const broken = { kind: "ActionEvent", action: 5, thought: "x", tool_call: [], llm_message: null };
    for (const value of [broken, { kind: "MessageEvent", llm_message: { content: 7 } }, { kind: "ObservationEvent", observation: [] }, { kind: 42 }, null, 3, "text", [1, 2]]) {
      expect(() => renderEvent(view(value), "")).not.toThrow();
    }
    expect(renderEvent(view(7), "")).toContain("Not an event: <code>7</code>");
    const notJson: EventView = { ...view(undefined), parseError: "Unexpected token } in JSON", rawText: '{"kind": <oops>}' };
    expect(renderEvent(notJson, "")).toContain("Not JSON: Unexpected token } in JSON</p><pre class=\"json\">{&quot;kind&quot;: &lt;oops&gt;}</pre>");
  });

  it("long text is cut, saying how much was left out", () => {
    const message = example("MessageEvent");
    message.llm_message.content = [{ type: "text", text: "a".repeat(20_000) }];
    const html = renderEvent(view(message), "");
    expect(html).toContain("… (12,000 more characters)");
    expect(html.length).toBeLessThan(10_000);
  });
});

describe("issues at their event", () => {
  const issue: ReportedIssue = {
    severity: "error",
    rule: "unknownKind",
    message: 'unknown Action kind "TerminalActon"; did you mean "TerminalAction"?',
    file: "conversation.jsonl",
    line: 3,
    column: 200,
    pointer: "/action/kind",
    index: 2,
    fragment: { text: '…"kind":"TerminalActon"},"tool_name"…', mark: 8, length: 15 },
  };

  it("shows severity, rule, pointer and line, then the text the human format prints", () => {
    const html = renderIssue(issue, "i7");
    expect(html).toBe(
      '<div class="issue error" id="i7"><p class="issue-head"><span class="sev">error</span> · <span class="rule">unknownKind</span> · <code>/action/kind</code> · line 3, column 200</p>' +
        "<pre>conversation.jsonl:3  /action/kind  unknown Action kind &quot;TerminalActon&quot;; did you mean &quot;TerminalAction&quot;?  (unknownKind)\n" +
        "    | …&quot;kind&quot;:&quot;TerminalActon&quot;},&quot;tool_name&quot;…\n" +
        "    |         ^^^^^^^^^^^^^^^\n</pre></div>\n",
    );
  });

  it("are part of their event's article, which is marked by the worst of them", () => {
    const html = renderEvent(view(example("ActionEvent", "TerminalAction"), 2), renderIssue(issue, "i1"), { flag: "error" });
    expect(html).toMatch(/^<article class="ev act has-error" id="e1-3">.*<div class="issue error" id="i1">.*<\/div>\n<\/article>\n$/s);
  });

  it("a left-out run of events says how many and which", () => {
    expect(gapNote({ from: 2000, to: 14_344, events: 12_345, withIssues: 0 })).toBe('<p class="gap">… 12,345 events without errors or warnings omitted (#2,001–#14,345) …</p>\n');
    expect(gapNote({ from: 5, to: 5, events: 1, withIssues: 1 })).toContain("1 event omitted (#6), 1 of them with issues: past the report&#39;s limit of shown events");
  });
});

describe("hostile recordings stay text", () => {
  const hostile = `</style></pre></details><script>window.pwned = 1</script><img src=x onerror="alert(1)"> & 'quotes' \u202eevil\u0007`;

  it("escapeHtml leaves no markup, no quote and no control or bidirectional override character", () => {
    const escaped = escapeHtml(hostile);
    expect(escaped).not.toMatch(/[<>"']/);
    expect(escaped).toContain("&lt;/style&gt;&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;window.pwned = 1&lt;/script&gt;");
    expect(escaped).toContain("&amp; &#39;quotes&#39; ·evil·");
  });

  it("in every field the report shows: message, tool, arguments, output, kind, state, file name, issue", () => {
    const message = example("MessageEvent");
    message.llm_message.content = [{ type: "text", text: hostile }];
    message.source = hostile;
    message.timestamp = hostile;
    const action = example("ActionEvent", "FileEditorAction");
    action.tool_name = hostile;
    action.summary = hostile;
    action.action.path = hostile;
    action.action[hostile] = hostile;
    action.thought = [{ type: "text", text: hostile }];
    const observation = example("ObservationEvent", "TerminalObservation");
    observation.observation.content = [{ type: "text", text: hostile }];
    observation.observation.kind = hostile;
    const state = { kind: "ConversationStateUpdateEvent", key: hostile, value: { [hostile]: hostile } };
    const unknown = { kind: hostile, field: hostile };
    const condensation = { ...example("Condensation"), summary: hostile, forgotten_event_ids: [hostile] };
    const system = { ...example("SystemPromptEvent"), system_prompt: { type: "text", text: hostile }, tools: [{ title: hostile }] };
    const issue: ReportedIssue = { severity: "error", rule: hostile, message: hostile, file: hostile, pointer: `/${hostile}`, line: 1 };
    const html = [message, action, observation, state, unknown, condensation, system].map((e, i) => renderEvent({ ...view(e, i), file: hostile }, renderIssue(issue, "i1"))).join("");
    expect(tags(html).filter((t) => !ALLOWED_TAGS.includes(t))).toEqual([]);
    expect(html).not.toContain("<script");
    expect(html).not.toContain("</style");
    expect(html).not.toContain("<img");
    expect(html).not.toContain("\u202e");
    expect(html).not.toContain("\u0007");
    // Every attribute is the report's own: classes, ids, its own links and a timestamp's title.
    for (const [, name, value] of html.matchAll(/\s([a-z-]+)="([^"]*)"/g)) {
      expect(["class", "id", "href", "title"]).toContain(name);
      if (name === "href") expect(value).toMatch(/^#[a-z0-9-]+$/);
      if (name === "id") expect(value).toMatch(/^[a-z0-9-]+$/);
    }
  });
});

describe("text helpers", () => {
  it("clip never splits a surrogate pair", () => {
    expect(clip("ab😀cd", 3)).toBe("ab… (4 more characters)");
    expect(clip("short", 10)).toBe("short");
  });

  it("previewJson stops walking at its bound, whatever the value's size", () => {
    const big = { items: Array.from({ length: 100_000 }, (_, i) => ({ i, text: "x".repeat(100) })) };
    const preview = previewJson(big, 200);
    expect(preview.length).toBeLessThanOrEqual(201);
    expect(preview.startsWith('{"items":[{"i":0,"text":"xxx')).toBe(true);
    expect(previewJson({ a: [1, null, true, "s"] }, 100)).toBe('{"a":[1,null,true,"s"]}');
  });
});
