#!/usr/bin/env node
/**
 * After `changeset version`: every `@acs-toolkit/validator@X.Y.Z` pin in the listed docs follows the
 * version just set (the packages are versioned together). The validate-events action pins nothing:
 * it runs the validator bundled at its ref. Run by `pnpm version-packages`; tests check that they agree.
 */
import { readFileSync, writeFileSync } from "node:fs";

const root = new URL("../", import.meta.url);
const { version } = JSON.parse(readFileSync(new URL("packages/validator/package.json", root), "utf8"));
const files = ["packages/validator/README.md", "examples/ci-recipe/validate-recordings.yml", "examples/ci-recipe/README.md"];

for (const file of files) {
  const url = new URL(file, root);
  const before = readFileSync(url, "utf8");
  const after = before.replace(/@acs-toolkit\/validator@\d+\.\d+\.\d+[\w.-]*/g, `@acs-toolkit/validator@${version}`);
  if (after !== before) {
    writeFileSync(url, after);
    console.log(`${file}: pinned to ${version}`);
  }
}
