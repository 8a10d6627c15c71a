/** The compiled validators and the built package: no runtime dependency, each artifact shipped once. */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const distJs = () => readdirSync(path.join(root, "dist")).filter((file) => /\.c?js$/.test(file));

describe("compiled validators", () => {
  it.each(["generated/validators-fast.js", "generated/validators-full.js"])("%s needs nothing at run time", (file) => {
    const code = read(file);
    expect(code).not.toMatch(/\brequire\(/);
    expect(code).not.toMatch(/^\s*import /m);
    expect(code).not.toMatch(/new Function|\beval\(/);
  });

  it("the library's built files import nothing by name (only their own files beside them)", () => {
    for (const file of distJs().filter((f) => f !== "cli.js")) {
      const code = read(`dist/${file}`);
      expect(code, file).not.toMatch(/from\s+["'](?!\.)/);
      expect(code, file).not.toMatch(/require\(["'](?!\.)/);
      expect(code, file).not.toMatch(/new Function|\beval\(/);
    }
  });

  it("each compiled validator is shipped once, as generated and without a source map; the CommonJS entry is the ES module", () => {
    // A function the AJV code defines once per variant marks where a copy of it lives.
    const copies = distJs().filter((file) => read(`dist/${file}`).includes("function ucs2length("));
    expect(copies.sort()).toEqual(["validators-fast.js", "validators-full.js"]);
    for (const file of copies) expect(read(`dist/${file}`)).toBe(read(`generated/${file}`));
    expect(readdirSync(path.join(root, "dist")).filter((file) => file.startsWith("validators-") && file.endsWith(".map"))).toEqual([]);
    expect(read("dist/index.cjs")).toMatch(/module\.exports = require\("\.\/index\.js"\)/);
  });
});
