/**
 * The HTML report of the built command in headless Chromium, opened from its file as a person
 * opens it: nothing loads or runs (no request but the file, no console error, no script), every
 * error is visible at its event, the summary's links land on them, and a report of 100,000 events
 * opens (its load time is logged as a figure, not asserted: see bench/html-report.bench.ts).
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonl, packageDir, tempDir, trajectory, writeFiles } from "./cli-support.js";
import { writeLongRecording } from "./long-recording.js";

const cli = path.join(packageDir, "dist/cli.js");

/** Runs the built command with `--format html`, its standard output into `file`; resolves to its exit code. */
function writeReport(args: string[], cwd: string, file: string): Promise<number> {
  const fd = openSync(file, "w");
  const child = spawn(process.execPath, [cli, ...args, "--format", "html"], { cwd, stdio: ["ignore", fd, "inherit"] });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      closeSync(fd);
      resolve(code ?? -1);
    });
  });
}

interface Opened {
  page: Page;
  /** Console errors and warnings, uncaught exceptions. */
  problems: string[];
  /** Every request the page made (its own file is the only one allowed). */
  requests: string[];
  milliseconds: number;
}

let browser: Browser;

async function open(file: string): Promise<Opened> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("request", (request) => requests.push(request.url()));
  const started = performance.now();
  await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
  return { page, problems, requests, milliseconds: performance.now() - started };
}

/** Whether the element is on screen now (its top may sit a fraction of a pixel above it). */
const onScreen = (page: Page, selector: string) =>
  page.evaluate((s) => {
    const rect = document.querySelector(s)!.getBoundingClientRect();
    return rect.height > 0 && rect.top > -2 && rect.top < window.innerHeight;
  }, selector);

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
});

afterAll(async () => {
  await browser?.close();
});

describe("the HTML report in Chromium", () => {
  it("a failing recording with hostile content: nothing loads or runs, every error is visible at its event, the summary's links land", async () => {
    const directory = tempDir();
    const events = trajectory();
    events[1]!.llm_message.content = [{ type: "text", text: "</style><script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\">" }];
    events[2]!.action.kind = "TerminalActon";
    events[3]!.action_id = "00000000-0000-4000-8000-0000000000aa";
    delete events[6]!.llm_response_id;
    events[6]!.source = "user";
    writeFiles(directory, { "bad.jsonl": jsonl(events), "good.jsonl": jsonl(trajectory()) });
    const file = path.join(directory, "report.html");
    expect(await writeReport(["bad.jsonl", "good.jsonl", "missing.jsonl"], directory, file)).toBe(2);

    const { page, problems, requests } = await open(file);
    expect(problems).toEqual([]);
    expect(requests).toEqual([pathToFileURL(file).href]);
    expect(await page.evaluate(() => ({ scripts: document.scripts.length, images: document.images.length, pwned: (window as unknown as { pwned?: number }).pwned }))).toEqual({ scripts: 0, images: 0, pwned: undefined });
    expect(await page.locator(".bubble", { hasText: "</style><script>window.pwned = 1</script>" }).isVisible()).toBe(true);

    // The events' errors and the missing input's, each shown in its event or its input's section.
    const errors = page.locator("main .issue.error");
    expect(await errors.count()).toBe(3);
    for (let i = 0; i < 3; i++) {
      const error = errors.nth(i);
      await error.scrollIntoViewIfNeeded();
      expect(await error.isVisible()).toBe(true);
      expect(await error.evaluate((e) => e.closest("article, section")?.tagName)).toMatch(/ARTICLE|SECTION/);
    }
    expect(await page.locator("main article.has-error").count()).toBe(2);

    // From the summary to each error.
    const links = await page.locator("header ol.index a").evaluateAll((as) => as.map((a) => a.getAttribute("href")!));
    expect(links).toHaveLength(3);
    for (const href of links) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.click(`header ol.index a[href="${href}"]`);
      expect(await page.evaluate(() => location.hash)).toBe(href);
      expect(await onScreen(page, href)).toBe(true);
    }
    await page.close();
  });

  it("100,000 events: the report opens with each error visible and the omissions said; its load time is logged", async () => {
    const directory = tempDir();
    const recording = path.join(directory, "long.jsonl");
    const errors = writeLongRecording(recording, 100_000, 250);
    const file = path.join(directory, "report.html");
    expect(await writeReport([recording], directory, file)).toBe(1);

    const { page, problems, milliseconds } = await open(file);
    const loaded = await page.evaluate(() => {
      const navigation = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
      return { loadEventEnd: navigation.loadEventEnd, events: document.querySelectorAll("main article").length, gaps: document.querySelectorAll("main .gap").length };
    });
    console.log(
      `html report, 100k events: ${(statSync(file).size / 1e6).toFixed(1)} MB, ${loaded.events} events shown, loaded in ${Math.round(milliseconds)} ms (navigation loadEventEnd ${Math.round(loaded.loadEventEnd)} ms)`,
    );
    expect(problems).toEqual([]);
    expect(await page.locator("main .issue.error").count()).toBe(errors);
    expect(loaded.gaps).toBeGreaterThan(0);
    const last = page.locator("main .issue.error").last();
    await last.scrollIntoViewIfNeeded();
    expect(await last.isVisible()).toBe(true);
    const gap = page.locator("main .gap").first();
    await gap.scrollIntoViewIfNeeded();
    expect(await gap.textContent()).toMatch(/^… [\d,]+ events without errors or warnings omitted \(#[\d,]+–#[\d,]+\) …$/);
    await page.close();
  });
});
