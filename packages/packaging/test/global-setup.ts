/**
 * Packs every public package once for all test files (turbo has built them: they are this
 * package's devDependencies), into a temporary folder handed to the tests as `tarballs`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { pack, publicPackages } from "../src/packages.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** package name → packed tarball path */
    tarballs: Record<string, string>;
  }
}

export default function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(tmpdir(), "acs-tarballs-"));
  const tarballs = Object.fromEntries(publicPackages().map((pkg) => [pkg.name, pack(pkg, dir)]));
  project.provide("tarballs", tarballs);
  return () => rmSync(dir, { recursive: true, force: true });
}
