/**
 * Each packed tarball as the registry would get it: publint and @arethetypeswrong/cli find no
 * problem (every resolution mode: node10, node16 CJS and ESM, bundler), it carries its LICENSE,
 * README and CHANGELOG, no source map of generated code, and stays within its size budget.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { describe, expect, inject, it } from "vitest";
import { UNPACKED_BUDGETS } from "../src/budgets.js";
import { publicPackages, repoDir, tarballFiles } from "../src/packages.js";

const run = promisify(execFile);
const attw = path.join(path.dirname(new URL(import.meta.url).pathname), "../node_modules/.bin/attw");
const packages = publicPackages();

// Concurrent: attw takes seconds per package, mostly waiting on its own TypeScript program.
describe.concurrent.each(packages.map((pkg) => [pkg.name, pkg] as const))("%s", (name, pkg) => {
  const tarball = () => inject("tarballs")[name]!;

  it("publint: no error, warning or suggestion", async () => {
    const buffer = readFileSync(tarball());
    const { messages, pkg: manifest } = await publint({ pack: { tarball: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer }, level: "suggestion", strict: true });
    expect(messages.map((message) => `${message.type}: ${formatMessage(message, manifest, { color: false }) ?? message.code}`)).toEqual([]);
  });

  it("@arethetypeswrong/cli: no problem in any resolution mode", async () => {
    const { stdout } = await run(attw, [tarball(), "--format", "json"], { maxBuffer: 64 * 1024 * 1024 }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
    const result = JSON.parse(stdout) as { problems?: Record<string, unknown>; analysis: { entrypoints: Record<string, { resolutions: Record<string, { resolution?: { fileName?: string } }> }> } };
    expect(result.problems ?? {}).toEqual({});
    // Every entry point resolves in every mode (node10 through typesVersions for subpaths).
    for (const [entry, { resolutions }] of Object.entries(result.analysis.entrypoints)) {
      if (entry === "./package.json" || entry.endsWith(".json")) continue;
      for (const mode of ["node10", "node16-cjs", "node16-esm", "bundler"]) expect(resolutions[mode]?.resolution?.fileName, `${entry} under ${mode}`).toBeDefined();
    }
  });

  it("carries LICENSE (the repository's), README.md and CHANGELOG.md; no map of generated code; publishes publicly with provenance", () => {
    const files = tarballFiles(tarball()).map((entry) => entry.file);
    expect(files).toEqual(expect.arrayContaining(["LICENSE", "README.md", "CHANGELOG.md", "package.json"]));
    expect(readFileSync(path.join(pkg.dir, "LICENSE"), "utf8")).toBe(readFileSync(path.join(repoDir, "LICENSE"), "utf8"));
    expect(files.filter((file) => /(validators-|documents|generated|docs\/swagger).*\.map$/.test(file))).toEqual([]);
    const manifest = JSON.parse(readFileSync(path.join(pkg.dir, "package.json"), "utf8"));
    expect(manifest).toMatchObject({
      license: "MIT",
      publishConfig: { access: "public", provenance: true },
      engines: { node: ">=20.19" },
      repository: { type: "git", directory: `packages/${pkg.short}` },
      bugs: { url: expect.stringMatching(/^https:\/\//) },
      homepage: expect.stringMatching(/^https:\/\//),
      keywords: expect.arrayContaining(["agent-conversation-service"]),
    });
    expect(manifest.repository.url).toBe(JSON.parse(readFileSync(path.join(repoDir, "package.json"), "utf8")).repository.url);
  });

  it(`unpacks within its budget`, () => {
    const unpacked = tarballFiles(tarball()).reduce((sum, entry) => sum + entry.size, 0);
    console.log(`${name}: ${unpacked} bytes unpacked (budget ${UNPACKED_BUDGETS[name]})`);
    expect(UNPACKED_BUDGETS[name], "a budget for every public package").toBeDefined();
    expect(unpacked).toBeLessThanOrEqual(UNPACKED_BUDGETS[name]!);
  });
});
