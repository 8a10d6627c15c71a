/**
 * Build step (after tsup): CommonJS entries for an ES-module package without a second copy of its
 * code. For each entry it writes `dist/<entry>.cjs`, which `require()`s the ES module (Node loads
 * ES modules from `require` since 20.19, the floor of every package's `engines`), and derives CommonJS
 * declarations from tsup's ES ones (`*.d.ts` → `*.d.cts`, relative specifiers `.js` → `.cjs`), so that
 * a CommonJS consumer type-checks under node16 / nodenext (no TS1479) and gets the very same classes
 * at run time as an ES consumer (no dual-package hazard).
 *
 * Usage: `tsx ../../tools/src/build/cjs-entries.ts <entry>…` from a package (entries are file names
 * in dist/ without extension, for example `index msw`).
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** A declaration file's relative `.js` specifiers (import, export, `import("…")`) pointed at `.cjs`. */
export function toCommonJsDeclaration(text: string): string {
  return text.replace(/((?:from\s+|import\s*\(\s*|import\s+)["'])(\.{1,2}\/[^"']+?)\.js(["'])/g, "$1$2.cjs$3");
}

/** The CommonJS entry of an ES-module entry. */
export function commonJsWrapper(entry: string): string {
  return `"use strict";\n// CommonJS entry: the ES module itself (require() of ES modules, Node >= 20.19), one copy of the code.\nmodule.exports = require("./${entry}.js");\n`;
}

export function writeCommonJsEntries(dist: string, entries: readonly string[]): void {
  for (const entry of entries) writeFileSync(path.join(dist, `${entry}.cjs`), commonJsWrapper(entry));
  for (const file of readdirSync(dist)) {
    if (!file.endsWith(".d.ts")) continue;
    const declaration = readFileSync(path.join(dist, file), "utf8");
    writeFileSync(path.join(dist, file.replace(/\.d\.ts$/, ".d.cts")), toCommonJsDeclaration(declaration));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const entries = process.argv.slice(2);
  if (entries.length === 0) {
    console.error("usage: cjs-entries <entry>… (file names in dist/ without extension)");
    process.exit(2);
  }
  writeCommonJsEntries(path.resolve("dist"), entries);
}
