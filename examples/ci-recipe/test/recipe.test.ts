/**
 * The workflow as a user copies it: pinned to this release (the action's tag and the validator
 * version), and its inputs, given to acs-validate, pass the example recordings.
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
const { version } = JSON.parse(readFileSync(path.join(validatorDir, "package.json"), "utf8")) as { version: string };
const steps = workflow.jobs.validate.steps;
const action = steps.find((step) => step.uses?.includes("/.github/actions/validate-events@"))!;

describe("examples/ci-recipe/validate-recordings.yml", () => {
  it("pins the action to this release's tag and the validator to this release", () => {
    expect(action.uses).toBe(`acs-toolkit/acs-toolkit/.github/actions/validate-events@v${version}`);
    const pins = steps.flatMap((step) => [...(step.run ?? "").matchAll(/@acs-toolkit\/validator(@[\w.-]+)?/g)].map((m) => m[1]));
    expect(pins).toEqual([`@${version}`]);
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
