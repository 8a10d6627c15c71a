import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { actionInputs, runCli } from "./cli-support.js";

const here = path.dirname(fileURLToPath(import.meta.url));

describe("README", () => {
  it("shows test/readme-example.ts as its example", () => {
    const readme = readFileSync(path.join(here, "../README.md"), "utf8");
    const block = /## Use\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(readFileSync(path.join(here, "readme-example.ts"), "utf8"));
  });

  it("the example runs and prints what its comments say", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const { result, trajectory, fragment } = await import("./readme-example.js");
    expect(log.mock.calls).toEqual([
      [false],
      [["/action/index: must be >= 0, got -1"]],
      [true],
      [['/kind: unknown Event kind "InterruptEvent" in the interface profile: it came with OpenHands 1.23.0 and is not in the interface 0.1.0 catalogue']],
      ['line 2: /id: must be a UUID or ULID, got "not-an-id"'],
      [true, ["sequence/system-prompt-not-first", "sequence/reference-outside-fragment"]],
    ]);
    expect(result.ok).toBe(false);
    expect(trajectory.count).toBe(2);
    expect(fragment.errors).toEqual([]);
    log.mockRestore();
  });
});

describe("README: acs-validate and the GitHub Action", () => {
  const readme = readFileSync(path.join(here, "../README.md"), "utf8");
  const actionFile = path.join(here, "../../../.github/actions/validate-events/action.yml");

  it("the example run prints what the README shows, with its exit code", async () => {
    const block = /```console\n\$ acs-validate conversation\.jsonl\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const result = await runCli(["conversation.jsonl"], { cwd: path.join(here, "fixtures/readme") });
    expect(result.stdout).toBe(block);
    expect(result.code).toBe(1);
    expect(block).toContain("(exit code 1)");
  });

  it("documents every exit code and option that --help lists", async () => {
    const help = (await runCli(["--help"])).stdout;
    for (const option of help.match(/--[a-z-]+/g) ?? []) {
      if (option === "--help" || option === "--version") continue;
      expect(readme, option).toContain(option);
    }
    for (const code of [0, 1, 2]) expect(readme).toMatch(new RegExp(`^\\| ${code} \\| `, "m"));
  });

  it("the workflow example uses the action from its repository, with inputs it declares", () => {
    const workflow = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    // A placeholder the user fills in, never a stand-in that looks like a real repository or tag.
    expect(workflow).toContain("uses: <owner>/<repo>/.github/actions/validate-events@<ref>\n");
    expect(existsSync(actionFile)).toBe(true);
    const declared = actionInputs(readFileSync(actionFile, "utf8"));
    const used = [...(/validate-events@\S+\n {8}with:\n((?: {10}.*\n)+)/.exec(workflow)?.[1] ?? "").matchAll(/^ {10}([\w-]+):/gm)].map((m) => m[1]);
    expect(used).toEqual(["path", "unknown-kinds", "html-report"]);
    for (const name of used) expect(declared).toContain(name);
    // Nothing in the copy-paste workflow reaches for the npm registry.
    expect(workflow).not.toMatch(/npx|npm install|@acs-toolkit\/validator@/);
  });

  it("the action's inputs table lists exactly what action.yml declares", () => {
    const table = readme.slice(readme.indexOf("## GitHub Action"), readme.indexOf("## API"));
    const documented = [...table.matchAll(/^\| `([\w-]+)` \|/gm)].map((m) => m[1]);
    expect(documented).toEqual(actionInputs(readFileSync(actionFile, "utf8")));
  });
});
