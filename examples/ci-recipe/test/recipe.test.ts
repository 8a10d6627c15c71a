/**
 * The workflow as a user copies it: the action named by placeholders the user fills in, nothing
 * fetched from the npm registry, and its inputs, given to acs-validate, pass the example recordings.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const workflow = parse(readFileSync(path.join(root, "validate-recordings.yml"), "utf8")) as {
  jobs: { validate: { steps: Array<{ uses?: string; run?: string; with?: Record<string, string> }> } };
};
const validatorDir = path.resolve(root, "../../packages/validator");
const steps = workflow.jobs.validate.steps;
const action = steps.find((step) => step.uses?.includes("/.github/actions/validate-events@"))!;

describe("examples/ci-recipe/validate-recordings.yml", () => {
  it("names the action by placeholders and fetches nothing from the npm registry", () => {
    expect(action.uses).toBe("<owner>/<repo>/.github/actions/validate-events@<ref>");
    expect(steps.filter((step) => /npx|npm install|@acs-toolkit\/validator@/.test(step.run ?? ""))).toEqual([]);
    expect(action.with!["html-report"]).toBe("acs-validate-report/report.html");
    const upload = steps.find((step) => step.uses?.startsWith("actions/upload-artifact@"));
    expect(upload?.with?.path).toBe("acs-validate-report/");
  });

  it("its inputs pass the example recordings (acs-validate, as the action runs it)", () => {
    const paths = action.with!.path!.split("\n").map((line) => line.trim()).filter(Boolean);
    const args = ["--format", "github", "--no-progress", "--unknown-kinds", action.with!["unknown-kinds"]!, "--", ...paths];
    const result = spawnSync(process.execPath, [path.join(validatorDir, "dist/cli.js"), ...args], { cwd: root, encoding: "utf8" });
    expect(result.stderr).toBe("");
    expect(result.status, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/inputs {4}2\b/);
  });
});
