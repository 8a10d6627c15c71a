#!/usr/bin/env node
/**
 * After `changeset version`: the validate-events action and the READMEs that pin it follow the
 * version just set (the packages are versioned together). The action's default validator version
 * and every `validate-events@vX.Y.Z` / `@acs-toolkit/validator@X.Y.Z` pin in the listed files become
 * the validator's version. Run by `pnpm version-packages`; tests check that they agree.
 */
import { readFileSync, writeFileSync } from "node:fs";

const root = new URL("../", import.meta.url);
const { version } = JSON.parse(readFileSync(new URL("packages/validator/package.json", root), "utf8"));
const files = [".github/actions/validate-events/action.yml", "packages/validator/README.md", "examples/ci-recipe/validate-recordings.yml", "examples/ci-recipe/README.md"];

for (const file of files) {
  const url = new URL(file, root);
  const before = readFileSync(url, "utf8");
  const after = before
    .replace(/(^ {2}version:\n(?: {4}.*\n)*? {4}default: )"[^"]*"/m, `$1"${version}"`)
    .replace(/validate-events@v\d+\.\d+\.\d+[\w.-]*/g, `validate-events@v${version}`)
    .replace(/@acs-toolkit\/validator@\d+\.\d+\.\d+[\w.-]*/g, `@acs-toolkit/validator@${version}`)
    .replace(/the tag's release \(`[^`]*`\)/g, `the tag's release (\`${version}\`)`);
  if (after !== before) {
    writeFileSync(url, after);
    console.log(`${file}: pinned to ${version}`);
  }
}
