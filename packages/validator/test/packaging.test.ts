/** The compiled validators: no runtime dependency, no code generation at run time (strict CSP). */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

describe("compiled validators", () => {
  it.each(["src/generated/validators-fast.js", "src/generated/validators-full.js"])("%s needs nothing at run time", (file) => {
    const code = read(file);
    expect(code).not.toMatch(/\brequire\(/);
    expect(code).not.toMatch(/^\s*import /m);
    expect(code).not.toMatch(/new Function|\beval\(/);
  });

  it("the built entries import nothing but @acs-toolkit/schema types", () => {
    for (const file of ["dist/index.js", "dist/index.cjs"]) {
      const code = read(file);
      expect(code).not.toMatch(/from\s+["'](?!\.)/);
      expect(code).not.toMatch(/require\(["'](?!\.)/);
      expect(code).not.toMatch(/new Function|\beval\(/);
    }
  });
});
