/** `pnpm --filter @acs-toolkit/conformance readme`: rewrites the README's check list from the check table. */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CHECKS } from "../src/checks/index.js";
import { replaceCheckList } from "../src/readme.js";

const file = fileURLToPath(new URL("../README.md", import.meta.url));
writeFileSync(file, replaceCheckList(readFileSync(file, "utf8"), CHECKS));
console.log(`README.md: ${CHECKS.length} checks`);
