/**
 * The published package (dist/, built by turbo before the tests): the exports map resolves for Node
 * (ESM and CJS), bundlers and browsers; nothing Node-only reaches the browser entry; the browser
 * entry keeps its size budget. (@arethetypeswrong/cli and publint run over every packed package in
 * packages/packaging.)
 */
import { execFile } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { BUDGET_BYTES, measureBrowserEntry } from "../scripts/size.js";

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

/** Node, run inside the package so that its own name resolves through the exports map. */
async function node(args: string[], code: string): Promise<string> {
  const { stdout } = await run(process.execPath, [...args, "-e", code], { cwd: root });
  return stdout.trim();
}

/** Which dist file a bundler targeting `platform` picks for the package name. */
async function bundledEntry(platform: "browser" | "node" | "neutral"): Promise<string[]> {
  const result = await build({
    stdin: { contents: 'export { createClient } from "@acs-toolkit/client";', resolveDir: root, loader: "js" },
    bundle: true,
    format: "esm",
    platform,
    write: false,
    metafile: true,
    logLevel: "silent",
    tsconfigRaw: "{}",
    ...(platform === "neutral" ? { mainFields: ["module", "main"] } : {}),
    external: ["@acs-toolkit/validator", "openapi-fetch", "node:*"],
  });
  return Object.keys(result.metafile.inputs).filter((input) => input.startsWith("dist/"));
}

describe("exports map", () => {
  it("Node picks the Node entry, for import and for require", async () => {
    expect(await node(["--input-type=module"], 'console.log(import.meta.resolve("@acs-toolkit/client"))')).toMatch(/\/dist\/node\.js$/);
    expect(await node([], 'console.log(require.resolve("@acs-toolkit/client"))')).toMatch(/\/dist\/node\.cjs$/);
    expect(await node(["--conditions=browser", "--input-type=module"], 'console.log(import.meta.resolve("@acs-toolkit/client"))')).toMatch(/\/dist\/index\.js$/);
    expect(await node(["--input-type=module"], 'console.log(import.meta.resolve("@acs-toolkit/client/browser"))')).toMatch(/\/dist\/index\.js$/);
  });

  it("bundlers pick the browser entry for browsers and the Node entry for Node", async () => {
    expect(await bundledEntry("browser")).toEqual([expect.stringMatching(/^dist\/chunk-/), "dist/index.js"]);
    expect(await bundledEntry("neutral")).toEqual([expect.stringMatching(/^dist\/chunk-/), "dist/index.js"]);
    expect(await bundledEntry("node")).toEqual([expect.stringMatching(/^dist\/chunk-/), "dist/node.js"]);
  });

  it("the ESM and the CJS builds work in Node, validator loaded on demand", async () => {
    // A page with one event missing its timestamp, served by a fetch stub: no server needed.
    const script = (load: string) => `
      ${load}
      const page = { items: [{ id: "5df490d1-98e8-4dea-9ae7-7f36c59f8ed5", source: "user", kind: "PauseEvent" }], next_page_id: null };
      const client = createClient({ baseUrl: "http://127.0.0.1:9", apiKey: "k", validate: true, fetch: async () => Response.json(page) });
      client.searchEvents("5df490d1-98e8-4dea-9ae7-7f36c59f8ed5").then(
        () => console.log("accepted"),
        (error) => console.log(error instanceof InvalidEventError, error.pointer, error.issues[0].rule),
      );`;
    const esm = await node(["--input-type=module"], script('import { createClient, InvalidEventError } from "@acs-toolkit/client";'));
    const cjs = await node([], script('const { createClient, InvalidEventError } = require("@acs-toolkit/client");'));
    expect(esm).toBe("true /timestamp required");
    expect(cjs).toBe("true /timestamp required");
  });
});

describe("the browser entry", () => {
  it("imports nothing Node-only, directly or through its dependencies", async () => {
    const report = await measureBrowserEntry();
    expect(report.inputs.filter((input) => builtins.has(input) || input.startsWith("node:"))).toEqual([]);
    expect(report.inputs.some((input) => input.endsWith("dist/node.js"))).toBe(false);
    for (const file of ["dist/index.js", "dist/index.cjs", ...readdirSync(path.join(root, "dist")).filter((f) => /^chunk-.*\.js$/.test(f)).map((f) => `dist/${f}`)]) {
      const code = read(file);
      const specifiers = [...code.matchAll(/(?:from\s*|import\(\s*|require\(\s*)["']([^"']+)["']/g)].map((match) => match[1]!);
      expect(specifiers.filter((specifier) => builtins.has(specifier)), file).toEqual([]);
    }
    // The Node entry is where node: imports live.
    expect(read("dist/node.js")).toMatch(/from "node:fs"/);
  });

  it(`stays within its size budget (min+gzip, validator excluded) of ${BUDGET_BYTES / 1024} kB`, async () => {
    const report = await measureBrowserEntry();
    console.log(`browser entry: ${report.minified} bytes minified, ${report.gzipped} bytes min+gzip (budget ${BUDGET_BYTES})`);
    expect(report.inputs.some((input) => input.includes("openapi-fetch"))).toBe(true);
    expect(report.code.includes('import("@acs-toolkit/validator")')).toBe(true);
    expect(report.gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it("the standalone bundle (dist/browser/) is one file that imports only the optional validator, by name", () => {
    expect(readdirSync(path.join(root, "dist/browser")).sort()).toEqual(["acs-client.js", "acs-client.js.map"]);
    const main = read("dist/browser/acs-client.js");
    const specifiers = [...main.matchAll(/(?:from\s*|import\(\s*)["']([^"']+)["']/g)].map((match) => match[1]!);
    expect(specifiers).toEqual(["@acs-toolkit/validator"]);
    // A sentence of the validator's messages marks its code (compared with includes: the code is large).
    expect(main.includes("is a legacy field (SDK 1.9)")).toBe(false);
  });

  it("no file of the package carries the validator's code (an optional peer dependency, never bundled)", () => {
    const files = readdirSync(path.join(root, "dist"), { recursive: true, encoding: "utf8" }).filter((file) => /\.c?js$/.test(file));
    for (const file of files) expect(read(path.join("dist", file)).includes("function ucs2length("), file).toBe(false);
    const manifest = JSON.parse(read("package.json")) as { dependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }> };
    expect(manifest.dependencies["@acs-toolkit/validator"]).toBeUndefined();
    expect(manifest.peerDependenciesMeta["@acs-toolkit/validator"]).toEqual({ optional: true });
  });

  it("the declarations import nothing that is not a dependency (the validator's types are copied in)", () => {
    const declarations = readdirSync(path.join(root, "dist")).filter((file) => /\.d\.c?ts$/.test(file));
    for (const file of declarations) {
      const imported = [...read(`dist/${file}`).matchAll(/from\s+["']([^"'.][^"']*)["']/g)].map((match) => match[1]!);
      expect(imported.filter((name) => !["@acs-toolkit/schema", "openapi-fetch"].includes(name)), file).toEqual([]);
    }
  });
});
