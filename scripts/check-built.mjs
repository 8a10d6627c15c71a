#!/usr/bin/env node
// `prepack` of every public package: refuses to pack a package whose entry points are not built
// (a tarball without dist/ would install and fail at its first import). Reads the package.json of
// the current directory: every file named by main, module, types, bin and exports must exist.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const manifest = JSON.parse(readFileSync("package.json", "utf8"));
const targets = new Set();
const collect = (value) => {
  if (typeof value === "string") {
    if (!value.includes("*")) targets.add(value);
  } else if (value && typeof value === "object") {
    for (const inner of Object.values(value)) collect(inner);
  }
};
for (const field of ["main", "module", "types", "bin", "exports"]) collect(manifest[field]);
const missing = [...targets].filter((file) => !existsSync(path.resolve(file))).sort();
if (missing.length) {
  console.error(
    `${manifest.name} is not built: ${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ` and ${missing.length - 3} more` : ""} missing. ` +
      `Run \`pnpm build\` at the repository's root (or \`pnpm --filter ${manifest.name}... build\`) before packing.`,
  );
  process.exit(1);
}
