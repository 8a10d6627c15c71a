/**
 * A clone before its build: commands link without a warning and say what to run, and a package is
 * never packed unbuilt (`prepack` checks that every entry point it names exists).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { publicPackages, repoDir } from "../src/packages.js";

const check = path.join(repoDir, "scripts", "check-built.mjs");
let dir: string | undefined;
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

describe("prepack", () => {
  it.each(publicPackages().map((pkg) => [pkg.name, pkg.dir]))("%s checks it is built before it is packed", (_, pkgDir) => {
    const manifest = JSON.parse(readFileSync(path.join(pkgDir, "package.json"), "utf8"));
    expect(manifest.scripts.prepack).toBe("node ../../scripts/check-built.mjs");
    expect(spawnSync(process.execPath, [check], { cwd: pkgDir, encoding: "utf8" }).status).toBe(0);
  });

  it("refuses a package whose entry points are missing, naming them and what to run", () => {
    dir = mkdtempSync(path.join(tmpdir(), "acs-prepack-"));
    const manifest = {
      name: "@acs-toolkit/example",
      main: "./dist/index.cjs",
      bin: { example: "./dist/cli.js" },
      exports: { ".": { import: { types: "./dist/index.d.ts", default: "./dist/index.js" } }, "./schemas/*": "./schemas/*" },
    };
    writeFileSync(path.join(dir, "package.json"), JSON.stringify(manifest));
    const refused = spawnSync(process.execPath, [check], { cwd: dir, encoding: "utf8" });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      "@acs-toolkit/example is not built: ./dist/cli.js, ./dist/index.cjs, ./dist/index.d.ts and 1 more missing. " +
        "Run `pnpm build` at the repository's root (or `pnpm --filter @acs-toolkit/example... build`) before packing.\n",
    );
    mkdirSync(path.join(dir, "dist"));
    for (const file of ["index.cjs", "cli.js", "index.d.ts", "index.js"]) writeFileSync(path.join(dir, "dist", file), "");
    expect(spawnSync(process.execPath, [check], { cwd: dir, encoding: "utf8" }).status).toBe(0);
  });
});

describe("commands before the build", () => {
  const bins = publicPackages().flatMap((pkg) => Object.entries(pkg.bin).map(([name, target]) => [name, pkg.dir, target] as const));
  const tracked = new Set(execFileSync("git", ["ls-files"], { cwd: repoDir, encoding: "utf8" }).split("\n"));

  it.each(bins)("%s is a committed launcher, so pnpm links it before anything is built", (_, pkgDir, target) => {
    expect(target).not.toMatch(/dist\//);
    expect(tracked.has(path.relative(repoDir, path.join(pkgDir, target)))).toBe(true);
  });

  it.each(bins)("%s says what to run when its program is not built", (name, pkgDir, target) => {
    dir = mkdtempSync(path.join(tmpdir(), "acs-unbuilt-"));
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
    mkdirSync(path.join(dir, "bin"));
    copyFileSync(path.join(pkgDir, target), path.join(dir, target));
    const ran = spawnSync(process.execPath, [path.join(dir, target), "--version"], { encoding: "utf8" });
    expect({ status: ran.status, stderr: ran.stderr }).toEqual({ status: 1, stderr: `${name} is not built: run \`pnpm build\` at the repository's root.\n` });
  });
});
