#!/usr/bin/env node
// Committed, so that a fresh clone's `pnpm install` links the command before the build: the program is dist/cli.js.
import { existsSync } from "node:fs";
const program = new URL("../dist/cli.js", import.meta.url);
if (existsSync(program)) {
  await import(program.href);
} else {
  console.error("acs-validate is not built: run `pnpm build` at the repository's root.");
  process.exitCode = 1;
}
