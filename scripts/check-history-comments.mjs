#!/usr/bin/env node
/**
 * Keeps tracker references out of code and docs (part of `pnpm lint`): a comment says why, and an
 * issue or finding number only points at a tracker the reader may not have; history belongs in
 * git. Changelogs, changesets and fixtures are exempt. Prints `path:line: text` for each match
 * and exits 1; prints nothing and exits 0 when there is none.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pattern = /\b[Ii]ssues? \d+|\bfindings? \d+/;
const scanned = /\.(ts|mjs|js|md)$/;
const exempt = /(^|\/)CHANGELOG\.md$|^\.changeset\/|(^|\/)fixtures\//;

const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8", maxBuffer: 64 << 20 })
  .split("\0")
  .filter((file) => scanned.test(file) && !exempt.test(file));

const hits = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(path.join(root, file), "utf8");
  } catch (error) {
    if (error.code === "ENOENT") continue; // tracked but deleted in the working tree
    throw error;
  }
  text.split("\n").forEach((line, i) => {
    if (pattern.test(line)) hits.push(`${file}:${i + 1}: ${line.trim()}`);
  });
}

if (hits.length > 0) {
  process.stdout.write(`${hits.join("\n")}\n`);
  process.exit(1);
}
