/**
 * What the HTML report shows of a long recording (src/cli/html/window.ts) and where it keeps the
 * page's body meanwhile (src/cli/html/spool.ts).
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { Output } from "../src/cli/output.js";
import { Spool } from "../src/cli/html/spool.js";
import { EventWindow, type WindowBounds } from "../src/cli/html/window.js";

/** Runs `count` items through a window; `flagged` says which have an issue. Returns the decisions as text. */
function decide(bounds: WindowBounds, count: number, flagged: (i: number) => boolean, budget = { shown: 0 }) {
  const shown: number[] = [];
  const omitted: number[] = [];
  const order: number[] = [];
  const window = new EventWindow<number>(bounds, { show: (i) => (shown.push(i), order.push(i)), omit: (i) => (omitted.push(i), order.push(i)) }, budget);
  for (let i = 0; i < count; i++) window.push(i, flagged(i));
  window.end();
  return { shown, omitted, order };
}

describe("EventWindow", () => {
  const bounds: WindowBounds = { head: 5, context: 2, maxShown: 1_000 };

  it("a short recording is shown whole", () => {
    expect(decide(bounds, 7, () => false).omitted).toEqual([]);
  });

  it("past the head: each flagged item with its neighbours, and the last items", () => {
    const { shown, omitted, order } = decide(bounds, 40, (i) => i === 20 || i === 22 || i === 30);
    expect(shown).toEqual([0, 1, 2, 3, 4, 18, 19, 20, 21, 22, 23, 24, 28, 29, 30, 31, 32, 38, 39]);
    expect(omitted.length + shown.length).toBe(40);
    // Every item is decided once, in order.
    expect(order).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it("a flagged item in the head, or next to it, is shown once", () => {
    const { shown, order } = decide(bounds, 12, (i) => i === 4 || i === 6);
    expect(shown).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11]);
    expect(order).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it("past the report's limit nothing more is shown, flagged or not, and the budget is shared", () => {
    const budget = { shown: 0 };
    const first = decide({ head: 3, context: 1, maxShown: 6 }, 20, (i) => i === 10, budget);
    expect(first.shown).toEqual([0, 1, 2, 9, 10, 11]);
    const second = decide({ head: 3, context: 1, maxShown: 6 }, 5, () => true, budget);
    expect(second.shown).toEqual([]);
    expect(second.omitted).toEqual([0, 1, 2, 3, 4]);
  });

  it("a note is shown where it came, with the items before and after it, taking nothing of the budget", () => {
    const shown: string[] = [];
    const budget = { shown: 0 };
    const window = new EventWindow<string>({ head: 1, context: 1, maxShown: 4 }, { show: (i) => shown.push(i), omit: () => {} }, budget);
    for (const item of ["a", "b", "c"]) window.push(item, false);
    window.note("note");
    for (const item of ["d", "e", "f"]) window.push(item, false);
    window.end();
    expect(shown).toEqual(["a", "c", "note", "d", "f"]);
    expect(budget.shown).toBe(4);
  });

  it("100,000 items hold at most `context` undecided at a time", () => {
    let undecided = 0;
    let most = 0;
    const window = new EventWindow<number>(
      { head: 10, context: 3, maxShown: 100_000 },
      { show: () => undecided--, omit: () => undecided-- },
    );
    for (let i = 0; i < 100_000; i++) {
      undecided++;
      window.push(i, i % 10_000 === 5_000);
      most = Math.max(most, undecided);
    }
    window.end();
    expect(undecided).toBe(0);
    expect(most).toBeLessThanOrEqual(4);
    // The head, each of the 10 flagged items with 3 on each side, and the tail.
    expect(decide({ head: 10, context: 3, maxShown: 100_000 }, 100_000, (i) => i % 10_000 === 5_000).shown.length).toBe(10 + 10 * 7 + 3);
  });
});

function sink() {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  return { output: new Output(stream), text: () => text };
}

describe("Spool", () => {
  const parts = Array.from({ length: 2_000 }, (_, i) => `<p>${i} ünïcödé 😀 ${"x".repeat(i % 50)}</p>\n`);

  it("gives back what was written, in order, from memory", async () => {
    const spool = new Spool();
    for (const part of parts) spool.write(part);
    expect(spool.onDisk).toBe(false);
    const { output, text } = sink();
    await spool.copyTo(output);
    await output.end();
    spool.dispose();
    expect(text()).toBe(parts.join(""));
  });

  it("past its memory bound, from a temporary file, multibyte characters intact across reads", async () => {
    const spool = new Spool(1_000);
    for (const part of parts) spool.write(part);
    expect(spool.onDisk).toBe(true);
    const { output, text } = sink();
    await spool.copyTo(output);
    await output.end();
    spool.dispose();
    expect(text()).toBe(parts.join(""));
  });
});
